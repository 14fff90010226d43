// The Hub's and an Ollama registry's API calls (see hub.hpp).
#include "core/remote/hub.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/remote/http.hpp"

namespace akview::remote {
namespace {

constexpr size_t kMaxTreeEntries = 1 << 20;
constexpr int kMaxTreePages = 10000;
constexpr uint64_t kMaxApiBody = 64ull << 20;

// Path segments percent-encoded, '/' kept between them (revision names may hold '/': refs/pr/1).
std::string encode(const std::string& s, bool keep_slash) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
      out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// The URL of rel="next" in a Link header ("" when there is none).
std::string next_link(const std::string& link) {
  size_t pos = 0;
  while (pos < link.size()) {
    auto lt = link.find('<', pos);
    auto gt = link.find('>', lt);
    if (lt == std::string::npos || gt == std::string::npos) break;
    auto end = link.find(',', gt);
    std::string params = link.substr(gt + 1, end == std::string::npos ? std::string::npos : end - gt - 1);
    if (params.find("rel=\"next\"") != std::string::npos || params.find("rel=next") != std::string::npos)
      return link.substr(lt + 1, gt - lt - 1);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return {};
}

HttpRequest api_request(const std::string& url, const std::string& label) {
  HttpRequest r;
  r.url = url;
  r.label = label;
  r.max_body = kMaxApiBody;
  return r;
}

Result<nlohmann::json> parse_json(Result<HttpResponse> resp, const std::string& url, const std::string& label,
                                  HttpResponse* out) {
  if (!resp) return std::move(resp).error();
  auto j = nlohmann::json::parse(resp->body, nullptr, false);
  if (j.is_discarded())
    return make_error(ErrorCode::bad_json, label, kNoOffset, fmt::format("the answer of {} is not JSON", url));
  if (out) *out = std::move(*resp);
  return j;
}

Result<nlohmann::json> get_json(const std::string& url, const std::string& label, HttpResponse* out = nullptr) {
  return parse_json(http_client().run_one(api_request(url, label)), url, label, out);
}

std::string revision_url(const Address& a) {
  return fmt::format("{}/api/models/{}/revision/{}", a.endpoint, a.repo, encode(a.revision, false));
}

Result<std::string> commit_of(Result<nlohmann::json> j, const std::string& label) {
  if (!j) return std::move(j).error();
  if (!j->is_object() || !j->contains("sha") || !(*j)["sha"].is_string() ||
      !is_commit_hash((*j)["sha"].get<std::string>()))
    return make_error(ErrorCode::schema, label, kNoOffset, "the Hub's revision answer has no commit (sha)");
  return (*j)["sha"].get<std::string>();
}

std::string tree_url(const Address& a, const std::string& ref, const std::string& dir) {
  return fmt::format("{}/api/models/{}/tree/{}{}{}?recursive=true", a.endpoint, a.repo, encode(ref, false),
                     dir.empty() ? "" : "/", encode(dir, true));
}

// Every page of a listing whose first page is `first` (asked at `url`).
Result<std::vector<TreeEntry>> read_tree_pages(Result<HttpResponse> first, std::string url, const std::string& label) {
  std::vector<TreeEntry> out;
  for (int page = 0; !url.empty(); ++page) {
    if (page >= kMaxTreePages)
      return make_error(ErrorCode::count_too_large, label, kNoOffset, "the file list has too many pages");
    HttpResponse resp;
    auto j = page == 0 ? parse_json(std::move(first), url, label, &resp) : get_json(url, label, &resp);
    if (!j) return std::move(j).error();
    if (!j->is_array())
      return make_error(ErrorCode::schema, label, kNoOffset, "the Hub's file list is not a JSON array");
    for (const auto& e : *j) {
      if (!e.is_object() || !e.contains("path") || !e["path"].is_string()) continue;
      TreeEntry t;
      t.path = e["path"].get<std::string>();
      t.is_dir = e.value("type", std::string()) == "directory";
      if (e.contains("size") && e["size"].is_number_unsigned()) t.size = e["size"].get<uint64_t>();
      if (e.contains("lfs") && e["lfs"].is_object()) {
        const auto& l = e["lfs"];
        if (l.contains("oid") && l["oid"].is_string()) t.lfs_oid = l["oid"].get<std::string>();
        if (l.contains("size") && l["size"].is_number_unsigned()) t.size = l["size"].get<uint64_t>();
      }
      if (t.path.empty() || t.path.find("..") != std::string::npos || t.path.front() == '/') continue;
      out.push_back(std::move(t));
      if (out.size() > kMaxTreeEntries)
        return make_error(ErrorCode::count_too_large, label, kNoOffset, "the repository lists too many files");
    }
    url = next_link(resp.header("link"));
  }
  return out;
}

}   // namespace

bool is_commit_hash(const std::string& revision) {
  if (revision.size() != 40) return false;
  for (char c : revision)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Result<std::vector<TreeEntry>> hub_list_tree(const Address& a, const std::string& commit, const std::string& dir) {
  const std::string label = fmt::format("hf://{}@{}", a.repo, a.revision);
  const std::string url = tree_url(a, commit, dir);
  return read_tree_pages(http_client().run_one(api_request(url, label)), url, label);
}

Result<HubListing> hub_resolve_and_list(const Address& a, const std::string& dir) {
  const std::string label = fmt::format("hf://{}@{}", a.repo, a.revision);
  if (is_commit_hash(a.revision)) {
    auto entries = hub_list_tree(a, a.revision, dir);
    if (!entries) return HubListing{a.revision, std::move(entries)};
    return HubListing{a.revision, std::move(*entries)};
  }
  const std::string url = tree_url(a, a.revision, dir);
  const HttpRequest both[] = {api_request(revision_url(a), label), api_request(url, label)};
  auto answers = http_client().run(both);
  auto commit = commit_of(parse_json(std::move(answers[0]), both[0].url, label, nullptr), label);
  if (!commit) return std::move(commit).error();
  return HubListing{*commit, read_tree_pages(std::move(answers[1]), url, label)};
}

std::string hub_file_url(const Address& a, const std::string& commit, const std::string& path) {
  return fmt::format("{}/{}/resolve/{}/{}", a.endpoint, a.repo, commit, encode(path, true));
}

Result<std::string> ollama_fetch_manifest(const Address& a) {
  HttpRequest r;
  r.url = fmt::format("{}/v2/{}/{}/manifests/{}", a.registry, a.name_space, a.model, a.tag);
  r.label = a.text;
  r.max_body = 4 << 20;
  r.accept = "application/vnd.docker.distribution.manifest.v2+json";
  auto resp = http_client().run_one(r);
  if (!resp) return std::move(resp).error();
  return std::move(resp->body);
}

std::string ollama_blob_url(const Address& a, const std::string& digest) {
  return fmt::format("{}/v2/{}/{}/blobs/{}", a.registry, a.name_space, a.model, digest);
}

}   // namespace akview::remote
