// Laying remote models out in the cache (see mirror.hpp).
#include "core/remote/mirror.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/formats/safetensors_index.hpp"
#include "core/mapped_file.hpp"
#include "core/model.hpp"
#include "core/remote/address.hpp"
#include "core/remote/fault_mapping.hpp"
#include "core/remote/http.hpp"
#include "core/remote/hub.hpp"
#include "core/sha256.hpp"

namespace fs = std::filesystem;

namespace akview::remote {
namespace {

constexpr uint64_t kMaxWholeText = 16ull << 20;     // text files fetched whole at the open
constexpr size_t kMaxHeadsAtOpen = 8;               // weight files whose headers come with the open
constexpr uint64_t kMaxIndexBytes = 256ull << 20;   // a SafeTensors index read whole at the open
constexpr uint64_t kDefaultCacheLimit = 20ull << 30;

struct Registered {
  RemoteIdentity identity;
  std::shared_ptr<RemoteFile> file;
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Registered>& registry() {
  static std::map<std::string, Registered> r;
  return r;
}
// The registry's keys by label: a remote model's files are named by their labels once it is open.
std::map<std::string, std::string>& keys_by_label() {
  static std::map<std::string, std::string> k;
  return k;
}

std::string normal(const std::string& path) { return fs::path(path).lexically_normal().string(); }

std::optional<Result<MappedFile>> provide_mapping(const std::string& path) {
  auto file = remote_file_at(path);
  if (!file) return std::nullopt;
  // A header still on its way (materialize's HeadFetch): mapped once it is in, so the parse never
  // faults on it; where it could not be fetched the open fails with that.
  if (Status fetched = file->wait_pending(); !fetched.ok()) return fetched.error();
  return map_remote_file(file, path);
}

Status provide_read(const std::string& path, uint64_t offset, uint64_t length) {
  auto file = remote_file_at(path);
  if (!file) return {};
  if (offset < kHeadFirstBytes) AKV_TRY(file->ensure_head());
  return file->ensure(offset, length);
}

void install_provider() {
  static std::once_flag once;
  std::call_once(once, [] { set_file_provider(FileProvider{&provide_mapping, &provide_read}); });
}

// Registers and sizes a stand-in (with `defer_create`, one not there yet is made later: see
// RemoteFile::open); returns its file.
Result<std::shared_ptr<RemoteFile>> add_standin(const std::string& path, RemoteIdentity id, bool defer_create = false) {
  install_provider();
  const std::string key = normal(path);
  {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(key);
    if (it != registry().end() && it->second.file && it->second.identity.size == id.size &&
        it->second.identity.linked_etag == id.linked_etag && it->second.identity.url == id.url)
      return it->second.file;
  }
  auto file = RemoteFile::open(id, key, defer_create);
  if (!file) return std::move(file).error();
  std::lock_guard lock(registry_mutex());
  keys_by_label()[id.label] = key;
  registry()[key] = Registered{std::move(id), *file};
  return *file;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_whole_text(const std::string& name, uint64_t size) {
  if (size > kMaxWholeText) return false;
  const std::string base = fs::path(name).filename().string();
  if (base == "tokenizer.json") return false;   // large, and read by no pane
  return ends_with(base, ".json") || ends_with(base, ".jinja") || base == "params" || base == "template";
}

bool is_weight_file(const std::string& name) {
  for (std::string_view ext : {".safetensors", ".gguf", ".bin", ".pt", ".pth", ".ckpt"})
    if (ends_with(name, ext)) return true;
  return false;
}

// The shard names of a SafeTensors index: the distinct strings in it that name a .safetensors file
// (the weight_map's values). A scan, not a parse: a big model's index holds ~10^5 - 10^6 names, and
// the opener parses it strictly right after.
std::vector<std::string> index_shards(const std::string& index_path) {
  std::vector<std::string> out;
  std::ifstream in(index_path, std::ios::binary | std::ios::ate);
  if (!in) return out;
  std::string text(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  std::set<std::string_view> seen;
  for (size_t pos = 0; (pos = text.find('"', pos)) != std::string::npos;) {
    const size_t end = text.find('"', pos + 1);
    if (end == std::string::npos) break;
    const std::string_view s(text.data() + pos + 1, end - pos - 1);
    pos = end + 1;
    if (!s.ends_with(".safetensors") || s.find('\\') != std::string_view::npos) continue;
    if (seen.insert(s).second) out.emplace_back(s);
  }
  return out;
}

std::string short_hash(const std::string& s, size_t n) {
  return sha256_hex(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size())).substr(0, n);
}

std::string host_dir(const std::string& url) {
  std::string o = url_origin(url);
  auto p = o.find("://");
  std::string h = p == std::string::npos ? o : o.substr(p + 3);
  for (char& c : h)
    if (c == '/' || c == '\\') c = '_';
  return h;
}

// The headers of the weight files of the model at `dir` (`names`: its files, relative to it), with
// the small text files of `texts` and the model's SafeTensors index, all in the same two rounds of
// requests. The shards are taken from the listing (NAME-0000i-of-0000n.safetensors beside the
// index), not from the index: waiting for the index (tens of MB for a big model) and scanning it
// would cost its transfer and two more round trips before the first shard's header is asked for.
// A shard the index names under another name gets its header when the opener maps it.
// With `background`, the headers and the index come on its thread, and this returns once the other
// text files (read by plain reads, not through mappings) are in; `started` runs as soon as that
// thread's requests are on their way.
Status fetch_model_heads(const std::string& dir, const std::vector<std::string>& names,
                         std::vector<std::shared_ptr<RemoteFile>> texts, HeadFetch* background,
                         const std::function<void()>& started = {}) {
  std::vector<std::string> picked, shards;
  bool has_index = false;
  for (const auto& n : names) {
    if (n.find('/') != std::string::npos) continue;   // only the folder's own files
    if (ends_with(n, ".safetensors.index.json")) {
      has_index = true;
      auto index = remote_file_at(dir + "/" + n);
      if (index && index->size() <= kMaxIndexBytes && !is_whole_text(n, index->size())) texts.push_back(index);
    } else if (is_weight_file(n)) {
      picked.push_back(n);
      if (is_safetensors_shard_name(n)) shards.push_back(n);
    }
  }
  if (has_index && !shards.empty()) picked = std::move(shards);
  else if (!has_index && picked.size() > kMaxHeadsAtOpen) picked.clear();   // many models: headers when listed
  std::vector<std::shared_ptr<RemoteFile>> files;
  for (const auto& n : picked)
    if (auto f = remote_file_at(dir + "/" + n)) files.push_back(f);
  trace_phase(fmt::format("fetch {} headers and {} whole files", files.size(), texts.size()));
  if (background) {
    std::vector<std::shared_ptr<RemoteFile>> plain;
    for (const auto& t : texts)
      if (!is_safetensors_index_name(t->standin_path())) plain.push_back(t);
    background->start(std::move(files), std::move(texts));
    if (started) started();
    for (const auto& t : plain) (void)t->wait_pending();   // failures: the fetch's status, at finish()
    trace_phase("text files fetched");
    return {};
  }
  Status heads = RemoteFile::ensure_heads(files, texts);
  trace_phase("headers fetched");
  return heads;
}

// --- the Hub -------------------------------------------------------------------------------------

std::string tree_cache_path(const std::string& mirror, const std::string& dir) {
  return mirror + "/.akview-tree-" + short_hash(dir, 16);
}

std::optional<std::vector<TreeEntry>> read_tree_cache(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<TreeEntry> out;
  std::string line;
  if (!std::getline(in, line) || line != "akview-tree 1") return std::nullopt;
  while (std::getline(in, line)) {
    TreeEntry e;
    std::istringstream f(line);
    std::string kind;
    if (!(f >> kind >> e.size >> e.lfs_oid)) return std::nullopt;
    std::getline(f >> std::ws, e.path);
    if (e.lfs_oid == "-") e.lfs_oid.clear();
    e.is_dir = kind == "d";
    out.push_back(std::move(e));
  }
  return out;
}

void write_tree_cache(const std::string& path, const std::vector<TreeEntry>& entries) {
  std::ofstream out(path + ".tmp");
  out << "akview-tree 1\n";
  for (const auto& e : entries)
    out << (e.is_dir ? "d " : "f ") << e.size << " " << (e.lfs_oid.empty() ? "-" : e.lfs_oid) << " " << e.path << "\n";
  out.close();
  std::rename((path + ".tmp").c_str(), path.c_str());
}

Result<std::string> materialize_hub(const Address& a, bool for_listing, HeadFetch* background) {
  // List the folder that holds the path (the path may be a file or a folder: the listing says which).
  std::string list_dir = a.path;
  if (a.path_is_file) list_dir = fs::path(a.path).parent_path().string();
  trace_phase("resolve the revision and list the tree");
  // A revision pinned by commit lists what it listed last time (kept in its mirror); a branch is
  // resolved and listed again, both in one round trip.
  auto mirror_of = [&](const std::string& commit) {
    return fmt::format("{}/hub/{}/{}/{}", cache_root(), host_dir(a.endpoint), a.repo, commit);
  };
  std::optional<std::vector<TreeEntry>> pinned;
  if (is_commit_hash(a.revision)) pinned = read_tree_cache(tree_cache_path(mirror_of(a.revision), list_dir));
  auto listing =
      pinned ? Result<HubListing>(HubListing{a.revision, std::move(*pinned)}) : hub_resolve_and_list(a, list_dir);
  if (!listing) return std::move(listing).error();
  const std::string commit = listing->commit;
  const std::string mirror = mirror_of(commit);
  std::error_code ec;
  fs::create_directories(mirror, ec);
  if (!pinned && is_commit_hash(a.revision) && listing->entries)
    write_tree_cache(tree_cache_path(mirror, list_dir), *listing->entries);
  auto listed = std::move(listing->entries);
  if (!listed && !a.path_is_file && !a.path.empty() && listed.error().code == ErrorCode::network) {
    // hf://org/repo/file: list its folder instead (a listing at a commit does not change: kept).
    list_dir = fs::path(a.path).parent_path().string();
    const std::string cache_file = tree_cache_path(mirror, list_dir);
    if (auto cached = read_tree_cache(cache_file)) {
      listed = std::move(*cached);
    } else {
      listed = hub_list_tree(a, commit, list_dir);
      if (listed) write_tree_cache(cache_file, *listed);
    }
  }
  if (!listed) return std::move(listed).error();
  std::vector<TreeEntry> entries = std::move(*listed);
  bool path_is_file = false;
  for (const auto& e : entries)
    if (!e.is_dir && e.path == a.path) path_is_file = true;
  if (!a.path.empty() && !path_is_file) {
    bool any = false;
    for (const auto& e : entries) any = any || e.path.starts_with(a.path + "/");
    if (!any)
      return make_error(ErrorCode::network, a.text, kNoOffset,
                        fmt::format("HTTP 404, not found: '{}' is not in {} at {}", a.path, a.repo, a.revision));
  }
  trace_phase(fmt::format("lay out {} entries", entries.size()));
  // An open with a background fetch makes its new stand-ins once the fetch's requests are out (the
  // first bytes are a redirect and a round trip away); every one is made before this returns.
  struct Deferred {
    std::vector<std::shared_ptr<RemoteFile>> files;
    void create() {
      if (files.empty()) return;
      for (const auto& f : files) (void)f->create_standin();   // a failure is the file's reads'
      files.clear();
      trace_phase("stand-ins made");
    }
    ~Deferred() { create(); }
  } deferred;
  const bool defer = background != nullptr && !for_listing && !path_is_file;
  std::vector<std::shared_ptr<RemoteFile>> texts;
  for (const auto& e : entries) {
    if (e.is_dir) {
      fs::create_directories(mirror + "/" + e.path, ec);
      continue;
    }
    RemoteIdentity id;
    id.url = hub_file_url(a, commit, e.path);
    id.label = fmt::format("hf://{}/{}", a.repo, e.path);
    id.size = e.size;
    id.commit = commit;
    id.linked_etag = e.lfs_oid;
    auto file = add_standin(mirror + "/" + e.path, std::move(id), defer);
    if (!file) return std::move(file).error();
    if (defer) deferred.files.push_back(*file);
    if (is_whole_text(e.path, e.size)) texts.push_back(*file);
  }
  const std::string target = a.path.empty() ? mirror : mirror + "/" + a.path;
  if (path_is_file) {
    std::vector<std::shared_ptr<RemoteFile>> head;
    if (auto f = remote_file_at(target); f && std::find(texts.begin(), texts.end(), f) == texts.end())
      head.push_back(f);
    AKV_TRY(RemoteFile::ensure_heads(head, texts));
    return target;
  }
  std::vector<std::string> names;   // the target folder's entries, relative to it
  const std::string prefix = a.path.empty() ? "" : a.path + "/";
  for (const auto& e : entries)
    if (!e.is_dir && e.path.starts_with(prefix)) names.push_back(e.path.substr(prefix.size()));
  Status heads = fetch_model_heads(target, names, std::move(texts), for_listing ? nullptr : background,
                                   [&] { deferred.create(); });
  deferred.create();   // where the fetch was not started
  if (!heads.ok() && !for_listing) return heads.error();
  return target;
}

// --- an Ollama registry --------------------------------------------------------------------------

Result<std::string> materialize_ollama(const Address& a) {
  auto text = ollama_fetch_manifest(a);
  if (!text) return std::move(text).error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("layers") || !j["layers"].is_array())
    return make_error(ErrorCode::schema, a.text, kNoOffset, "the registry's manifest has no layers");
  const std::string host = host_dir(a.registry);
  const std::string store = fmt::format("{}/ollama/{}", cache_root(), host);
  const std::string manifest_path = fmt::format("{}/manifests/{}/{}/{}/{}", store, host, a.name_space, a.model, a.tag);
  std::error_code ec;
  fs::create_directories(fs::path(manifest_path).parent_path(), ec);
  fs::create_directories(store + "/blobs", ec);
  {
    std::ofstream out(manifest_path + ".tmp", std::ios::binary);
    out << *text;
  }
  std::rename((manifest_path + ".tmp").c_str(), manifest_path.c_str());
  std::vector<std::shared_ptr<RemoteFile>> whole, heads;
  auto add_layer = [&](const nlohmann::json& l) -> Status {
    if (!l.is_object() || !l.contains("digest") || !l["digest"].is_string()) return {};
    const std::string digest = l["digest"].get<std::string>();
    if (!digest.starts_with("sha256:") || digest.size() != 71) return {};
    const uint64_t size = l.contains("size") && l["size"].is_number_unsigned() ? l["size"].get<uint64_t>() : 0;
    const std::string media = l.value("mediaType", std::string());
    RemoteIdentity id;
    id.url = ollama_blob_url(a, digest);
    id.label = fmt::format("{} ({})", a.text, digest.substr(0, 19));
    id.size = size;
    id.linked_etag = digest.substr(7);
    auto file = add_standin(fmt::format("{}/blobs/sha256-{}", store, digest.substr(7)), std::move(id));
    if (!file) return std::move(file).error();
    const bool weights = media.ends_with(".model") || media.ends_with(".tensor") || media.ends_with(".projector") ||
                         media.ends_with(".adapter");
    if (weights) heads.push_back(*file);
    else if (size <= kMaxWholeText) whole.push_back(*file);
    return {};
  };
  if (j.contains("config")) AKV_TRY(add_layer(j["config"]));
  for (const auto& l : j["layers"]) AKV_TRY(add_layer(l));
  AKV_TRY(RemoteFile::ensure_whole(whole));
  AKV_TRY(RemoteFile::ensure_heads(heads));
  return manifest_path;
}

// --- a URL ---------------------------------------------------------------------------------------

// The first range of a file whose size is not known yet (a URL): its bytes, size and validator, or
// why it could not be had.
struct FirstRange {
  uint64_t size = 0;
  std::string validator;
  std::vector<uint8_t> bytes;
  std::optional<Error> error;
};

std::vector<FirstRange> first_ranges(const std::vector<std::string>& urls) {
  std::vector<HttpRequest> requests(urls.size());
  std::vector<std::vector<uint8_t>> buffers(urls.size(), std::vector<uint8_t>(kHeadFirstBytes));
  for (size_t i = 0; i < urls.size(); ++i) {
    requests[i].url = urls[i];
    requests[i].has_range = true;
    requests[i].range_begin = 0;
    requests[i].range_end = kHeadFirstBytes;
    requests[i].allow_short = true;
    requests[i].dest = buffers[i].data();
    requests[i].label = urls[i];
  }
  auto answers = http_client().run(requests);
  std::vector<FirstRange> out(urls.size());
  for (size_t i = 0; i < urls.size(); ++i) {
    FirstRange& r = out[i];
    if (!answers[i]) {
      r.error = answers[i].error();
      continue;
    }
    r.size = answers[i]->total_size;
    std::string etag = answers[i]->headers.count("etag") ? answers[i]->headers.at("etag") : "";
    r.validator = !etag.empty() && !etag.starts_with("W/") ? etag : answers[i]->header("last-modified");
    buffers[i].resize(static_cast<size_t>(answers[i]->body_bytes));
    r.bytes = std::move(buffers[i]);
    if (r.size == 0) r.size = r.bytes.size();
  }
  return out;
}

std::string url_basename(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  auto slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.empty() || name == "." || name == ".." ? "file" : name;
}

Result<std::string> materialize_url(const Address& a) {
  const std::string url = a.url;
  auto first = first_ranges({url});
  if (first.front().error) return *first.front().error;
  FirstRange head = std::move(first.front());
  const std::string dir = fmt::format("{}/url/{}/{}", cache_root(), short_hash(url, 16),
                                      head.validator.empty() ? "unvalidated" : short_hash(head.validator, 12));
  const std::string name = url_basename(url);
  RemoteIdentity id{url, url, head.size, "", ""};
  auto file = add_standin(dir + "/" + name, id);
  if (!file) return std::move(file).error();
  AKV_TRY((*file)->seed(head.bytes, head.validator));
  if (!ends_with(name, ".json")) {
    AKV_TRY((*file)->ensure_head());
    return dir + "/" + name;
  }
  // An index: its shards (and config.json) beside it.
  std::vector<std::shared_ptr<RemoteFile>> one{*file};
  AKV_TRY(RemoteFile::ensure_whole(one));
  auto shards = index_shards(dir + "/" + name);
  if (shards.empty()) return dir + "/" + name;
  const std::string base =
      url.substr(0, url.find_first_of("?#")).substr(0, url.substr(0, url.find_first_of("?#")).find_last_of('/') + 1);
  std::vector<std::string> urls;
  for (const auto& s : shards) {
    if (s.find('/') != std::string::npos || s == "." || s == "..") continue;
    urls.push_back(base + s);
  }
  urls.push_back(base + "config.json");
  auto answers = first_ranges(urls);
  std::vector<std::shared_ptr<RemoteFile>> heads;
  for (size_t i = 0; i < urls.size(); ++i) {
    const bool is_config = i + 1 == urls.size();
    if (answers[i].error) {
      if (is_config) continue;   // no config.json beside the index: the model opens without one
      return *answers[i].error;
    }
    RemoteIdentity sid{urls[i], urls[i], answers[i].size, "", ""};
    auto f = add_standin(dir + "/" + url_basename(urls[i]), sid);
    if (!f) return std::move(f).error();
    AKV_TRY((*f)->seed(answers[i].bytes, answers[i].validator));
    heads.push_back(*f);
  }
  AKV_TRY(RemoteFile::ensure_heads(heads));
  return dir;
}

uint64_t parse_size(const char* text, uint64_t fallback) {
  if (!text || !*text) return fallback;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || v < 0) return fallback;
  uint64_t mult = 1;
  switch (*end) {
    case 'K':
    case 'k': mult = 1ull << 10; break;
    case 'M':
    case 'm': mult = 1ull << 20; break;
    case 'G':
    case 'g': mult = 1ull << 30; break;
    case 'T':
    case 't': mult = 1ull << 40; break;
    default: break;
  }
  return static_cast<uint64_t>(v * static_cast<double>(mult));
}

}   // namespace

std::string cache_root() {
  if (const char* d = std::getenv("AKVIEW_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/akview";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/akview";
  return "/tmp/akview-cache";
}

uint64_t cache_limit_bytes() { return parse_size(std::getenv("AKVIEW_CACHE_MAX"), kDefaultCacheLimit); }

Result<std::string> materialize(const std::string& text, bool for_listing, HeadFetch* background) {
  auto a = parse_address(text);
  if (!a) return std::move(a).error();
  Result<std::string> out = std::string();
  switch (a->kind) {
    case AddressKind::hub: out = materialize_hub(*a, for_listing, background); break;
    case AddressKind::ollama: out = materialize_ollama(*a); break;
    case AddressKind::url: out = materialize_url(*a); break;
  }
  if (out) trim_cache(cache_limit_bytes());
  return out;
}

std::shared_ptr<RemoteFile> remote_file_at(const std::string& path) {
  std::lock_guard lock(registry_mutex());
  if (registry().empty()) return nullptr;
  auto it = registry().find(normal(path));
  if (it == registry().end())
    if (auto k = keys_by_label().find(path); k != keys_by_label().end()) it = registry().find(k->second);
  return it == registry().end() ? nullptr : it->second.file;
}

std::string display_path(const std::string& path) {
  std::lock_guard lock(registry_mutex());
  if (registry().empty()) return path;
  const std::string key = normal(path);
  if (auto it = registry().find(key); it != registry().end()) return it->second.identity.label;
  // A folder of stand-ins: the label of a file under it, less that file's path below the folder
  // (hf://org/repo/sub/model.safetensors at CACHE/.../sub/model.safetensors: CACHE/.../sub is
  // hf://org/repo/sub). Labels that do not end with the file's path (registry blobs) name no folder.
  const std::string prefix = key.ends_with('/') ? key : key + "/";
  auto it = registry().lower_bound(prefix);
  if (it == registry().end() || !it->first.starts_with(prefix)) return path;
  const std::string below = it->first.substr(prefix.size());
  const std::string& label = it->second.identity.label;
  if (label.size() <= below.size() + 1 || !label.ends_with("/" + below)) return path;
  return label.substr(0, label.size() - below.size() - 1);
}

std::string display_text(std::string text) {
  std::vector<std::pair<std::string, std::string>> folders;   // mirror folder -> its label
  {
    std::lock_guard lock(registry_mutex());
    for (const auto& [key, r] : registry()) {
      const std::string base = fs::path(key).filename().string();
      if (r.identity.label.ends_with("/" + base))
        folders.emplace_back(key.substr(0, key.size() - base.size() - 1),
                             r.identity.label.substr(0, r.identity.label.size() - base.size() - 1));
    }
  }
  // Longest folders first, so a file's own folder wins over one above it.
  std::sort(folders.begin(), folders.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  for (const auto& [dir, label] : folders)
    for (size_t at = 0; (at = text.find(dir, at)) != std::string::npos;) {
      text.replace(at, dir.size(), label);
      at += label.size();
    }
  return text;
}

void show_remote_names(Model& model) {
  for (SourceFile& f : model.files) f.path = display_path(f.path);
}

RemoteUse remote_use() {
  std::vector<std::shared_ptr<RemoteFile>> files;
  {
    std::lock_guard lock(registry_mutex());
    for (auto& [k, r] : registry()) files.push_back(r.file);
  }
  RemoteUse u;
  for (auto& f : files) {
    ++u.files;
    u.size += f->size();
    u.fetched += f->fetched_bytes();
  }
  return u;
}

bool is_remote_model(const Model& model) {
  for (const SourceFile& f : model.files)
    if (remote_file_at(f.path)) return true;
  return false;
}

uint64_t unfetched_tensor_bytes(const Model& model) {
  std::vector<std::shared_ptr<RemoteFile>> files;
  for (const SourceFile& f : model.files) files.push_back(remote_file_at(f.path));
  uint64_t missing = 0;
  for (const Tensor& t : model.tensors)
    if (t.file < files.size() && files[t.file]) missing += files[t.file]->missing_bytes(t.offset, t.nbytes);
  return missing;
}

uint64_t trim_cache(uint64_t limit) {
  // A cached file is one with a record of its fetched chunks (remote_file.cpp): its attribute, last
  // written when the file's status last changed, or a hidden sidecar ".NAME.akview" beside it.
  struct Item {
    uint64_t bytes = 0;
    int64_t used = 0;   // ns
    std::string sidecar;
  };
  std::map<std::string, Item> items;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache_root(), ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    std::string data = it->path().string(), sidecar;
    const bool is_sidecar = name.starts_with(".") && name.ends_with(".akview");
    if (is_sidecar) {
      sidecar = data;
      data = (it->path().parent_path() / name.substr(1, name.size() - 8)).string();
    } else if (getxattr(data.c_str(), kFetchedAttribute, nullptr, 0) < 0) {
      continue;
    }
    struct stat sd {
    }, ss{};
    if (stat(data.c_str(), &sd) != 0 || (is_sidecar && stat(sidecar.c_str(), &ss) != 0)) continue;
    auto [at, added] = items.try_emplace(data);
    Item& item = at->second;
    if (added) {
      item.bytes = static_cast<uint64_t>(sd.st_blocks) * 512;
      total += item.bytes;
    }
    const timespec& t = is_sidecar ? ss.st_mtim : sd.st_ctim;
    item.used = std::max<int64_t>(item.used, int64_t{t.tv_sec} * 1000000000 + t.tv_nsec);
    if (is_sidecar) item.sidecar = sidecar;
  }
  if (total <= limit) return 0;
  std::vector<std::pair<std::string, Item>> order(items.begin(), items.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
  uint64_t freed = 0;
  for (const auto& [data, item] : order) {
    if (total - freed <= limit) break;
    if (remote_file_at(data)) continue;   // open in this process
    if (!item.sidecar.empty()) fs::remove(item.sidecar, ec);
    fs::remove(data, ec);
    freed += item.bytes;
  }
  return freed;
}

}   // namespace akview::remote
