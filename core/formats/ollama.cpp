// Ollama stores (FORMATS.md §4.1 layout, §4.2 manifest, §4.3 media types, §4.4 config blob,
// §4.5 tensor blobs and quant types). Read-only and offline: blobs are mapped, never written.
#include "core/formats/ollama.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <semaphore>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fault_guard.hpp"
#include "core/formats/composite.hpp"
#include "core/formats/gguf.hpp"
#include "core/formats/safetensors_file.hpp"
#include "core/kernel_copy.hpp"
#include "core/parallel_chunks.hpp"
#include "core/sha256.hpp"

namespace akview {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMaxManifestBytes = 16 << 20;
constexpr uint64_t kMaxConfigBytes = 16 << 20;
// Layer count cap: safetensors-based models carry one layer per tensor.
constexpr size_t kMaxManifestLayers = size_t{1} << 17;
constexpr std::string_view kMediaPrefix = "application/vnd.ollama.image.";

// What akview does with each layer media type (§4.3).
enum class LayerAction : uint8_t { gguf_model, gguf_side, tensor_blob, json_file, text, json_text, ignore };
struct MediaRow {
  std::string_view suffix;   // after "application/vnd.ollama.image."
  LayerAction action;
  std::string_view meta_key;   // text layers: metadata key
};
constexpr std::array kMediaTypes = {
    MediaRow{"model", LayerAction::gguf_model, ""},
    MediaRow{"projector", LayerAction::gguf_side, "ollama.projector"},
    MediaRow{"adapter", LayerAction::gguf_side, "ollama.adapter"},
    MediaRow{"draft", LayerAction::gguf_side, "ollama.draft"},
    MediaRow{"tensor", LayerAction::tensor_blob, ""},
    MediaRow{"json", LayerAction::json_file, "ollama.file"},
    MediaRow{"template", LayerAction::text, "ollama.template"},
    MediaRow{"prompt", LayerAction::text, "ollama.template"},
    MediaRow{"system", LayerAction::text, "ollama.system"},
    MediaRow{"license", LayerAction::text, "ollama.license"},
    MediaRow{"params", LayerAction::json_text, "ollama.params"},
    MediaRow{"messages", LayerAction::json_text, "ollama.messages"},
    MediaRow{"embed", LayerAction::ignore, ""},
};

// §4.5 quant types (x/quant/quant.go byType, Canonical); aliases compare case-insensitively.
struct QuantTypeRow {
  std::string_view name;
  TypeId type;
  uint8_t bits;
  uint32_t default_group;
};
constexpr std::array kQuantTypes = {
    QuantTypeRow{"int4", TypeId::ollama_int4, 4, 64},   QuantTypeRow{"fp4", TypeId::ollama_int4, 4, 64},
    QuantTypeRow{"q4", TypeId::ollama_int4, 4, 64},     QuantTypeRow{"int8", TypeId::ollama_int8, 8, 64},
    QuantTypeRow{"fp8", TypeId::ollama_int8, 8, 64},    QuantTypeRow{"q8", TypeId::ollama_int8, 8, 64},
    QuantTypeRow{"nvfp4", TypeId::ollama_nvfp4, 4, 16}, QuantTypeRow{"mxfp4", TypeId::ollama_mxfp4, 4, 32},
    QuantTypeRow{"mxfp8", TypeId::ollama_mxfp8, 8, 32},
};

const QuantTypeRow* find_quant_type(std::string_view s) {
  std::string lower(s);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& q : kQuantTypes)
    if (q.name == lower) return &q;
  return nullptr;
}

bool valid_digest(std::string_view d) {
  if (d.size() != 71 || d.substr(0, 6) != "sha256" || (d[6] != ':' && d[6] != '-')) return false;
  return std::all_of(d.begin() + 7, d.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

bool valid_part(std::string_view s, bool allow_dot, bool allow_colon) {
  if (s.empty() || s.size() > 350) return false;
  auto ok_first = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (!ok_first(s[0])) return false;
  for (char c : s.substr(1))
    if (!(ok_first(c) || c == '-' || (allow_dot && c == '.') || (allow_colon && c == ':'))) return false;
  return true;
}

std::string_view as_text(std::span<const uint8_t> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

void add_meta(Model& model, std::string key, MetaType type, std::string_view str, uint32_t file, uint64_t num = 0) {
  MetaEntry m;
  m.key = model.intern(std::move(key));
  m.value.type = type;
  m.value.str = str;
  m.value.num.u = num;
  m.file = file;
  m.offset = 0;
  m.source = "ollama";
  model.meta.push_back(m);
}

uint32_t add_file(Model& model, const std::string& path, MappedFile map, std::string role) {
  model.files.push_back(SourceFile{path, std::move(map), std::move(role), 0, 0});
  return static_cast<uint32_t>(model.files.size() - 1);
}

// The ConfigV2 blob (§4.4): every top-level field as metadata "ollama.config.<field>".
void add_config_meta(Model& model, uint32_t file) {
  auto text = as_text(model.files[file].map.bytes());
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    model.notes.push_back(
        Note{ErrorCode::bad_json, model.files[file].path, kNoOffset, "config blob is not a JSON object", true});
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = "ollama.config." + it.key();
    const auto& v = it.value();
    if (v.is_string()) add_meta(model, key, MetaType::string, model.intern(v.get<std::string>()), file);
    else if (v.is_number_unsigned()) add_meta(model, key, MetaType::u64, {}, file, v.get<uint64_t>());
    else if (v.is_number_integer()) {
      add_meta(model, key, MetaType::i64, {}, file);
      model.meta.back().value.num.i = v.get<int64_t>();
    } else if (v.is_number_float()) {
      add_meta(model, key, MetaType::f64, {}, file);
      model.meta.back().value.num.f = v.get<double>();
    } else if (v.is_boolean()) add_meta(model, key, MetaType::boolean, {}, file, v.get<bool>());
    else add_meta(model, key, MetaType::json, model.intern(v.dump()), file);
  }
}

// Turns the tensors of one tensor blob (indices [first, end)) into logical composites (§4.5).
void assemble_tensor_blob(Model& model, uint32_t file, size_t first, size_t end) {
  std::unordered_map<std::string_view, std::string_view> meta;
  for (const auto& m : model.meta)
    if (m.file == file && m.value.type == MetaType::string) meta.emplace(m.key, m.value.str);
  std::unordered_map<std::string_view, uint32_t> by_name;
  for (size_t i = first; i < end; ++i) by_name.emplace(model.tensors[i].name, static_cast<uint32_t>(i));
  auto find = [&](const std::string& n) {
    auto it = by_name.find(n);
    return it == by_name.end() ? kNone : it->second;
  };
  auto lookup = [&](const std::string& name, std::string_view key) -> std::string_view {
    if (auto it = meta.find(name + "." + std::string(key)); it != meta.end()) return it->second;
    if (auto it = meta.find(key); it != meta.end()) return it->second;
    return {};
  };
  for (size_t i = first; i < end; ++i) {
    if (model.tensors[i].type != TypeId::u32) continue;
    const std::string name(model.tensors[i].name);
    const uint32_t scale = find(name + ".scale");
    if (scale == kNone) continue;
    const auto index = static_cast<uint32_t>(i);
    std::string_view qt = lookup(name, "quant_type");
    const QuantTypeRow* row = find_quant_type(qt);
    if (!row) {
      mark_unsupported(model, index,
                       qt.empty() ? "quantized blob without a quant_type" : fmt::format("unknown quant_type '{}'", qt));
      continue;
    }
    CompositeSpec spec;
    spec.weight = index;
    spec.scales = scale;
    spec.biases = find(name + ".bias");
    spec.global_scale = find(name + ".global_scale");
    spec.type = row->type;
    spec.bits = row->bits;
    std::string_view gs = lookup(name, "group_size");
    if (!gs.empty()) {
      uint64_t v = 0;
      for (char c : gs) v = (c >= '0' && c <= '9' && v < (1u << 24)) ? v * 10 + static_cast<uint64_t>(c - '0') : ~0ull;
      spec.group_size = v > (1u << 24) ? 0 : static_cast<uint32_t>(v);
    } else {
      // No group_size: infer from the shapes as Ollama does (w_cols*32/bits per scale column).
      auto ws = model.shape(model.tensors[index]);
      auto ss = model.shape(model.tensors[scale]);
      if (!ws.empty() && !ss.empty() && ss.back() > 0)
        spec.group_size = static_cast<uint32_t>(ws.back() * 32 / row->bits / ss.back());
    }
    if (Status made = make_composite(model, spec); !made) mark_unsupported(model, index, made.error().message);
  }
}

Result<MappedFile> map_blob(Model& model, const OllamaLayer& layer, bool required) {
  auto map = MappedFile::open(layer.blob_path);
  if (!map) {
    if (required)
      return make_error(ErrorCode::missing_file, layer.blob_path, kNoOffset,
                        fmt::format("blob {} ({}) is missing from the store", layer.digest, layer.media_type));
    model.notes.push_back(Note{ErrorCode::missing_file, layer.blob_path, kNoOffset,
                               fmt::format("blob {} ({}) is missing from the store", layer.digest, layer.media_type),
                               true});
    return map;
  }
  if (static_cast<int64_t>(map->size()) != layer.size)
    model.notes.push_back(Note{ErrorCode::digest_mismatch, layer.blob_path, kNoOffset,
                               fmt::format("blob holds {} bytes, the manifest says {}", map->size(), layer.size),
                               true});
  return map;
}

Result<Model> open_manifest_path(const std::string& manifest_path) {
  auto manifest = read_ollama_manifest(manifest_path);
  if (!manifest) return std::move(manifest).error();
  Model model;
  model.format = "ollama";
  auto mmap = MappedFile::open(manifest_path);
  if (!mmap) return std::move(mmap).error();
  add_file(model, manifest_path, std::move(*mmap), "manifest");
  if (!manifest->config.digest.empty()) {
    auto cmap = map_blob(model, manifest->config, false);
    if (cmap) {
      if (cmap->size() <= kMaxConfigBytes)
        add_config_meta(model, add_file(model, manifest->config.blob_path, std::move(*cmap), "ollama config"));
    }
  }
  std::unordered_map<std::string, int> text_count;
  for (const auto& layer : manifest->layers) {
    const MediaRow* row = nullptr;
    if (layer.media_type.compare(0, kMediaPrefix.size(), kMediaPrefix) == 0)
      for (const auto& r : kMediaTypes)
        if (layer.media_type.substr(kMediaPrefix.size()) == r.suffix) row = &r;
    if (!row) {
      model.notes.push_back(
          Note{ErrorCode::unsupported, manifest_path, kNoOffset,
               fmt::format("layer {} has media type '{}', which akview does not read", layer.digest, layer.media_type),
               false});
      continue;
    }
    switch (row->action) {
      case LayerAction::gguf_model: {
        if (!fs::exists(layer.blob_path))
          return make_error(ErrorCode::missing_file, layer.blob_path, kNoOffset,
                            fmt::format("model blob {} is missing from the store", layer.digest));
        auto size_check = map_blob(model, layer, true);
        if (!size_check) return std::move(size_check).error();
        auto added = add_gguf_file(model, layer.blob_path, "model blob");
        if (!added) return std::move(added).error();
        break;
      }
      case LayerAction::tensor_blob: {
        auto size_check = map_blob(model, layer, true);
        if (!size_check) return std::move(size_check).error();
        const size_t first = model.tensors.size();
        auto added = add_safetensors_file(model, layer.blob_path, "tensor blob");
        if (!added) return std::move(added).error();
        assemble_tensor_blob(model, *added, first, model.tensors.size());
        break;
      }
      case LayerAction::gguf_side:
        add_meta(model, fmt::format("{}.{}", row->meta_key, text_count[std::string(row->meta_key)]++), MetaType::string,
                 model.intern(layer.digest), 0, 0);
        break;
      case LayerAction::json_file:
      case LayerAction::text:
      case LayerAction::json_text: {
        auto map = map_blob(model, layer, false);
        if (!map) break;
        if (map->size() > kMaxConfigBytes) {
          model.notes.push_back(Note{ErrorCode::header_too_large, layer.blob_path, kNoOffset,
                                     "text layer larger than 16 MiB: not shown", false});
          break;
        }
        const bool is_config = row->action == LayerAction::json_file && layer.name == "config.json";
        const uint32_t f =
            add_file(model, layer.blob_path, std::move(*map), is_config ? "config" : std::string(row->suffix));
        std::string key(row->meta_key);
        if (row->action == LayerAction::json_file) key += "." + (layer.name.empty() ? layer.digest : layer.name);
        else if (int n = text_count[key]++; n > 0) key += fmt::format(".{}", n + 1);
        add_meta(model, key, row->action == LayerAction::text ? MetaType::string : MetaType::json,
                 as_text(model.files[f].map.bytes()), f);
        break;
      }
      case LayerAction::ignore: break;
    }
  }
  order_companions(model);
  return model;
}

}   // namespace

std::string ollama_models_dir() {
  if (const char* env = std::getenv("OLLAMA_MODELS"); env && *env) return env;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.ollama/models";
}

std::string OllamaName::display() const {
  if (host == "registry.ollama.ai" && ns == "library") return model + ":" + tag;
  return host + "/" + ns + "/" + model + ":" + tag;
}

std::optional<OllamaName> parse_ollama_name(std::string_view text) {
  OllamaName n;
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = text.find('/', start);
    parts.push_back(text.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() > 3) return std::nullopt;
  std::string_view last = parts.back();
  if (auto colon = last.rfind(':'); colon != std::string_view::npos) {
    n.tag = std::string(last.substr(colon + 1));
    last = last.substr(0, colon);
  }
  n.model = std::string(last);
  if (parts.size() >= 2) n.ns = std::string(parts[parts.size() - 2]);
  if (parts.size() == 3) n.host = std::string(parts[0]);
  if (!valid_part(n.model, true, false) || !valid_part(n.tag, true, false) || !valid_part(n.ns, false, false) ||
      !valid_part(n.host, true, true))
    return std::nullopt;
  return n;
}

std::string ollama_manifest_path(const std::string& root, const OllamaName& n) {
  return root + "/manifests/" + n.host + "/" + n.ns + "/" + n.model + "/" + n.tag;
}

Result<OllamaManifest> read_ollama_manifest(const std::string& path) {
  auto map = MappedFile::open(path);
  if (!map) return std::move(map).error();
  if (map->size() > kMaxManifestBytes)
    return make_error(ErrorCode::header_too_large, path, 0,
                      fmt::format("manifest of {} bytes is larger than 16 MiB", map->size()));
  nlohmann::json j = nlohmann::json::parse(as_text(map->bytes()), nullptr, false);
  if (j.is_discarded()) return make_error(ErrorCode::bad_json, path, 0, "manifest is not valid JSON");
  if (!j.is_object() || !j.contains("layers") || !j["layers"].is_array())
    return make_error(ErrorCode::schema, path, 0, "manifest has no 'layers' array");
  OllamaManifest m;
  m.path = path;
  // The store root is the folder above "manifests/<host>/<ns>/<model>/<tag>".
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  for (fs::path dir = p.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
    if (dir.filename() == "manifests") {
      m.root = dir.parent_path().string();
      break;
    }
  if (m.root.empty()) m.root = p.parent_path().string();
  auto read_layer = [&](const nlohmann::json& o, OllamaLayer& l, std::string_view what) -> Status {
    if (!o.is_object() || !o.contains("digest") || !o["digest"].is_string() || !o.contains("size") ||
        !o["size"].is_number_integer())
      return make_error(ErrorCode::schema, path, kNoOffset,
                        fmt::format("{} needs a digest string and an integer size", what));
    l.digest = o["digest"].get<std::string>();
    if (!valid_digest(l.digest))
      return make_error(ErrorCode::schema, path, kNoOffset,
                        fmt::format("{} digest '{}' is not sha256:<64 hex>", what, l.digest.substr(0, 80)));
    l.size = o["size"].get<int64_t>();
    if (l.size < 0) return make_error(ErrorCode::schema, path, kNoOffset, fmt::format("{} has a negative size", what));
    if (o.contains("mediaType") && o["mediaType"].is_string()) l.media_type = o["mediaType"].get<std::string>();
    if (o.contains("name") && o["name"].is_string()) l.name = o["name"].get<std::string>();
    std::string hex = l.digest.substr(7);
    std::transform(hex.begin(), hex.end(), hex.begin(),
                   [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    l.blob_path = m.root + "/blobs/sha256-" + hex;
    return {};
  };
  if (j.contains("config")) AKV_TRY(read_layer(j["config"], m.config, "config"));
  if (j["layers"].size() > kMaxManifestLayers)
    return make_error(
        ErrorCode::count_too_large, path, 0,
        fmt::format("manifest has {} layers, over the cap of {} layers", j["layers"].size(), kMaxManifestLayers));
  size_t i = 0;
  for (const auto& o : j["layers"]) {
    OllamaLayer l;
    AKV_TRY(read_layer(o, l, fmt::format("layer {}", i++)));
    m.layers.push_back(std::move(l));
  }
  return m;
}

std::vector<OllamaModelRef> list_ollama_models(const std::string& root) {
  std::vector<OllamaModelRef> out;
  std::error_code ec;
  auto subdirs = [&](const fs::path& p) {
    std::vector<fs::path> v;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) v.push_back(it->path());
    std::sort(v.begin(), v.end());
    return v;
  };
  for (const auto& host : subdirs(fs::path(root) / "manifests"))
    for (const auto& ns : subdirs(host))
      for (const auto& model : subdirs(ns))
        for (const auto& tag : subdirs(model)) {
          if (!fs::is_regular_file(tag, ec)) continue;
          OllamaName n{host.filename().string(), ns.filename().string(), model.filename().string(),
                       tag.filename().string()};
          out.push_back({n.display(), tag.string()});
        }
  return out;
}

Result<Model> open_ollama_manifest(const Probe& probe, const OpenOptions&) { return open_manifest_path(probe.path); }

Result<Model> open_ollama_store(const Probe& probe, const OpenOptions&) {
  auto models = list_ollama_models(probe.path);
  if (models.empty()) return make_error(ErrorCode::not_found, probe.path, kNoOffset, "Ollama store holds no manifests");
  if (models.size() > 1) {
    std::string names;
    for (size_t i = 0; i < models.size() && i < 8; ++i) names += (i ? ", " : "") + models[i].display;
    return make_error(
        ErrorCode::unsupported, probe.path, kNoOffset,
        fmt::format(
            "Ollama store holds {} models ({}{}); open one by its manifest, or as name:tag with OLLAMA_MODELS set",
            models.size(), names, models.size() > 8 ? ", ..." : ""));
  }
  return open_manifest_path(models.front().manifest);
}

std::optional<std::string> resolve_ollama_reference(const std::string& text) {
  auto name = parse_ollama_name(text);
  if (!name) return std::nullopt;
  std::string path = ollama_manifest_path(ollama_models_dir(), *name);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  return path;
}

namespace {

// One blob's size and sha256 against its layer: Notes for what disagrees. Its bytes are copied by the
// kernel a chunk at a time into a buffer that stays in the core's cache, and hashed there (on this
// project's VMs the first touch of each page of a mapping from user code costs more than hashing it:
// core/kernel_copy.hpp). Where the copy fails the chunk is hashed in place under the fault guard,
// which reports a file cut short while it is hashed (a pull in progress) as a note, not a SIGBUS.
// `advance(bytes)` is called after each chunk; false stops.
std::vector<Note> verify_blob(const OllamaLayer& l, std::vector<uint8_t>& buf,
                              const std::function<bool(uint64_t)>& advance) {
  std::vector<Note> notes;
  auto map = MappedFile::open(l.blob_path);
  if (!map) {
    notes.push_back(
        Note{ErrorCode::missing_file, l.blob_path, kNoOffset, fmt::format("blob {} is missing", l.digest), true});
    return notes;
  }
  if (static_cast<int64_t>(map->size()) != l.size) {
    notes.push_back(Note{ErrorCode::digest_mismatch, l.blob_path, kNoOffset,
                         fmt::format("blob holds {} bytes, the manifest says {}", map->size(), l.size), true});
    return notes;
  }
  Sha256 h;
  auto bytes = map->bytes();
  const KernelCopy reader(bytes.data());
  // Hashes chunk `at` from its copy, or in place under the fault guard where it was not copied.
  auto hash_chunk = [&](size_t at, std::span<const uint8_t> copy, bool copied) -> bool {
    const auto chunk = bytes.subspan(at, copy.size());
    if (copied) {
      h.update(copy);
      return true;
    }
    Status read = check_mapped_range(chunk);
    if (read.ok()) read = guard_reads([&] { h.update(chunk); });   // Sha256 owns no heap memory
    if (read.ok()) return true;
    notes.push_back(Note{read.error().code, read.error().file, read.error().offset, read.error().message, true});
    return false;
  };
  constexpr size_t kChunk = 1 << 20;
  if (bytes.size() < 16 * kChunk) {
    buf.resize(kChunk);
    for (size_t at = 0; at < bytes.size(); at += kChunk) {
      const std::span<uint8_t> copy(buf.data(), std::min(kChunk, bytes.size() - at));
      if (!hash_chunk(at, copy, reader.read(bytes.data() + at, copy.size(), copy.data()))) return notes;
      if (!advance(copy.size())) return notes;
    }
  } else {
    // A large blob: a second thread copies the next chunks into a ring of buffers while this one
    // hashes, so the hash (one sequential chain) runs at its own speed, not the copy's plus its own.
    constexpr size_t kSlots = 4;
    std::array<std::vector<uint8_t>, kSlots> slots;
    std::array<bool, kSlots> copied{};
    std::counting_semaphore<64> free_slots(kSlots), full_slots(0);
    std::atomic<bool> stop{false};
    const size_t n_chunks = (bytes.size() + kChunk - 1) / kChunk;
    std::thread copier([&] {
      for (size_t k = 0; k < n_chunks; ++k) {
        free_slots.acquire();
        if (stop.load()) return;
        const size_t at = k * kChunk;
        slots[k % kSlots].resize(std::min(kChunk, bytes.size() - at));
        copied[k % kSlots] = reader.read(bytes.data() + at, slots[k % kSlots].size(), slots[k % kSlots].data());
        full_slots.release();
      }
    });
    bool ok = true;
    for (size_t k = 0; k < n_chunks && ok; ++k) {
      full_slots.acquire();
      const std::vector<uint8_t>& slot = slots[k % kSlots];
      ok = hash_chunk(k * kChunk, slot, copied[k % kSlots]) && advance(slot.size());
      free_slots.release();
    }
    stop = true;
    free_slots.release(kSlots);   // a copier waiting for a free slot sees `stop`
    copier.join();
    if (!ok) return notes;
  }
  std::string got = to_hex(h.finish()), want = l.digest.substr(7);
  std::transform(want.begin(), want.end(), want.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  if (got != want)
    notes.push_back(Note{ErrorCode::digest_mismatch, l.blob_path, kNoOffset,
                         fmt::format("sha256 is {}, the manifest says {}", got, want), true});
  return notes;
}

}   // namespace

// Blobs are hashed several at a time (one per thread, largest first; a blob's hash is one sequential
// chain), and their notes listed in the manifest's order.
std::vector<Note> verify_ollama_blobs(const Model& model, const std::function<void(double)>& progress,
                                      const std::atomic<bool>* cancel) {
  std::vector<Note> notes;
  auto it =
      std::find_if(model.files.begin(), model.files.end(), [](const SourceFile& f) { return f.role == "manifest"; });
  if (it == model.files.end()) return notes;
  auto manifest = read_ollama_manifest(it->path);
  if (!manifest) {
    notes.push_back(
        Note{manifest.error().code, manifest.error().file, manifest.error().offset, manifest.error().message, true});
    return notes;
  }
  std::vector<const OllamaLayer*> layers;
  if (!manifest->config.digest.empty()) layers.push_back(&manifest->config);
  for (const auto& l : manifest->layers) layers.push_back(&l);
  uint64_t total = 0;
  for (const auto* l : layers) total += static_cast<uint64_t>(std::max<int64_t>(l->size, 0));
  std::vector<size_t> order(layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return layers[a]->size > layers[b]->size; });
  std::vector<std::vector<Note>> found(layers.size());
  const int threads = machine_threads();
  std::vector<std::vector<uint8_t>> buffers(static_cast<size_t>(threads));
  std::atomic<uint64_t> done{0};
  parallel_chunks(order.size(), threads, [&](size_t k, int worker) {
    if (cancel && cancel->load()) return false;
    const size_t i = order[k];
    found[i] = verify_blob(*layers[i], buffers[static_cast<size_t>(worker)], [&](uint64_t n) {
      const uint64_t now = done.fetch_add(n) + n;
      if (worker == 0 && progress && total) progress(static_cast<double>(now) / static_cast<double>(total));
      return !(cancel && cancel->load());
    });
    return true;
  });
  for (auto& f : found) notes.insert(notes.end(), f.begin(), f.end());
  return notes;
}

}   // namespace akview
