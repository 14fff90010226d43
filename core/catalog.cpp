// The model catalog (catalog.hpp): which models a folder or a local store holds, found from directory
// entries and content sniffers alone; describing an entry opens its headers.
#include "core/catalog.hpp"

#include <sys/stat.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/fit/fit_estimate.hpp"
#include "core/formats/format.hpp"
#include "core/formats/gguf_split.hpp"
#include "core/formats/ollama.hpp"
#include "core/formats/recognised.hpp"
#include "core/formats/safetensors.hpp"
#include "core/natural_order.hpp"
#include "core/remote/address.hpp"
#include "core/remote/fault_mapping.hpp"
#include "core/remote/mirror.hpp"

namespace akview {
namespace {

constexpr int kMaxDepth = 3;   // sub-folder levels searched below the path given (LM Studio needs 2)

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool starts_with(std::string_view s, std::string_view head) { return s.substr(0, head.size()) == head; }

// Hidden files and the leftovers of interrupted downloads (Ollama "-partial", HF ".incomplete", browsers' ".partial").
bool skipped_name(std::string_view name) {
  return name.empty() || name[0] == '.' || ends_with(name, ".partial") || ends_with(name, "-partial") ||
         ends_with(name, ".incomplete");
}

std::string join(const std::string& dir, std::string_view name) {
  return dir.empty() || dir.back() == '/' ? dir + std::string(name) : dir + "/" + std::string(name);
}

// stat, not lstat: Hugging Face snapshots are symlinks into ../../blobs.
bool is_directory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string base_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool has_extension(std::string_view name, std::initializer_list<std::string_view> extensions) {
  return std::any_of(extensions.begin(), extensions.end(), [&](std::string_view e) { return ends_with(name, e); });
}

// What a folder holds: either it is itself one model (open_one_model opens the folder), or the entries.
struct Found {
  bool one_model = false;
  std::vector<CatalogEntry> entries;
};

Found find_models(const std::string& path, const std::string& source, int depth);

std::vector<CatalogEntry> prefixed(std::vector<CatalogEntry> entries, const std::string& prefix) {
  for (auto& e : entries) e.name = prefix + "/" + e.name;
  return entries;
}

std::vector<CatalogEntry> ollama_entries(const std::string& root) {
  std::vector<CatalogEntry> out;
  for (auto& m : list_ollama_models(root)) {
    if (skipped_name(base_name(m.manifest))) continue;
    CatalogEntry e;
    e.name = std::move(m.display);
    e.open_path = std::move(m.manifest);
    e.source = "ollama";
    out.push_back(std::move(e));
  }
  return out;
}

bool is_hf_repo_folder(const Probe& p, std::string_view name) {
  return starts_with(name, "models--") && p.has_entry("snapshots");
}

// One `models--org--name` folder: each snapshot that is a model, or the models a snapshot holds.
std::vector<CatalogEntry> hf_repo_entries(const std::string& repo_dir, int depth) {
  // "models--org--name" -> "org/name" (repo ids never hold "--", so every "--" was a '/').
  const std::string folder = base_name(repo_dir).substr(std::string_view("models--").size());
  std::string repo;
  for (size_t i = 0; i < folder.size(); ++i) {
    const bool sep = folder[i] == '-' && i + 1 < folder.size() && folder[i + 1] == '-';
    repo += sep ? '/' : folder[i];
    i += sep ? 1 : 0;
  }
  auto snapshots = probe_path(join(repo_dir, "snapshots"));
  if (!snapshots || !snapshots->is_dir) return {};
  std::vector<std::pair<std::string, Found>> found;   // (revision, what it holds)
  for (const auto& rev : snapshots->entries) {
    if (skipped_name(rev)) continue;
    const std::string dir = join(snapshots->path, rev);
    if (!is_directory(dir)) continue;
    Found f = find_models(dir, "huggingface", depth + 1);
    if (f.one_model || !f.entries.empty()) found.emplace_back(rev, std::move(f));
  }
  std::vector<CatalogEntry> out;
  for (auto& [rev, f] : found) {
    const std::string name = found.size() > 1 ? repo + "@" + rev.substr(0, 7) : repo;
    if (f.one_model) {
      CatalogEntry e;
      e.name = name;
      e.open_path = join(snapshots->path, rev);
      e.source = "huggingface";
      out.push_back(std::move(e));
    } else {
      for (auto& e : prefixed(std::move(f.entries), name)) {
        e.source = "huggingface";
        out.push_back(std::move(e));
      }
    }
  }
  return out;
}

bool is_hf_cache(const Probe& p) {
  return std::any_of(p.entries.begin(), p.entries.end(), [&](const std::string& e) {
    return starts_with(e, "models--") && is_directory(join(join(p.path, e), "snapshots"));
  });
}

std::vector<CatalogEntry> hf_cache_entries(const Probe& hub, int depth) {
  std::vector<CatalogEntry> out;
  for (const auto& e : hub.entries) {
    if (!starts_with(e, "models--") || skipped_name(e)) continue;
    for (auto& entry : hf_repo_entries(join(hub.path, e), depth)) out.push_back(std::move(entry));
  }
  return out;
}

CatalogEntry file_entry(const std::string& dir, const std::string& name, const std::string& source) {
  CatalogEntry e;
  e.name = name;
  e.open_path = join(dir, name);
  e.source = source;
  return e;
}

Found find_models(const std::string& path, const std::string& source, int depth) {
  Found found;
  auto probe = probe_path(path);
  if (!probe || !probe->is_dir) return found;
  const Probe& p = *probe;
  if (sniff_ollama_store(p)) {
    found.entries = ollama_entries(path);
    return found;
  }
  if (is_hf_cache(p)) {
    found.entries = hf_cache_entries(p, depth);
    return found;
  }
  if (is_hf_repo_folder(p, base_name(path))) {
    found.entries = hf_repo_entries(path, depth);
    return found;
  }
  if (p.has_entry("hub") && is_directory(join(path, "hub"))) {   // HF_HOME: the folder above hub/
    if (auto hub = probe_path(join(path, "hub")); hub && is_hf_cache(*hub)) {
      found.entries = hf_cache_entries(*hub, depth);
      return found;
    }
  }
  if (sniff_safetensors_dir(p) || sniff_mlx_dir(p)) {
    found.one_model = true;
    return found;
  }
  // A plain folder: GGUF files (a split set once, by its lowest part), loose checkpoints, model sub-folders.
  std::map<std::string, std::pair<uint32_t, std::string>> gguf_models;   // key -> (part, file name)
  for (const auto& name : p.entries) {
    if (skipped_name(name)) continue;
    if (ends_with(name, ".gguf")) {
      if (auto split = parse_gguf_split_name(name)) {
        auto key = fmt::format("{}-of-{}", split->base, split->count);
        auto [it, added] = gguf_models.try_emplace(key, split->part, name);
        if (!added && split->part < it->second.first) it->second = {split->part, name};
      } else {
        gguf_models.try_emplace(name, 0, name);
      }
      continue;
    }
    const std::string full = join(path, name);
    if (is_directory(full)) {
      if (depth >= kMaxDepth) continue;
      Found sub = find_models(full, source, depth + 1);
      if (sub.one_model) found.entries.push_back(file_entry(path, name, source));
      for (auto& e : prefixed(std::move(sub.entries), name)) found.entries.push_back(std::move(e));
      continue;
    }
    if (ends_with(name, ".safetensors")) {
      found.entries.push_back(file_entry(path, name, source));   // several loose files: no index binds them
      continue;
    }
    if (has_extension(name, {".bin", ".pt", ".pth", ".ckpt"})) {
      auto file = probe_path(full);
      if (file && (sniff_pytorch_zip(*file) || sniff_pytorch_legacy(*file)))
        found.entries.push_back(file_entry(path, name, source));
    }
  }
  if (gguf_models.size() == 1 && found.entries.empty()) {
    found.one_model = true;   // open_one_model opens a folder of one GGUF model (gguf-dir)
    return found;
  }
  for (const auto& [key, part] : gguf_models) found.entries.push_back(file_entry(path, part.second, source));
  return found;
}

void sort_entries(std::vector<CatalogEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const CatalogEntry& a, const CatalogEntry& b) { return natural_less(a.name, b.name); });
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string();
}

// The label a type shows in the list: the type's name, with bits and group for composite types.
std::string type_label(const Model& model, const Tensor& t) {
  std::string label(type_info(t.type).name);
  if (t.quant != kNone && t.quant < model.quants.size()) {
    const QuantInfo& q = model.quants[t.quant];
    if (q.bits) label += fmt::format(" {}-bit", q.bits);
    if (q.group_size) label += fmt::format(" g{}", q.group_size);
  }
  return label;
}

}   // namespace

std::optional<std::vector<CatalogEntry>> list_catalog(const std::string& path) {
  // A remote repository: listed as it is laid out in the cache (core/remote/mirror.hpp); an address
  // that cannot be laid out is no catalog (opening it says why).
  if (remote::is_remote_address(path)) {
    auto local = remote::materialize(path, /*for_listing=*/true);
    return local ? list_catalog(*local) : std::nullopt;
  }
  if (!is_directory(path)) return std::nullopt;
  const std::string source = ends_with(path.back() == '/' ? path.substr(0, path.size() - 1) : path, ".lmstudio/models")
                                 ? "lmstudio"
                                 : "folder";
  Found found = find_models(path, source, 0);
  if (found.one_model || found.entries.empty()) return std::nullopt;
  sort_entries(found.entries);
  return std::move(found.entries);
}

std::vector<CatalogStore> list_default_stores() {
  const std::string home = env_or_empty("HOME");
  std::string hf = env_or_empty("HF_HUB_CACHE");
  if (hf.empty())
    hf = env_or_empty("HF_HOME").empty() ? home + "/.cache/huggingface/hub" : env_or_empty("HF_HOME") + "/hub";
  const std::pair<std::string, std::string> kStores[] = {
      {"ollama", ollama_models_dir()},
      {"huggingface", hf},
      {"lmstudio", home + "/.lmstudio/models"},
  };
  std::vector<CatalogStore> out;
  for (const auto& [source, path] : kStores) {
    if (!is_directory(path)) continue;
    CatalogStore store{source, path, find_models(path, source, 0).entries};
    sort_entries(store.entries);
    out.push_back(std::move(store));
  }
  return out;
}

namespace {

// The bytes of a model that did not open: its file, or the files directly in its folder (a folder of
// malformed files still titles its whole size).
uint64_t bytes_on_disk(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  if (S_ISREG(st.st_mode)) return static_cast<uint64_t>(st.st_size);
  if (!S_ISDIR(st.st_mode)) return 0;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec))
    if (::stat(e.path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += static_cast<uint64_t>(st.st_size);
  return total;
}

}   // namespace

void describe_catalog_entry(CatalogEntry& entry, const std::atomic<bool>* cancel) {
  entry.described = true;
  OpenOptions options;
  options.cancel = cancel;
  Result<Model> model = make_error(ErrorCode::io, entry.open_path, kNoOffset, "not opened");
  // A remote header that cannot be fetched is this entry's error (core/remote/fault_mapping.hpp).
  remote::FetchFailureScope fetches;
  try {
    model = fetches.checked(open_one_model(entry.open_path, options));   // an entry is one model by construction
  } catch (const std::exception& e) {   // bad_alloc and the like: one line, the other entries go on
    entry.error = fmt::format("{}: {}", entry.open_path, e.what());
    entry.size_bytes = bytes_on_disk(entry.open_path);
    return;
  }
  if (!model) {
    entry.error = remote::display_text(model.error().to_string());
    entry.size_bytes = bytes_on_disk(entry.open_path);
    return;
  }
  entry.format = model->format;
  entry.parameters = model->total_parameters();
  if (const MetaEntry* m = model->find_meta("general.name"); m && m->value.type == MetaType::string)
    entry.model_name = std::string(m->value.str);
  if (auto config = extract_config(*model)) entry.config = std::move(*config);
  std::set<std::string> paths;
  for (const auto& f : model->files)
    if (paths.insert(f.path).second) {
      entry.files.push_back({remote::display_path(f.path), f.role, f.map.size()});
      entry.size_bytes += f.map.size();
    }
  std::map<std::string, CatalogType> by_type;
  for (const auto& t : model->tensors) {
    if (t.flags & kTensorCompanion) continue;
    ++entry.tensors;
    CatalogType& row = by_type[type_label(*model, t)];
    ++row.tensors;
    row.bytes += t.nbytes;
  }
  for (auto& [label, row] : by_type) {
    row.type = label;
    entry.types.push_back(std::move(row));
  }
  std::stable_sort(entry.types.begin(), entry.types.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  if (auto e = fit::estimate_fit(*model, {}); e && e->kv) {
    if (auto table = fit::fit_table(*model, {}, *e)) {
      entry.fit = std::move(*table);
      entry.fit_runtime = e->runtime;
      entry.fit_kv_type = std::string(type_info(e->kv_type).name);
    }
  }
}

const std::string& CatalogEntry::main_type() const {
  static const std::string none;
  return types.empty() ? none : types.front().type;
}

}   // namespace akview
