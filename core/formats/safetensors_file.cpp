// One SafeTensors file parsed into a Model: FORMATS.md §1.1-1.6. Every rule of the reference
// deserializer (length prefix, 1e8 header cap, UTF-8, JSON, exact dtype names, sorted exact coverage
// of the data section, overflow-checked sizes) plus akview's stricter ones (duplicate keys rejected).
// Opening reads only the header bytes: the data section is never touched.
#include "core/formats/safetensors_file.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/byte_reader.hpp"
#include "core/checked.hpp"
#include "core/huge_pages.hpp"
#include "core/json_reader.hpp"
#include "core/name_set.hpp"
#include "core/quote.hpp"

namespace akview {
namespace {

constexpr uint64_t kLengthPrefixBytes = kSafetensorsPrefixBytes;
constexpr uint64_t kMaxHeaderBytes = kSafetensorsMaxHeaderBytes;
constexpr std::string_view kMetadataKey = "__metadata__";
constexpr size_t kMaxFieldNotes = 8;          // unknown-field notes before a summary
constexpr uint64_t kMinBytesPerTensor = 50;   // `"":{"dtype":"U8","shape":[],"data_offsets":[0,0]},`

// The dtype strings of a file are a handful repeated a million times: remember the last few.
class DtypeCache {
 public:
  std::optional<TypeId> lookup(std::string_view dtype) {
    for (size_t k = 0; k < used_; ++k)
      if (rows_[k].name == dtype) return rows_[k].id;
    auto id = type_from_st_dtype(dtype);
    if (id) {
      rows_[next_] = {type_info(*id).st_name, *id};   // the table's own string: stable
      next_ = (next_ + 1) % rows_.size();
      used_ = std::min(used_ + 1, rows_.size());
    }
    return id;
  }

 private:
  struct Row {
    std::string_view name;
    TypeId id;
  };
  std::array<Row, 4> rows_{};
  size_t used_ = 0, next_ = 0;
};

std::string format_shape(std::span<const int64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// Grows a vector's capacity geometrically to hold `extra` more items (reserve() to an exact size
// would reallocate once per shard of a large sharded set).
template <typename V>
void reserve_more(V& v, size_t extra) {
  const size_t need = v.size() + extra;
  if (need > v.capacity()) v.reserve(std::max(need, v.capacity() * 2));
}

// Parses the JSON header of one file into `model`, then validates the data layout.
class HeaderParser {
 public:
  HeaderParser(Model& model, uint32_t file_index, std::span<const uint8_t> header, uint64_t header_len,
               uint64_t file_size, NameCheck names)
      : model_(model),
        file_index_(file_index),
        path_(model.files[file_index].path),
        header_(header),
        reader_(header, path_, kLengthPrefixBytes),
        header_len_(header_len),
        file_size_(file_size),
        names_(names),
        first_tensor_(static_cast<uint32_t>(model.tensors.size())) {}

  Status run() {
    const uint64_t estimate = header_len_ / kMinBytesPerTensor + 1;
    reserve_more(model_.tensors, estimate);
    reserve_more(model_.dims, 2 * estimate);
    advise_huge_pages(model_.tensors.data() + model_.tensors.size(),
                      (model_.tensors.capacity() - model_.tensors.size()) * sizeof(Tensor));
    advise_huge_pages(model_.dims.data() + model_.dims.size(),
                      (model_.dims.capacity() - model_.dims.size()) * sizeof(int64_t));
    if (!parse_object()) return reader_.error();
    if (names_ == NameCheck::now) AKV_TRY(check_unique_names());
    if (Status layout = validate_layout(); !layout.ok()) {
      if (names_ == NameCheck::by_caller) AKV_TRY(check_unique_names());   // a repeated name comes first
      return layout;
    }
    if (unknown_fields_ > kMaxFieldNotes)
      model_.notes.push_back(
          {ErrorCode::schema, path_, kNoOffset,
           fmt::format("{} more unknown tensor fields were ignored", unknown_fields_ - kMaxFieldNotes), false});
    return {};
  }

 private:
  std::string_view keep(const JsonToken& tok) { return tok.escaped ? model_.intern(std::string(tok.text)) : tok.text; }

  bool parse_object() {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind != JsonKind::object_begin)
      return reader_.fail(ErrorCode::schema, tok.offset,
                          fmt::format("the header must be a JSON object, found {}", json_kind_name(tok.kind)));
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::object_end) break;
      const uint64_t key_offset = tok.offset;
      if (tok.text == kMetadataKey) {
        if (seen_metadata_)
          return reader_.fail(ErrorCode::duplicate_key, key_offset, "the header has two '__metadata__' keys");
        seen_metadata_ = true;
        if (!parse_metadata()) return false;
        continue;
      }
      if (!parse_tensor(keep(tok), key_offset)) return false;
    }
    if (!reader_.next(tok)) return false;   // only JSON whitespace may follow (NUL padding fails here)
    return true;
  }

  // `__metadata__`: a string -> string map, or null (treated as absent).
  bool parse_metadata() {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind == JsonKind::null) return true;
    if (tok.kind != JsonKind::object_begin)
      return reader_.fail(
          ErrorCode::schema, tok.offset,
          fmt::format("'__metadata__' must be an object of strings, found {}", json_kind_name(tok.kind)));
    const size_t first = model_.meta.size();
    NameSet keys;
    auto key_of = [&](uint32_t i) { return model_.meta[first + i].key; };
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::object_end) return true;
      MetaEntry entry;
      entry.key = keep(tok);
      entry.offset = tok.offset;
      entry.file = file_index_;
      entry.source = "safetensors";
      if (!reader_.next(tok)) return false;
      if (tok.kind != JsonKind::string)
        return reader_.fail(
            ErrorCode::schema, tok.offset,
            fmt::format("metadata {} must be a string, found {}", quote_name(entry.key), json_kind_name(tok.kind)));
      entry.value.type = MetaType::string;
      entry.value.str = keep(tok);
      const auto index = static_cast<uint32_t>(model_.meta.size() - first);
      if (keys.insert(entry.key, index, key_of) != NameSet::kAbsent)
        return reader_.fail(ErrorCode::duplicate_key, entry.offset,
                            fmt::format("metadata key {} appears twice", quote_name(entry.key)));
      model_.meta.push_back(entry);
    }
  }

  bool parse_tensor(std::string_view name, uint64_t key_offset) {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind != JsonKind::object_begin)
      return reader_.fail(ErrorCode::schema, tok.offset,
                          fmt::format("tensor {}: expected an object with dtype, shape and data_offsets, found {}",
                                      quote_name(name), json_kind_name(tok.kind)));
    Tensor t;
    t.name = name;
    t.file = file_index_;
    t.dims_at = static_cast<uint32_t>(model_.dims.size());
    bool has_dtype = false, has_shape = false, has_offsets = false;
    uint64_t begin = 0, end = 0;
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::object_end) break;
      const std::string_view field = tok.text;
      const uint64_t field_offset = tok.offset;
      if (field == "dtype") {
        if (has_dtype) return duplicate_field(name, field, field_offset);
        has_dtype = true;
        if (!reader_.next(tok)) return false;
        if (tok.kind != JsonKind::string)
          return reader_.fail(
              ErrorCode::schema, tok.offset,
              fmt::format("tensor {}: dtype must be a string, found {}", quote_name(name), json_kind_name(tok.kind)));
        auto type = dtypes_.lookup(tok.text);
        if (!type)
          return reader_.fail(
              ErrorCode::unknown_type, tok.offset,
              fmt::format("tensor {}: unknown dtype {} (names are exact and case-sensitive, e.g. 'BF16')",
                          quote_name(name), quote_name(tok.text)));
        t.type = *type;
      } else if (field == "shape") {
        if (has_shape) return duplicate_field(name, field, field_offset);
        has_shape = true;
        if (!parse_shape(name, t)) return false;
      } else if (field == "data_offsets") {
        if (has_offsets) return duplicate_field(name, field, field_offset);
        has_offsets = true;
        if (!parse_offsets(name, begin, end)) return false;
      } else {
        // Unknown fields are ignored by the reference (no deny_unknown_fields): tolerate, but say so.
        if (++unknown_fields_ <= kMaxFieldNotes)
          model_.notes.push_back(
              {ErrorCode::schema, path_, field_offset,
               fmt::format("tensor {}: unknown field {} ignored", quote_name(name), quote_name(field)), false});
        if (!reader_.next(tok) || !reader_.skip_value(tok)) return false;
      }
    }
    const char* missing = !has_dtype ? "dtype" : !has_shape ? "shape" : !has_offsets ? "data_offsets" : nullptr;
    if (missing)
      return reader_.fail(ErrorCode::schema, key_offset,
                          fmt::format("tensor {} has no '{}'", quote_name(name), missing));
    // Until validate_layout(): offset/nbytes hold the raw relative [begin, end).
    t.offset = begin;
    t.nbytes = end;
    if (!in_header(name)) escaped_keys_.push_back({static_cast<uint32_t>(model_.tensors.size()), key_offset});
    model_.tensors.push_back(t);
    return true;
  }

  bool in_header(std::string_view name) const {
    const auto* p = reinterpret_cast<const uint8_t*>(name.data());
    return p > header_.data() && p < header_.data() + header_.size();
  }

  // File offset of the key of tensor `i` (model index): names that are views into the header give
  // it for free; unescaped (interned) names were recorded as they came.
  uint64_t key_offset(uint32_t i) const {
    const std::string_view name = model_.tensors[i].name;
    if (in_header(name))
      return kLengthPrefixBytes +
             static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(name.data()) - header_.data()) - 1;
    auto it = std::lower_bound(escaped_keys_.begin(), escaped_keys_.end(), i,
                               [](const EscapedKey& k, uint32_t v) { return k.tensor < v; });
    return it != escaped_keys_.end() && it->tensor == i ? it->offset : kNoOffset;
  }

  // Duplicate names, once the count is known (so the hash table is sized once, never grown).
  Status check_unique_names() {
    const auto end = static_cast<uint32_t>(model_.tensors.size());
    if (first_tensor_ == 0) {
      // The model holds this file's tensors alone (so far): its own name index finds duplicates, built
      // once here rather than a second table beside it (open_model keeps it unless it went stale).
      const uint32_t i = model_.build_index();
      if (i != kNone)
        return make_error(ErrorCode::duplicate_tensor, path_, key_offset(i),
                          fmt::format("tensor {} appears twice in the header", quote_name(model_.tensors[i].name)));
      return {};
    }
    NameSet names;
    names.reserve(end - first_tensor_);
    auto name_of = [&](uint32_t i) { return model_.tensors[i].name; };
    constexpr uint32_t kAhead = 16;   // names whose slots are being loaded (each hashed once)
    uint64_t ahead[kAhead];
    for (uint32_t i = first_tensor_; i < end && i - first_tensor_ < kAhead; ++i)
      ahead[i % kAhead] = hash_name(name_of(i));
    for (uint32_t i = first_tensor_; i < end; ++i) {
      const uint64_t h = ahead[i % kAhead];
      if (i + kAhead < end) {
        ahead[i % kAhead] = hash_name(name_of(i + kAhead));
        names.prefetch_hashed(ahead[i % kAhead]);
      }
      if (names.insert_hashed(h, model_.tensors[i].name, i, name_of) != NameSet::kAbsent)
        return make_error(ErrorCode::duplicate_tensor, path_, key_offset(i),
                          fmt::format("tensor {} appears twice in the header", quote_name(model_.tensors[i].name)));
    }
    return {};
  }

  bool duplicate_field(std::string_view name, std::string_view field, uint64_t offset) {
    return reader_.fail(ErrorCode::duplicate_key, offset,
                        fmt::format("tensor {}: field '{}' appears twice", quote_name(name), field));
  }

  bool parse_shape(std::string_view name, Tensor& t) {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind != JsonKind::array_begin)
      return reader_.fail(
          ErrorCode::schema, tok.offset,
          fmt::format("tensor {}: shape must be an array, found {}", quote_name(name), json_kind_name(tok.kind)));
    size_t rank = 0;
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::array_end) break;
      if (tok.kind != JsonKind::number)
        return reader_.fail(
            ErrorCode::schema, tok.offset,
            fmt::format("tensor {}: shape holds {}, not an integer", quote_name(name), json_kind_name(tok.kind)));
      if (tok.num != JsonNumber::uint || tok.u > static_cast<uint64_t>(INT64_MAX))
        return reader_.fail(
            ErrorCode::bad_shape, tok.offset,
            fmt::format("tensor {}: dimension {} is not a non-negative integer", quote_name(name), tok.text));
      if (++rank > 255)
        return reader_.fail(ErrorCode::too_many_dims, tok.offset,
                            fmt::format("tensor {}: more than 255 dimensions", quote_name(name)));
      model_.dims.push_back(static_cast<int64_t>(tok.u));
    }
    t.rank = static_cast<uint8_t>(rank);
    return true;
  }

  bool parse_offsets(std::string_view name, uint64_t& begin, uint64_t& end) {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    const uint64_t at = tok.offset;
    if (tok.kind != JsonKind::array_begin)
      return reader_.fail(ErrorCode::schema, at,
                          fmt::format("tensor {}: data_offsets must be an array, found {}", quote_name(name),
                                      json_kind_name(tok.kind)));
    uint64_t values[2] = {0, 0};
    size_t count = 0;
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::array_end) break;
      if (tok.kind != JsonKind::number)
        return reader_.fail(ErrorCode::schema, tok.offset,
                            fmt::format("tensor {}: data_offsets holds {}, not an integer", quote_name(name),
                                        json_kind_name(tok.kind)));
      if (tok.num != JsonNumber::uint)
        return reader_.fail(
            ErrorCode::bad_offset, tok.offset,
            fmt::format("tensor {}: data offset {} is not a non-negative integer", quote_name(name), tok.text));
      if (count < 2) values[count] = tok.u;
      ++count;
    }
    if (count != 2)
      return reader_.fail(
          ErrorCode::schema, at,
          fmt::format("tensor {}: data_offsets must hold exactly 2 integers, found {}", quote_name(name), count));
    begin = values[0];
    end = values[1];
    return true;
  }

  // Steps 7-13 of FORMATS.md §1.2: sort by (begin, end), walk for exact coverage, check sizes.
  Status validate_layout() {
    const uint32_t n = static_cast<uint32_t>(model_.tensors.size()) - first_tensor_;
    Tensor* tensors = model_.tensors.data() + first_tensor_;
    auto before = [&](uint32_t a, uint32_t b) {
      return tensors[a].offset != tensors[b].offset ? tensors[a].offset < tensors[b].offset
                                                    : tensors[a].nbytes < tensors[b].nbytes;
    };
    bool sorted = true;   // the reference writer emits data order: usually no sort is needed
    for (uint32_t i = 1; i < n && sorted; ++i) sorted = !before(i, i - 1);
    std::vector<uint32_t> order;
    if (!sorted) {
      order.resize(n);
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), before);
    }
    const uint64_t data_start = kLengthPrefixBytes + header_len_;
    uint64_t covered = 0;   // relative end of the data covered so far
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t i = sorted ? k : order[k];
      Tensor& t = tensors[i];
      const uint64_t begin = t.offset, end = t.nbytes, at = key_offset(first_tensor_ + i);
      if (end < begin)
        return make_error(
            ErrorCode::bad_offset, path_, at,
            fmt::format("tensor {}: data_offsets [{}, {}] end before they begin", quote_name(t.name), begin, end));
      if (begin < covered)
        return make_error(ErrorCode::bad_offset, path_, at,
                          fmt::format("tensor {}: data_offsets [{}, {}] overlap the data before, which ends at {}",
                                      quote_name(t.name), begin, end, covered));
      if (begin > covered)
        return make_error(
            ErrorCode::bad_offset, path_, at,
            fmt::format("tensor {}: data_offsets [{}, {}] leave a gap: bytes [{}, {}) belong to no tensor",
                        quote_name(t.name), begin, end, covered, begin));
      const auto shape = model_.shape(t);
      std::optional<uint64_t> elems = 1;
      for (int64_t d : shape)
        if (elems) elems = checked_mul(*elems, static_cast<uint64_t>(d));
      const TypeInfo& type = type_info(t.type);
      const uint64_t bits_per_elem = uint64_t{type.block_bytes} * 8 / type.block_elems;
      const auto bits = elems ? checked_mul(*elems, bits_per_elem) : std::nullopt;
      if (!bits)
        return make_error(ErrorCode::overflow, path_, at,
                          fmt::format("tensor {}: shape {} x {} bits overflows 64 bits", quote_name(t.name),
                                      format_shape(shape), bits_per_elem));
      if (*bits % 8 != 0)
        return make_error(ErrorCode::bad_alignment, path_, at,
                          fmt::format("tensor {}: {} elements of {} ({} bits) do not end on a byte boundary",
                                      quote_name(t.name), *elems, type.st_name, *bits));
      if (end - begin != *bits / 8)
        return make_error(
            ErrorCode::size_mismatch, path_, at,
            fmt::format("tensor {}: shape {} of {} needs {} bytes but data_offsets [{}, {}] span {}",
                        quote_name(t.name), format_shape(shape), type.st_name, *bits / 8, begin, end, end - begin));
      const auto absolute = checked_add(data_start, begin);
      if (!absolute)
        return make_error(ErrorCode::overflow, path_, at,
                          fmt::format("tensor {}: data offset {} overflows 64 bits", quote_name(t.name), begin));
      t.offset = *absolute;
      t.nbytes = end - begin;
      covered = end;
    }
    const auto data_end = checked_add(data_start, covered);
    if (!data_end || *data_end > file_size_)
      return make_error(
          ErrorCode::truncated, path_, file_size_,
          fmt::format("the data section needs {} bytes after the header, but the file ends {} bytes after it", covered,
                      file_size_ - data_start));
    if (*data_end < file_size_)
      return make_error(
          ErrorCode::trailing_bytes, path_, *data_end,
          fmt::format("{} bytes after the last tensor's data belong to no tensor", file_size_ - *data_end));
    return {};
  }

  Model& model_;
  uint32_t file_index_;
  std::string path_;
  std::span<const uint8_t> header_;
  JsonReader reader_;
  uint64_t header_len_;
  uint64_t file_size_;
  NameCheck names_;
  uint32_t first_tensor_;
  bool seen_metadata_ = false;
  size_t unknown_fields_ = 0;
  DtypeCache dtypes_;
  struct EscapedKey {
    uint32_t tensor;   // index into model.tensors
    uint64_t offset;   // file offset of its key
  };
  std::vector<EscapedKey> escaped_keys_;   // keys whose names were unescaped (rare)
};

// Rules 1-5 and the leading-'{' rule, on the mapped bytes; then the JSON and the layout.
Status parse_file(Model& model, uint32_t file_index, NameCheck names) {
  SourceFile& file = model.files[file_index];
  const std::string& path = file.path;
  const uint64_t size = file.map.size();
  if (size < kLengthPrefixBytes)
    return make_error(ErrorCode::header_too_small, path, 0,
                      fmt::format("file is {} bytes, shorter than the 8-byte header length prefix", size));
  ByteReader prefix(file.map.bytes(), path);
  const uint64_t header_len = prefix.u64("header length");
  if (header_len > kMaxHeaderBytes)
    return make_error(ErrorCode::header_too_large, path, 0,
                      fmt::format("header length {} exceeds the limit of 100,000,000 bytes", header_len));
  if (header_len > size - kLengthPrefixBytes)
    return make_error(ErrorCode::header_length, path, 0,
                      fmt::format("header length {} runs past the end of the file ({} bytes)", header_len, size));
  file.header_bytes = kLengthPrefixBytes + header_len;
  file.data_offset = kLengthPrefixBytes + header_len;
  const auto header = file.map.bytes().subspan(kLengthPrefixBytes, header_len);
  if (header.empty())
    return make_error(ErrorCode::bad_json, path, kLengthPrefixBytes, "the JSON header is empty (length 0)");
  if (size_t bad = find_invalid_utf8(header); bad != header.size())
    return make_error(ErrorCode::bad_utf8, path, kLengthPrefixBytes + bad,
                      fmt::format("the header is not valid UTF-8 (byte 0x{:02x})", header[bad]));
  if (header[0] != '{' && is_safetensors_json_ws(header[0]))
    model.notes.push_back({ErrorCode::bad_json, path, kLengthPrefixBytes,
                           "the header starts with whitespace, not '{' (the format README requires '{'; the "
                           "reference reader tolerates it)",
                           true});
  HeaderParser parser(model, file_index, header, header_len, size, names);
  return parser.run();
}

}   // namespace

Result<uint32_t> add_safetensors_file(Model& model, const std::string& path, const std::string& role, NameCheck names) {
  auto map = MappedFile::open(path);
  if (!map) return std::move(map).error();
  const size_t tensors = model.tensors.size(), dims = model.dims.size(), meta = model.meta.size(),
               notes = model.notes.size();
  const auto file_index = static_cast<uint32_t>(model.files.size());
  model.files.push_back(SourceFile{path, std::move(*map), role, 0, 0});
  Status status = parse_file(model, file_index, names);
  if (!status.ok()) {
    // Leave the model as it was, so a caller that carries on sees no half-read file.
    model.tensors.resize(tensors);
    model.dims.resize(dims);
    model.meta.resize(meta);
    model.notes.resize(notes);
    model.files.pop_back();
    return std::move(status).error();
  }
  return file_index;
}

}   // namespace akview
