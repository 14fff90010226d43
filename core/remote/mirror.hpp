// Remote models laid out in the cache, so the openers read them as folders on disk.
//
// An address becomes a folder of stand-in files (remote_file.hpp) shaped as the files are on the
// server: a Hub repository's tree at its commit (cache/hub/HOST/ORG/REPO/COMMIT/…), an Ollama store
// holding one manifest and its blobs (cache/ollama/HOST/manifests/…, blobs/sha256-…), a URL's file
// and the shards of an index beside it (cache/url/HASH-OF-URL/HASH-OF-ETAG/…). Sizes come from the
// listing; small text files (configs, indexes, manifest layers) are fetched whole; the headers of
// the model about to open are fetched at once, every file in parallel; the rest of each file is
// fetched when a read touches it. MappedFile::open of a stand-in maps it through fault_mapping.hpp.
//
// The cache: AKVIEW_CACHE_DIR, else $XDG_CACHE_HOME/akview, else ~/.cache/akview; capped at
// AKVIEW_CACHE_MAX bytes (a number with K, M, G or T; default 20G): after each open, the files used
// least recently (by when their record of fetched chunks was last written) are dropped until the
// cache fits, never one this process has open.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/remote/remote_file.hpp"
#include "core/result.hpp"

namespace akview {
class Model;
}

namespace akview::remote {

std::string cache_root();
uint64_t cache_limit_bytes();

// Lays out `address` (address.hpp) and returns the local path the openers take: a folder, a file
// or an Ollama manifest. Network errors, 401/403/404 and listing errors come back as the Error.
// The headers (and small text files) of the model about to open are fetched with it; for a listing
// (`for_listing`) a failure there is left to the rows it concerns (each says why it did not open).
// With `background` (an open, not a listing), the headers of a Hub folder's model are left coming
// on its thread: the stand-ins' mappings wait for their own header (an open parses each shard as
// its header lands), and background->finish() after the parse gives the fetch's status, the open's
// error where it failed (what materialize returns without it).
Result<std::string> materialize(const std::string& address, bool for_listing = false, HeadFetch* background = nullptr);

// The remote file behind a stand-in this process laid out, by its path or its label (nullptr for
// any other path).
std::shared_ptr<RemoteFile> remote_file_at(const std::string& path);
// What a person sees for a path in the cache: "hf://org/repo/model.safetensors" for a stand-in,
// "hf://org/repo/sub" for a folder of them; any other path as it is.
std::string display_path(const std::string& path);
// `text` (an error message) with every folder of stand-ins in it replaced by its label.
std::string display_text(std::string text);
// The model's files named by their labels instead of their paths in the cache (what every report
// and pane shows); remote_file_at finds them by those names, Model::disk_path still leads to the cache.
void show_remote_names(Model& model);

// Every remote file this process has laid out: how many, their bytes, how many of them are fetched.
struct RemoteUse {
  uint64_t files = 0;
  uint64_t size = 0;
  uint64_t fetched = 0;
};
RemoteUse remote_use();

// Whether any file of `model` is remote, and how many bytes of its tensor data are not fetched yet
// (what a command that reads every tensor would fetch).
bool is_remote_model(const Model& model);
uint64_t unfetched_tensor_bytes(const Model& model);

// Drops cached files, least recently used first, until the cache holds at most `limit` bytes
// (files this process has laid out are kept). Returns the bytes freed.
uint64_t trim_cache(uint64_t limit);

}   // namespace akview::remote
