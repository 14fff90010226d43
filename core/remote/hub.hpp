// The Hugging Face Hub's API, as much of it as opening a repository needs: a revision resolved to
// its commit (api/models/REPO/revision/REV), the file list (api/models/REPO/tree/REV[/DIR], paginated
// by a Link header), and the URL a file's bytes are asked for (REPO/resolve/COMMIT/PATH, which the
// Hub answers with a redirect to its CDN for large files). An Ollama registry's manifest (v2 API).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/remote/address.hpp"
#include "core/result.hpp"

namespace akview::remote {

struct TreeEntry {
  std::string path;   // relative to the repository's root
  uint64_t size = 0;
  bool is_dir = false;
  std::string lfs_oid;   // sha256 of an LFS file ("" for small files kept in git)
};

bool is_commit_hash(const std::string& revision);
// Every entry under `dir` (recursive), every page of the listing.
Result<std::vector<TreeEntry>> hub_list_tree(const Address& a, const std::string& commit, const std::string& dir);
// The commit of `a`'s revision and the listing of `dir` at it, asked at once (the listing by the
// revision's name, as huggingface_hub asks it: one round trip instead of two). A branch that moves
// between the two answers shows as a file whose size or content hash differs from the listing when
// its bytes are asked for (ErrorCode::changed), never as a mix. A failed listing leaves the commit.
struct HubListing {
  std::string commit;
  Result<std::vector<TreeEntry>> entries;
};
Result<HubListing> hub_resolve_and_list(const Address& a, const std::string& dir);
std::string hub_file_url(const Address& a, const std::string& commit, const std::string& path);

// The registry manifest of `a` (JSON text).
Result<std::string> ollama_fetch_manifest(const Address& a);
std::string ollama_blob_url(const Address& a, const std::string& digest);

}   // namespace akview::remote
