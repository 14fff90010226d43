// A GGUF v3 writer for fixtures (FORMATS.md §2.1-2.5): metadata of every value type including
// (nested) arrays, tensors with type/ne/data, alignment, split sets, and knobs for broken variants.
// Used by the GGUF tests, the open benchmark and the demo model.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace akview::testing {

// gguf_type codes (FORMATS.md §2.3).
enum GgufTypeCode : uint32_t {
  kGgufU8 = 0,
  kGgufI8 = 1,
  kGgufU16 = 2,
  kGgufI16 = 3,
  kGgufU32 = 4,
  kGgufI32 = 5,
  kGgufF32 = 6,
  kGgufBool = 7,
  kGgufString = 8,
  kGgufArray = 9,
  kGgufU64 = 10,
  kGgufI64 = 11,
  kGgufF64 = 12,
};

// One encoded metadata value: its type code and its bytes (without the type code).
struct GgufValue {
  uint32_t type = kGgufU8;
  std::vector<uint8_t> payload;
};

GgufValue gguf_u8(uint8_t v);
GgufValue gguf_i8(int8_t v);
GgufValue gguf_u16(uint16_t v);
GgufValue gguf_i16(int16_t v);
GgufValue gguf_u32(uint32_t v);
GgufValue gguf_i32(int32_t v);
GgufValue gguf_f32(float v);
GgufValue gguf_bool(bool v);
GgufValue gguf_string(std::string_view v);
GgufValue gguf_u64(uint64_t v);
GgufValue gguf_i64(int64_t v);
GgufValue gguf_f64(double v);
// An array whose elements are `elems` (each should have type `elem_type`; arrays nest).
GgufValue gguf_array(uint32_t elem_type, const std::vector<GgufValue>& elems);
// An array header that claims `count` elements followed by `raw` element bytes (broken files).
GgufValue gguf_array_raw(uint32_t elem_type, uint64_t count, std::vector<uint8_t> raw = {});
// A string whose length field says `claimed_len` but which holds `bytes` (broken files).
GgufValue gguf_string_raw(uint64_t claimed_len, std::string_view bytes);

// ggml type ids of a tensor's `ggml_type` (FORMATS.md), the ones tests name most.
inline constexpr uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_0 = 2, kGgmlQ8_0 = 8, kGgmlQ4_K = 12;

struct GgufTensorSpec {
  GgufTensorSpec() = default;
  GgufTensorSpec(std::string name_, uint32_t ggml_type_, std::vector<int64_t> ne_)
      : name(std::move(name_)), ggml_type(ggml_type_), ne(std::move(ne_)) {}
  std::string name;
  uint32_t ggml_type = 0;
  std::vector<int64_t> ne;            // ggml order: ne[0] is the row length
  std::vector<uint8_t> data;          // empty: deterministic filler of the size type x ne gives
  std::optional<uint64_t> offset;     // override the data offset written (default: running, padded)
  std::optional<uint32_t> n_dims;     // override the n_dims written (default: ne.size())
  std::optional<uint64_t> name_len;   // override the name's length field
};

struct GgufWriteOptions {
  std::array<char, 4> magic = {'G', 'G', 'U', 'F'};
  uint32_t version = 3;
  std::optional<int64_t> n_tensors;   // override the counts written
  std::optional<int64_t> n_kv;
  uint32_t alignment = 32;               // padding; set_alignment() also writes general.alignment
  std::optional<uint64_t> truncate_to;   // cut the file to this many bytes
};

class GgufWriter {
 public:
  // Adds a key, or replaces the value of an existing one (keeps its position).
  GgufWriter& set(std::string key, GgufValue value);
  // Appends a key even if it exists (duplicate-key files).
  GgufWriter& add(std::string key, GgufValue value);
  GgufWriter& remove(std::string_view key);
  // Sets the padding and writes general.alignment as UINT32.
  GgufWriter& set_alignment(uint32_t alignment);
  GgufWriter& add_tensor(GgufTensorSpec tensor);

  GgufWriteOptions& options() { return options_; }
  const GgufWriteOptions& options() const { return options_; }
  std::vector<GgufTensorSpec>& tensors() { return tensors_; }
  const std::vector<GgufTensorSpec>& tensors() const { return tensors_; }
  const std::vector<std::pair<std::string, GgufValue>>& kvs() const { return kvs_; }

  // Bytes of a tensor's data as written: data.size(), or type x ne when data is empty.
  static uint64_t tensor_bytes(const GgufTensorSpec& tensor);
  // Relative data offset of each tensor as written (running, padded), before overrides.
  std::vector<uint64_t> data_offsets() const;
  // The header: magic .. tensor infos, padded to the alignment (the absolute data section start).
  std::vector<uint8_t> header() const;
  // Header size without the padding (end of the tensor infos).
  uint64_t infos_end() const;
  // Size of the whole file (before truncate_to).
  uint64_t file_size() const;
  std::vector<uint8_t> bytes() const;
  // Writes the file; `sparse` writes only the header and extends the file with ftruncate, so the
  // tensor data costs no disk (it reads as zeros).
  bool write(const std::string& path, bool sparse = false) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> kvs_;
  std::vector<GgufTensorSpec> tensors_;
  GgufWriteOptions options_;
};

struct GgufSplitOptions {
  // Called for each part (1-based) before it is written, to break one part.
  std::function<void(uint32_t part, GgufWriter& writer)> tweak;
};

// Writes `model` as `<dir>/<base>-0000i-of-0000N.gguf`: tensors dealt out in contiguous runs,
// metadata in part 1, split.no (u16), split.count (u16), split.tensors.count (i32) in every part.
// Returns the paths written (empty on failure).
std::vector<std::string> write_gguf_split(const std::string& dir, const std::string& base, uint32_t n_parts,
                                          const GgufWriter& model, const GgufSplitOptions& options = {});

}   // namespace akview::testing
