// GGUF v2/v3 little-endian files (FORMATS.md §2.1, §2.2, §2.4, §2.6): header, metadata, tensor
// infos, the data section, and the checks ggml's gguf.cpp and llama.cpp's loader make.
//
//   0x00  "GGUF"                      magic, compared as bytes
//   0x04  u32 version                 2 or 3 (1 refused; byte-swapped = big-endian, refused)
//   0x08  i64 n_tensors               >= 0
//   0x10  i64 n_kv                    >= 0
//   0x18  KV[n_kv]                    string key | u32 value type | value (gguf_meta.cpp)
//         TENSOR_INFO[n_tensors]      string name | u32 n_dims | i64 ne[n_dims] | u32 ggml type | u64 offset
//         zero padding to ALIGNMENT   (general.alignment, default 32)
//         data section                tensor i at data_start + offset_i, each padded to ALIGNMENT
#include "core/formats/gguf.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_set>

#include <fmt/format.h>

#include "core/byte_reader.hpp"
#include "core/checked.hpp"
#include "core/formats/gguf_meta.hpp"
#include "core/formats/gguf_split.hpp"
#include "core/formats/tensor_name_set.hpp"

namespace akview {
namespace {

constexpr uint64_t kFixedHeaderBytes = 4 + 4 + 8 + 8;
constexpr uint32_t kDefaultAlignment = 32;                // GGUF_DEFAULT_ALIGNMENT
constexpr uint64_t kMinKvBytes = 8 + 4;                   // key length + value type
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;   // name length + n_dims + type + offset
constexpr uint32_t kMaxDims = 4;                          // GGML_MAX_DIMS
// Count caps, whatever the file's size: tensor indices are 32-bit, and 16M tensors (0.8 GB of
// tensor records) is 100x the largest published model; metadata is a few hundred keys.
constexpr int64_t kMaxTensors = int64_t{1} << 24;
constexpr int64_t kMaxKv = int64_t{1} << 20;
constexpr size_t kMaxTensorNameBytes = 63;   // GGML_MAX_NAME (64) including the NUL
constexpr std::string_view kAlignmentKey = "general.alignment";

// ggml ids that once existed; named so the error says "removed" rather than "unknown".
struct RemovedGgmlType {
  int64_t id;
  std::string_view name;
};
constexpr std::array kRemovedGgmlTypes = {
    RemovedGgmlType{4, "Q4_2"},        RemovedGgmlType{5, "Q4_3"},        RemovedGgmlType{31, "Q4_0_4_4"},
    RemovedGgmlType{32, "Q4_0_4_8"},   RemovedGgmlType{33, "Q4_0_8_8"},   RemovedGgmlType{36, "IQ4_NL_4_4"},
    RemovedGgmlType{37, "IQ4_NL_4_8"}, RemovedGgmlType{38, "IQ4_NL_8_8"},
};

std::string_view removed_type_name(int64_t id) {
  for (const auto& r : kRemovedGgmlTypes)
    if (r.id == id) return r.name;
  return "?";
}

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 200)) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  if (s.size() > 200) out += "...";
  return out;
}

// Reservations follow the counts only up to this many entries; past it, containers grow with
// what is actually read (a count is checked against the bytes that remain, but a large file
// could still claim more entries than it holds).
constexpr size_t kMaxReserve = size_t{1} << 20;

class GgufFileParser {
 public:
  GgufFileParser(Model& model, const MappedFile& map, std::string path, uint32_t file_index)
      : model_(model), map_(map), path_(std::move(path)), file_index_(file_index), r_(map.bytes(), path_, 0) {}

  Status parse(SourceFile& source) {
    AKV_TRY(parse_header());
    AKV_TRY(parse_metadata());
    AKV_TRY(parse_tensor_infos());
    source.header_bytes = header_end_;
    source.data_offset = data_start_;
    return {};
  }

 private:
  Error error(ErrorCode code, uint64_t offset, std::string message) const {
    return make_error(code, path_, offset, std::move(message));
  }
  void note(ErrorCode code, uint64_t offset, std::string message, bool fails_check) {
    model_.notes.push_back(Note{code, path_, offset, std::move(message), fails_check});
  }

  Status parse_header() {
    const uint64_t size = map_.size();
    if (size >= 4 && std::memcmp(map_.data(), "GGUF", 4) != 0) {
      std::string shown;
      for (int i = 0; i < 4; ++i) shown += fmt::format("{}{:02x}", i ? " " : "", map_.data()[i]);
      return error(ErrorCode::bad_magic, 0,
                   fmt::format("not a GGUF file: magic is '{}' ({}), expected 'GGUF'",
                               printable(std::string_view(reinterpret_cast<const char*>(map_.data()), 4)), shown));
    }
    if (size < kFixedHeaderBytes)
      return error(ErrorCode::header_too_small, 0,
                   fmt::format("file is {} bytes, too short for the {}-byte GGUF header", size, kFixedHeaderBytes));
    r_.skip(4, "magic");
    version_ = r_.u32("version");
    if (version_ == 0) return error(ErrorCode::bad_version, 4, "GGUF version 0 is not a valid version");
    if ((version_ & 0xFFFF) == 0)
      return error(ErrorCode::unsupported, 4,
                   fmt::format("big-endian GGUF (version reads as {:#010x}, i.e. v{} byte-swapped); akview reads "
                               "little-endian GGUF only",
                               version_, __builtin_bswap32(version_)));
    if (version_ == 1)
      return error(ErrorCode::bad_version, 4,
                   "GGUF v1 is not supported (counts are 32-bit); convert with a current gguf tool");
    if (version_ > 3)
      return error(ErrorCode::bad_version, 4,
                   fmt::format("GGUF version {} is not supported (akview reads v2 and v3)", version_));
    n_tensors_ = r_.i64("tensor count");
    n_kv_ = r_.i64("metadata count");
    if (n_tensors_ < 0)
      return error(ErrorCode::count_too_large, 8, fmt::format("tensor count {} is negative", n_tensors_));
    if (n_kv_ < 0) return error(ErrorCode::count_too_large, 16, fmt::format("metadata count {} is negative", n_kv_));
    if (n_tensors_ > kMaxTensors)
      return error(ErrorCode::count_too_large, 8,
                   fmt::format("tensor count {} exceeds the cap of {} tensors", n_tensors_, kMaxTensors));
    if (n_kv_ > kMaxKv)
      return error(ErrorCode::count_too_large, 16,
                   fmt::format("metadata count {} exceeds the cap of {} keys", n_kv_, kMaxKv));
    // Counts are checked against the bytes that remain before anything is reserved.
    AKV_TRY(check_count(n_kv_, kMinKvBytes, 16, "metadata count"));
    AKV_TRY(check_count(n_tensors_, kMinTensorInfoBytes, 8, "tensor count"));
    return {};
  }

  Status check_count(int64_t count, uint64_t min_bytes, uint64_t field_offset, std::string_view what) const {
    auto need = checked_mul(static_cast<uint64_t>(count), min_bytes);
    if (!need || *need > r_.remaining())
      return error(
          ErrorCode::count_too_large, field_offset,
          fmt::format("{} {} needs {} bytes but only {} remain", what, count,
                      need ? fmt::format("at least {}", *need) : std::string("more than 2^64"), r_.remaining()));
    return {};
  }

  Status parse_metadata() {
    std::unordered_set<std::string_view> keys;
    const size_t n_reserve = std::min(static_cast<size_t>(n_kv_), kMaxReserve);
    keys.reserve(n_reserve);
    model_.meta.reserve(model_.meta.size() + n_reserve);
    for (int64_t i = 0; i < n_kv_; ++i) {
      const uint64_t key_at = r_.file_offset();
      const uint64_t key_len = r_.u64("metadata key length");
      if (!r_.ok()) return r_.error();
      if (key_len > r_.remaining())
        return error(
            ErrorCode::count_too_large, key_at,
            fmt::format("metadata key #{}: length {} exceeds the {} bytes that remain", i, key_len, r_.remaining()));
      if (key_len == 0) return error(ErrorCode::schema, key_at, fmt::format("metadata key #{} is empty", i));
      const std::string_view key = r_.chars(key_len, "metadata key");
      if (!is_valid_utf8(key))
        note(ErrorCode::bad_utf8, key_at, fmt::format("metadata key '{}' is not valid UTF-8", printable(key)), true);
      if (!keys.insert(key).second)
        return error(ErrorCode::duplicate_key, key_at, fmt::format("metadata key '{}' appears twice", printable(key)));
      const uint64_t type_at = r_.file_offset();
      const uint32_t type_code = r_.u32("metadata value type");
      if (!r_.ok()) return r_.error();
      const GgufValueType* type = gguf_value_type(type_code);
      if (!type)
        return error(
            ErrorCode::unknown_type, type_at,
            fmt::format("metadata key '{}': value type {} is not a GGUF value type (0-12)", printable(key), type_code));
      MetaEntry entry;
      entry.key = key;
      entry.file = file_index_;
      entry.offset = key_at;
      entry.source = "gguf";
      const std::string what = fmt::format("metadata key '{}'", printable(key));
      AKV_TRY(read_gguf_value(r_, type->type, 0, GgufValueContext{&model_.notes, what}, entry.value));
      if (key == kAlignmentKey) AKV_TRY(take_alignment(entry));
      model_.meta.push_back(entry);
    }
    return {};
  }

  Status take_alignment(const MetaEntry& entry) {
    if (entry.value.type != MetaType::u32)
      return error(ErrorCode::bad_alignment, entry.offset,
                   fmt::format("general.alignment has type {}; it must be UINT32", meta_type_name(entry.value.type)));
    if (!is_pow2(entry.value.num.u))
      return error(ErrorCode::bad_alignment, entry.offset,
                   fmt::format("general.alignment = {} is not a non-zero power of two", entry.value.num.u));
    alignment_ = static_cast<uint32_t>(entry.value.num.u);
    return {};
  }

  Status parse_tensor_infos() {
    AKV_TRY(check_count(n_tensors_, kMinTensorInfoBytes, 8, "tensor count"));
    const size_t n = static_cast<size_t>(n_tensors_);
    const uint32_t first = static_cast<uint32_t>(model_.tensors.size());
    first_index_ = first;
    const size_t n_reserve = std::min(n, kMaxReserve);
    model_.tensors.reserve(first + n_reserve);
    model_.dims.reserve(model_.dims.size() + n_reserve * 2);
    TensorNameSet names(model_.tensors, first + n_reserve);
    for (uint32_t i = 0; i < first; ++i) names.insert(model_.tensors[i].name, i);   // earlier parts of a split set
    infos_start_ = r_.file_offset();
    uint64_t expected_offset = 0;
    for (size_t i = 0; i < n; ++i) AKV_TRY(parse_tensor_info(first + i, names, expected_offset));
    header_end_ = r_.file_offset();
    data_start_ = header_end_;
    if (n > 0) {
      auto aligned = checked_align_up(header_end_, alignment_);
      if (!aligned) return error(ErrorCode::overflow, header_end_, "data section start overflows 64 bits");
      data_start_ = *aligned;
    }
    return check_data_bounds(first);
  }

  // One tensor info: name | u32 n_dims | i64 ne[n_dims] | u32 type | u64 offset. `expected_offset`
  // is the running, padded end of the data of the tensors before it.
  Status parse_tensor_info(size_t index, TensorNameSet& names, uint64_t& expected_offset) {
    const uint64_t info_at = r_.file_offset();
    const uint64_t name_len = r_.u64("tensor name length");
    if (!r_.ok()) return r_.error();
    if (name_len > r_.remaining())
      return error(ErrorCode::count_too_large, info_at,
                   fmt::format("tensor #{}: name length {} exceeds the {} bytes that remain", index - first_index_,
                               name_len, r_.remaining()));
    Tensor t;
    t.name = r_.chars(name_len, "tensor name");
    t.file = file_index_;
    // The name's slot is fetched while the rest of the info is parsed (the set outgrows the caches).
    const uint64_t name_hash = names.hash(t.name);
    names.prefetch(name_hash);
    auto shown = [&t] { return printable(t.name); };   // only errors and notes need it
    if (name_len > kMaxTensorNameBytes)
      note(ErrorCode::schema, info_at,
           fmt::format("tensor '{}': name is {} bytes; ggml allows at most {}", shown(), name_len, kMaxTensorNameBytes),
           true);
    if (!is_valid_utf8(t.name))
      note(ErrorCode::bad_utf8, info_at, fmt::format("tensor '{}': name is not valid UTF-8", shown()), true);

    const uint64_t dims_at = r_.file_offset();
    const uint32_t n_dims = r_.u32("tensor n_dims");
    if (!r_.ok()) return r_.error();
    if (n_dims > kMaxDims)
      return error(ErrorCode::too_many_dims, dims_at,
                   fmt::format("tensor '{}' has {} dimensions; GGUF allows at most {}", shown(), n_dims, kMaxDims));
    // The rest of the info in one bounds check: ne[n_dims], type, offset.
    const uint64_t ne_at = r_.file_offset();
    const auto fixed = r_.bytes(8 * n_dims + 4 + 8, "tensor info");
    if (!r_.ok()) return r_.error();
    std::array<int64_t, kMaxDims> ne{1, 1, 1, 1};
    std::memcpy(ne.data(), fixed.data(), 8 * n_dims);
    uint32_t ggml_id;
    uint64_t offset;
    std::memcpy(&ggml_id, fixed.data() + 8 * n_dims, 4);
    std::memcpy(&offset, fixed.data() + 8 * n_dims + 4, 8);
    const uint64_t type_at = ne_at + 8 * n_dims, offset_at = type_at + 4;

    // ggml checks each partial product against INT64_MAX; a zero dimension does not excuse an
    // overflow among the others.
    uint64_t n_elements = 1;
    bool overflowed = false;
    for (uint32_t d = 0; d < n_dims; ++d) {
      if (ne[d] < 0)
        return error(ErrorCode::bad_shape, ne_at + 8 * d,
                     fmt::format("tensor '{}': ne[{}] = {} is negative", shown(), d, ne[d]));
      auto product = checked_mul(n_elements, static_cast<uint64_t>(ne[d]));
      if (!product || *product > static_cast<uint64_t>(INT64_MAX)) overflowed = true;
      else n_elements = *product;
    }
    if (overflowed)
      return error(ErrorCode::overflow, ne_at,
                   fmt::format("tensor '{}': element count of ne = [{}] overflows 64 bits", shown(),
                               fmt::join(ne.begin(), ne.begin() + n_dims, ", ")));

    auto type = type_from_ggml(ggml_id);
    if (!type) {
      if (ggml_id_removed(ggml_id))
        return error(ErrorCode::unknown_type, type_at,
                     fmt::format("tensor '{}' has ggml type {} ({}), which was removed from GGUF", shown(), ggml_id,
                                 removed_type_name(ggml_id)));
      return error(
          ErrorCode::unknown_type, type_at,
          fmt::format("tensor '{}' has unknown ggml type {} (known: 0-{})", shown(), ggml_id, kGgmlTypeCount - 1));
    }
    t.type = *type;
    const TypeInfo& info = type_info(*type);
    if (static_cast<uint64_t>(ne[0]) % info.block_elems != 0)
      return error(ErrorCode::bad_shape, ne_at,
                   fmt::format("tensor '{}': ne[0] = {} is not a multiple of {}'s block of {} elements", shown(), ne[0],
                               info.name, info.block_elems));
    // nbytes = (ne[0] / block) * block_bytes * ne[1] * ne[2] * ne[3]
    std::optional<uint64_t> nbytes = checked_mul(static_cast<uint64_t>(ne[0]) / info.block_elems, info.block_bytes);
    for (uint32_t d = 1; d < kMaxDims && nbytes; ++d) nbytes = checked_mul(*nbytes, static_cast<uint64_t>(ne[d]));
    if (!nbytes)
      return error(ErrorCode::overflow, ne_at, fmt::format("tensor '{}': byte size overflows 64 bits", shown()));
    t.nbytes = *nbytes;

    if (offset % alignment_ != 0)
      return error(
          ErrorCode::bad_alignment, offset_at,
          fmt::format("tensor '{}': offset {} is not a multiple of the alignment ({})", shown(), offset, alignment_));
    // Tensors are contiguous in info order, each padded to the alignment (ggml's rule); this also
    // rules out overlaps, gaps and reversals.
    if (offset != expected_offset)
      return error(ErrorCode::bad_offset, offset_at,
                   fmt::format("tensor '{}' has offset {}, expected {}", shown(), offset, expected_offset));
    auto padded = checked_align_up(t.nbytes, alignment_);
    auto next = padded ? checked_add(expected_offset, *padded) : std::nullopt;
    if (!next)
      return error(ErrorCode::overflow, offset_at, fmt::format("tensor '{}': data end overflows 64 bits", shown()));
    expected_offset = *next;
    t.offset = offset;   // relative until the data section's start is known

    const uint32_t earlier = names.insert(t.name, name_hash, static_cast<uint32_t>(index));
    if (earlier != kNone) {
      const Tensor& e = model_.tensors[earlier];
      std::string where = e.file == file_index_ ? std::string("earlier in this file")
                                                : fmt::format("also in '{}'", model_.files[e.file].path);
      return error(ErrorCode::duplicate_tensor, info_at, fmt::format("tensor '{}' appears twice ({})", shown(), where));
    }
    std::array<int64_t, kMaxDims> numpy_shape{};
    for (uint32_t d = 0; d < n_dims; ++d) numpy_shape[d] = ne[n_dims - 1 - d];   // ne is innermost-first
    model_.add_tensor(t, std::span<const int64_t>(numpy_shape.data(), n_dims));
    return {};
  }

  // Makes each new tensor's offset absolute and checks its data lies inside the file.
  Status check_data_bounds(uint32_t first) {
    const uint64_t file_size = map_.size();
    for (size_t i = first; i < model_.tensors.size(); ++i) {
      Tensor& t = model_.tensors[i];
      auto begin = checked_add(data_start_, t.offset);
      auto end = begin ? checked_add(*begin, t.nbytes) : std::nullopt;
      if (!end)
        return error(ErrorCode::overflow, offset_field_position(i - first),
                     fmt::format("tensor '{}': data end overflows 64 bits", printable(t.name)));
      if (*end > file_size)
        return error(ErrorCode::out_of_bounds, offset_field_position(i - first),
                     fmt::format("tensor '{}': data [{:#x}, {:#x}) ends past the end of the file ({:#x})",
                                 printable(t.name), *begin, *end, file_size));
      t.offset = *begin;
    }
    return {};
  }

  // File position of the offset field of tensor info `index` (error path only: the infos were
  // read once already, so this walk stays in bounds; not storing it keeps opening lean).
  uint64_t offset_field_position(size_t index) const {
    ByteReader r(map_.bytes(), path_, 0);
    r.seek(infos_start_);
    for (size_t i = 0;; ++i) {
      r.skip(r.u64(), "name");
      r.skip(8 * uint64_t{r.u32()} + 4, "dims and type");
      if (i == index || !r.ok()) return r.file_offset();
      r.skip(8, "offset");
    }
  }

  Model& model_;
  const MappedFile& map_;
  std::string path_;
  uint32_t file_index_;
  ByteReader r_;
  uint32_t version_ = 0;
  int64_t n_tensors_ = 0;
  int64_t n_kv_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t infos_start_ = 0;
  uint32_t first_index_ = 0;   // model index of this file's first tensor
  uint64_t header_end_ = 0;
  uint64_t data_start_ = 0;
};

bool ends_with_gguf(std::string_view path) {
  if (path.size() < 5) return false;
  std::string ext(path.substr(path.size() - 5));
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".gguf";
}

}   // namespace

Result<uint32_t> add_gguf_file(Model& model, const std::string& path, const std::string& role) {
  auto map = MappedFile::open(path);
  if (!map) return std::move(map).error();
  const uint32_t index = static_cast<uint32_t>(model.files.size());
  // On failure the model is rolled back to what it held before this file.
  const size_t n_meta = model.meta.size(), n_tensors = model.tensors.size(), n_dims = model.dims.size(),
               n_notes = model.notes.size();
  SourceFile source;
  source.path = path;
  source.role = role;
  GgufFileParser parser(model, *map, path, index);
  Status st = parser.parse(source);
  if (!st.ok()) {
    model.meta.resize(n_meta);
    model.tensors.resize(n_tensors);
    model.dims.resize(n_dims);
    model.notes.resize(n_notes);
    return std::move(st).error();
  }
  source.map = std::move(*map);   // the mapping's address does not change, so views stay valid
  model.files.push_back(std::move(source));
  return index;
}

bool sniff_gguf(const Probe& probe) {
  if (probe.is_dir) return false;
  if (probe.head.size() >= 4 && std::memcmp(probe.head.data(), "GGUF", 4) == 0) return true;
  // A *.gguf file too short or too broken for any format to claim gets GGUF's precise error.
  if (!ends_with_gguf(probe.path)) return false;
  for (const auto& f : format_table())
    if (f.sniff != &sniff_gguf && f.sniff(probe)) return false;
  return true;
}

Result<Model> open_gguf(const Probe& probe, const OpenOptions& options) {
  if (auto split = parse_gguf_split_name(probe.path)) return open_gguf_split(*split, options);
  Model model;
  model.format = "gguf";
  auto added = add_gguf_file(model, probe.path, "model");
  if (!added) return std::move(added).error();
  return model;
}

}   // namespace akview
