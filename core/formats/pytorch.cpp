// PyTorch checkpoints (FORMATS.md §5.1-5.6): the zip layout (<prefix>/data.pkl, byteorder,
// data/<key>) and the legacy stream (magic, protocol 1001, sys_info, main pickle, storage keys,
// then storages each with an 8-byte element count). The tensors come from pickle_vm's tokens.
#include "core/formats/pytorch.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "core/byte_reader.hpp"
#include "core/checked.hpp"
#include "core/fault_guard.hpp"
#include "core/formats/pickle_vm.hpp"
#include "core/formats/zip_reader.hpp"

namespace akview {
namespace {

constexpr size_t kMaxNesting = 64;
constexpr uint64_t kLegacyProtocol = 1001;
// LONG1 bytes of MAGIC_NUMBER = 0x1950a86a20f9469cfc6c (little-endian two's complement).
constexpr std::string_view kLegacyMagic = "\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";

struct NamedTensor {
  std::string name;
  uint32_t tensor;   // index into PickleResult::tensors
};

// Walks the unpickled object: nested dict keys joined with '.', list indices as numbers.
// Values that are not tensors (hyper-parameters, epochs) are skipped. Cycles are cut by depth.
void collect_tensors(const PickleResult& p, uint32_t id, const std::string& prefix, size_t depth,
                     std::vector<NamedTensor>& out, size_t& skipped) {
  const PyValue& v = p.values[id];
  auto join = [&](std::string_view key) { return prefix.empty() ? std::string(key) : prefix + "." + std::string(key); };
  if (v.kind == PyKind::tensor) {
    out.push_back({prefix, v.index});
    return;
  }
  if (depth >= kMaxNesting) {
    ++skipped;
    return;
  }
  if (v.kind == PyKind::dict) {
    for (size_t i = 0; i + 1 < v.items.size(); i += 2) {
      const PyValue& key = p.values[v.items[i]];
      std::string k;
      if (key.kind == PyKind::string) k = key.text;
      else if (key.kind == PyKind::integer) k = std::to_string(key.integer);
      else {
        ++skipped;
        continue;
      }
      collect_tensors(p, v.items[i + 1], join(k), depth + 1, out, skipped);
    }
  } else if (v.kind == PyKind::list || v.kind == PyKind::tuple) {
    for (size_t i = 0; i < v.items.size(); ++i)
      collect_tensors(p, v.items[i], join(std::to_string(i)), depth + 1, out, skipped);
  }
}

bool is_contiguous(std::span<const int64_t> size, std::span<const int64_t> stride) {
  int64_t expected = 1;
  for (size_t i = size.size(); i-- > 0;) {
    if (size[i] == 0) return true;
    if (size[i] != 1 && stride[i] != expected) return false;
    expected *= size[i];
  }
  return true;
}

// Where a storage's bytes are, found by the container (zip record or legacy stream position).
struct StoragePlace {
  uint64_t offset = 0;
  uint64_t nbytes = 0;
};

// Turns the pickle's tokens into Model tensors: name, dtype, shape, strides, byte offsets.
Status build_tensors(Model& model, const PickleResult& p, const std::vector<StoragePlace>& places,
                     const std::string& file) {
  std::vector<NamedTensor> named;
  size_t skipped = 0;
  collect_tensors(p, p.root, "", 0, named, skipped);
  if (skipped)
    model.notes.push_back(
        Note{ErrorCode::unsupported, file, kNoOffset,
             fmt::format("{} pickled values nested too deep or keyed by non-strings were not listed", skipped), false});
  for (size_t s = 0; s < p.storages.size(); ++s) {
    TorchStorage ts;
    ts.key = model.intern(p.storages[s].key);
    ts.location = model.intern(p.storages[s].location);
    ts.offset = places[s].offset;
    ts.nbytes = places[s].nbytes;
    model.torch_storages.push_back(ts);
  }
  for (const auto& nt : named) {
    const PickleTensor& pt = p.tensors[nt.tensor];
    const TorchStorage& st = model.torch_storages[pt.storage];
    Tensor t;
    t.name = model.intern(nt.name);
    t.type = pt.dtype;
    t.file = 0;
    uint64_t numel = 1;
    uint64_t last = pt.storage_offset;   // element index of the last element reached
    bool overflow = false;
    for (size_t d = 0; d < pt.size.size(); ++d) {
      auto n = checked_mul(numel, static_cast<uint64_t>(pt.size[d]));
      overflow |= !n;
      numel = n.value_or(0);
    }
    for (size_t d = 0; d < pt.size.size() && numel > 0; ++d) {
      auto step = checked_mul(static_cast<uint64_t>(pt.size[d] - 1), static_cast<uint64_t>(pt.stride[d]));
      auto sum = step ? checked_add(last, *step) : std::nullopt;
      overflow |= !sum;
      last = sum.value_or(0);
    }
    if (overflow)
      return make_error(ErrorCode::overflow, file, pt.offset,
                        fmt::format("tensor '{}': size x stride overflows", nt.name));
    const uint64_t elem = pt.elem_bytes ? pt.elem_bytes : 1;
    if (numel > 0) {
      auto end = checked_mul(last + 1, elem);
      if (!end || *end > st.nbytes)
        return make_error(ErrorCode::out_of_bounds, file, pt.offset,
                          fmt::format("tensor '{}' reaches byte {} of a {}-byte storage '{}'", nt.name,
                                      end.value_or(~0ull), st.nbytes, st.key));
    }
    const bool contiguous = is_contiguous(pt.size, pt.stride);
    t.offset = st.offset + pt.storage_offset * elem;
    t.nbytes = numel == 0 ? 0 : (contiguous ? numel * elem : (last + 1 - pt.storage_offset) * elem);
    if (!contiguous) t.flags |= kTensorNonContiguous;
    if (pt.elem_bytes == 0) t.flags |= kTensorUnsupported;
    TorchTensorInfo info;
    info.storage = pt.storage;
    info.storage_offset = pt.storage_offset;
    info.strides_at = static_cast<uint32_t>(model.torch_strides.size());
    info.is_parameter = pt.is_parameter;
    info.requires_grad = pt.requires_grad;
    model.torch_strides.insert(model.torch_strides.end(), pt.stride.begin(), pt.stride.end());
    model.torch_tensors.push_back(info);
    model.add_tensor(t, pt.size);
  }
  return {};
}

void add_text_meta(Model& model, std::string_view key, std::string value, uint64_t offset) {
  MetaEntry m;
  m.key = key;
  m.value.type = MetaType::string;
  m.value.str = model.intern(std::move(value));
  m.offset = offset;
  m.source = "pytorch";
  model.meta.push_back(m);
}

Result<Model> start_model(const Probe& probe, std::string_view format) {
  auto map = MappedFile::open(probe.path);
  if (!map) return std::move(map).error();
  Model model;
  model.path = probe.path;
  model.format = std::string(format);
  SourceFile f;
  f.path = probe.path;
  f.map = std::move(*map);
  f.role = "model";
  model.files.push_back(std::move(f));
  return model;
}

}   // namespace

Result<Model> open_pytorch_zip(const Probe& probe, const OpenOptions&) {
  auto started = start_model(probe, "pytorch-zip");
  if (!started) return std::move(started).error();
  Model model = std::move(*started);
  const std::string& file = probe.path;
  auto bytes = model.files[0].map.bytes();
  auto entries = read_zip_directory(bytes, file);
  if (!entries) return std::move(entries).error();
  if (entries->empty()) return make_error(ErrorCode::schema, file, 0, "zip archive has no entries");

  // The prefix is the first entry's directory; torch requires every record beneath it.
  const std::string& first = entries->front().name;
  auto slash = first.find('/');
  if (slash == std::string::npos)
    return make_error(ErrorCode::schema, file, entries->front().directory_offset,
                      "file in archive is not in a subdirectory");
  const std::string prefix = first.substr(0, slash + 1);
  std::unordered_map<std::string, const ZipEntry*> by_name;
  for (const auto& e : *entries) {
    if (e.name.compare(0, prefix.size(), prefix) != 0)
      return make_error(ErrorCode::schema, file, e.directory_offset,
                        fmt::format("entry '{}' is outside the archive's '{}' directory", e.name, prefix));
    std::string rest = e.name.substr(prefix.size());
    if (rest == "constants.pkl")
      return make_error(ErrorCode::refused, file, e.directory_offset,
                        "TorchScript archive (constants.pkl): akview reads only torch.save checkpoints");
    if (!by_name.emplace(rest, &e).second)
      return make_error(ErrorCode::duplicate_key, file, e.directory_offset,
                        fmt::format("entry '{}' appears twice", e.name));
  }
  auto pkl = by_name.find("data.pkl");
  if (pkl == by_name.end())
    return make_error(ErrorCode::schema, file, kNoOffset, fmt::format("archive has no '{}data.pkl'", prefix));
  add_text_meta(model, "pytorch.archive_prefix", prefix.substr(0, prefix.size() - 1), kNoOffset);

  if (auto bo = by_name.find("byteorder"); bo != by_name.end()) {
    auto b = zip_entry_bytes(bytes, file, *bo->second);
    if (!b) return std::move(b).error();
    std::string order(reinterpret_cast<const char*>(b->data()), b->size());
    add_text_meta(model, "pytorch.byteorder", order, bo->second->data_offset);
    if (order != "little")
      return make_error(ErrorCode::unsupported, file, bo->second->data_offset,
                        fmt::format("byteorder '{}': only little-endian checkpoints are read", order.substr(0, 16)));
  }
  if (auto ver = by_name.find("version"); ver != by_name.end()) {
    auto b = zip_entry_bytes(bytes, file, *ver->second);
    if (b && b->size() <= 64) {
      std::string v(reinterpret_cast<const char*>(b->data()), b->size());
      while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
      add_text_meta(model, "pytorch.version", v, ver->second->data_offset);
    }
  }

  auto pkl_bytes = zip_entry_bytes(bytes, file, *pkl->second);
  if (!pkl_bytes) return std::move(pkl_bytes).error();
  auto pickle = run_pickle(*pkl_bytes, file, pkl->second->data_offset, PersistentIds::zip_5_tuple);
  if (!pickle) return std::move(pickle).error();

  std::vector<StoragePlace> places;
  for (const auto& s : pickle->storages) {
    auto rec = by_name.find("data/" + s.key);
    if (rec == by_name.end())
      return make_error(ErrorCode::missing_file, file, s.offset,
                        fmt::format("storage '{}' has no record '{}data/{}'", s.key, prefix, s.key));
    const AllowedGlobal& cls = allowed_globals()[s.global_row];
    auto want = checked_mul(s.numel, cls.elem_bytes);
    if (!want || *want != rec->second->size)
      return make_error(ErrorCode::size_mismatch, file, rec->second->local_header,
                        fmt::format("storage '{}': record holds {} bytes, the pickle says {} x {} bytes", s.key,
                                    rec->second->size, s.numel, cls.elem_bytes));
    if (rec->second->method != 0)
      return make_error(
          ErrorCode::unsupported, file, rec->second->local_header,
          fmt::format("storage record '{}' is compressed; only stored records are read", rec->second->name));
    if (rec->second->compressed_size != rec->second->size)
      return make_error(ErrorCode::size_mismatch, file, rec->second->local_header,
                        fmt::format("stored record '{}' has different sizes ({} vs {} compressed)", rec->second->name,
                                    rec->second->size, rec->second->compressed_size));
    places.push_back({rec->second->data_offset, rec->second->size});
  }
  AKV_TRY(build_tensors(model, *pickle, places, file));
  model.files[0].header_bytes = pkl->second->size;
  return model;
}

Result<Model> open_pytorch_legacy(const Probe& probe, const OpenOptions&) {
  auto started = start_model(probe, "pytorch-legacy");
  if (!started) return std::move(started).error();
  Model model = std::move(*started);
  const std::string& file = probe.path;
  auto bytes = model.files[0].map.bytes();
  uint64_t pos = 0;
  auto next = [&](PersistentIds pids) -> Result<PickleResult> {
    auto r = run_pickle(bytes.subspan(pos), file, pos, pids);
    if (r) pos += r->end;
    return r;
  };

  auto magic = next(PersistentIds::refuse);
  if (!magic) return std::move(magic).error();
  const PyValue& m = magic->values[magic->root];
  if (m.kind != PyKind::big_integer || m.text != kLegacyMagic)
    return make_error(ErrorCode::bad_magic, file, 0, "legacy checkpoint does not start with torch's magic number");
  const uint64_t protocol_at = pos;
  auto protocol = next(PersistentIds::refuse);
  if (!protocol) return std::move(protocol).error();
  const PyValue& pv = protocol->values[protocol->root];
  if (pv.kind != PyKind::integer || pv.integer != static_cast<int64_t>(kLegacyProtocol))
    return make_error(ErrorCode::bad_version, file, protocol_at,
                      fmt::format("legacy checkpoint protocol {} (only {} is read)", pv.integer, kLegacyProtocol));
  const uint64_t sys_info_at = pos;
  auto sys_info = next(PersistentIds::refuse);
  if (!sys_info) return std::move(sys_info).error();
  const PyValue& si = sys_info->values[sys_info->root];
  if (si.kind == PyKind::dict) {
    for (size_t i = 0; i + 1 < si.items.size(); i += 2) {
      const PyValue& k = sys_info->values[si.items[i]];
      const PyValue& v = sys_info->values[si.items[i + 1]];
      if (k.kind == PyKind::string && k.text == "little_endian" && v.kind == PyKind::boolean && v.integer == 0)
        return make_error(ErrorCode::unsupported, file, sys_info_at,
                          "big-endian legacy checkpoint: only little-endian files are read");
    }
  }
  const uint64_t main_at = pos;
  auto main = next(PersistentIds::legacy_6_tuple);
  if (!main) return std::move(main).error();
  model.files[0].header_bytes = pos - main_at;
  const uint64_t keys_at = pos;
  auto keys = next(PersistentIds::refuse);
  if (!keys) return std::move(keys).error();
  const PyValue& kl = keys->values[keys->root];
  if (kl.kind != PyKind::list)
    return make_error(ErrorCode::schema, file, keys_at, "legacy storage key list is not a list");

  std::unordered_map<std::string, uint32_t> by_key;
  for (uint32_t s = 0; s < main->storages.size(); ++s) by_key.emplace(main->storages[s].key, s);
  std::vector<StoragePlace> places(main->storages.size());
  std::vector<bool> seen(main->storages.size(), false);
  ByteReader r(bytes, file, 0);
  r.seek(pos);
  for (uint32_t item : kl.items) {
    const PyValue& key = keys->values[item];
    if (key.kind != PyKind::string)
      return make_error(ErrorCode::schema, file, keys_at, "legacy storage key is not a string");
    auto it = by_key.find(key.text);
    if (it == by_key.end())
      return make_error(ErrorCode::schema, file, r.file_offset(),
                        fmt::format("storage key '{}' is not used by any tensor", key.text));
    const PickleStorage& s = main->storages[it->second];
    const uint64_t count_at = r.file_offset();
    const uint64_t count = r.u64("storage element count");
    if (!r.ok()) return r.error();
    if (count != s.numel)
      return make_error(ErrorCode::size_mismatch, file, count_at,
                        fmt::format("storage '{}' holds {} elements, the pickle says {}", s.key, count, s.numel));
    auto nbytes = checked_mul(count, allowed_globals()[s.global_row].elem_bytes);
    if (!nbytes) return make_error(ErrorCode::overflow, file, count_at, "storage size overflows");
    places[it->second] = {r.file_offset(), *nbytes};
    r.skip(*nbytes, "storage data");
    if (!r.ok()) return r.error();
    seen[it->second] = true;
  }
  for (uint32_t s = 0; s < seen.size(); ++s)
    if (!seen[s])
      return make_error(ErrorCode::missing_file, file, main->storages[s].offset,
                        fmt::format("storage '{}' is missing from the storage list", main->storages[s].key));
  if (r.remaining() != 0)
    model.notes.push_back(Note{ErrorCode::trailing_bytes, file, r.file_offset(),
                               fmt::format("{} bytes after the last storage", r.remaining()), true});
  AKV_TRY(build_tensors(model, *main, places, file));
  return model;
}

std::vector<std::vector<uint32_t>> torch_shared_storages(const Model& model) {
  std::vector<std::vector<uint32_t>> by_storage(model.torch_storages.size());
  for (uint32_t i = 0; i < model.torch_tensors.size(); ++i) by_storage[model.torch_tensors[i].storage].push_back(i);
  std::vector<std::vector<uint32_t>> out;
  for (auto& g : by_storage)
    if (g.size() > 1) out.push_back(std::move(g));
  return out;
}

std::span<const int64_t> torch_strides(const Model& model, uint32_t index) {
  if (index >= model.torch_tensors.size() || index >= model.tensors.size()) return {};
  const auto& info = model.torch_tensors[index];
  return {model.torch_strides.data() + info.strides_at, model.tensors[index].rank};
}

Result<std::vector<uint8_t>> torch_tensor_bytes(const Model& model, uint32_t index) {
  if (index >= model.torch_tensors.size() || index >= model.tensors.size())
    return make_error(ErrorCode::not_found, model.path, kNoOffset, "not a PyTorch tensor");
  const Tensor& t = model.tensors[index];
  const TorchTensorInfo& info = model.torch_tensors[index];
  const TorchStorage& st = model.torch_storages[info.storage];
  const uint64_t elem = type_info(t.type).block_bytes;
  if (t.flags & kTensorUnsupported)
    return make_error(ErrorCode::unsupported, model.files[t.file].path, t.offset,
                      fmt::format("tensor '{}' has a dtype akview cannot read", t.name));
  auto storage = model.files[st.file].map.range(st.offset, st.nbytes);
  if (storage.size() != st.nbytes)
    return make_error(ErrorCode::out_of_bounds, model.files[st.file].path, st.offset, "storage lies outside its file");
  auto shape = model.shape(t);
  auto stride = torch_strides(model, index);
  const uint64_t numel = model.n_elements(t);
  // Stride-0 views (expand) can name far more elements than their storage holds; a hostile file
  // must not turn that into a huge allocation.
  auto out_bytes = checked_mul(numel, elem);
  if (!out_bytes || *out_bytes > st.nbytes * 16 + (1u << 20))
    return make_error(ErrorCode::size_mismatch, model.files[t.file].path, t.offset,
                      fmt::format("tensor '{}' repeats its {}-byte storage too often to gather", t.name, st.nbytes));
  std::vector<uint8_t> out(numel * elem);   // bounded: open checked that every element lies inside the storage
  std::vector<int64_t> idx(shape.size(), 0);
  // The gather reads the mapping: size-checked, then under the SIGBUS guard (core/fault_guard.hpp);
  // the loop only reads the storage and writes into `out` and `idx`, which exist already.
  AKV_TRY(check_mapped_range(storage));
  AKV_TRY(guard_reads([&] {
    uint8_t* to = out.data();
    for (uint64_t n = 0; n < numel; ++n, to += elem) {
      uint64_t e = info.storage_offset;
      for (size_t d = 0; d < shape.size(); ++d) e += static_cast<uint64_t>(idx[d] * stride[d]);
      std::memcpy(to, storage.data() + e * elem, elem);
      for (size_t d = shape.size(); d-- > 0;) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  }));
  return out;
}

}   // namespace akview
