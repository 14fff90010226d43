// SafeTensors fixture writer (FORMATS.md §1.6, §1.7): files laid out the way the reference
// serializer writes them (metadata first, tensors sorted by dtype descending alignment then by
// name, contiguous data, header space-padded to a multiple of 8), index files for sharded sets,
// and knobs that break one rule at a time for negative tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace akview::testing {

struct StTensor {
  StTensor() = default;
  StTensor(std::string name_, std::string dtype_, std::vector<int64_t> shape_, std::vector<uint8_t> bytes_ = {},
           std::optional<uint64_t> nbytes_ = std::nullopt)
      : name(std::move(name_)),
        dtype(std::move(dtype_)),
        shape(std::move(shape_)),
        bytes(std::move(bytes_)),
        nbytes(nbytes_) {}

  std::string name;
  std::string dtype;   // SafeTensors spelling: "BF16", "F4", ... (unknown ones are written as given)
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;       // the data written for this tensor
  std::optional<uint64_t> nbytes;   // with empty `bytes`: the tensor's size, left as a hole (sparse data)
};

struct StWriteOptions {
  std::vector<std::pair<std::string, std::string>> metadata;   // __metadata__, in this order
  bool sort = true;                                            // reference order; false keeps the given order
  bool pad = true;                                             // pad the header with spaces to a multiple of 8
  std::string leading;                                         // bytes written before the header's '{' (e.g. " ")
  std::string padding;                  // bytes appended after the JSON (e.g. "\0\0"), counted in N
  std::optional<std::string> header;    // raw header JSON written instead of the generated one
  std::optional<uint64_t> header_len;   // a length prefix that lies
  uint64_t extra_data_bytes = 0;        // zero bytes appended after the data section
  uint64_t missing_data_bytes = 0;      // bytes cut from the end of the data section
  bool sparse = false;                  // do not write the data: extend the file with ftruncate
};

// Sorts a copy of `tensors` the way the reference writer does (dtype order descending, then name).
std::vector<StTensor> sort_like_reference(std::vector<StTensor> tensors);
// The header JSON (compact, before padding) for tensors already in write order.
std::string st_header_json(const std::vector<StTensor>& ordered, const StWriteOptions& options);
// The whole file in memory (not for sparse files).
std::vector<uint8_t> safetensors_bytes(const std::vector<StTensor>& tensors, const StWriteOptions& options = {});
// Writes the file; returns false (and leaves errno) on an I/O failure.
bool write_safetensors(const std::string& path, const std::vector<StTensor>& tensors,
                       const StWriteOptions& options = {});
// Bytes of the data section the reference writer would emit for these tensors.
uint64_t st_data_bytes(const std::vector<StTensor>& tensors);

// model.safetensors.index.json as transformers writes it (indent 2, sorted keys, trailing newline).
struct StIndexOptions {
  std::optional<uint64_t> total_size;                                // metadata.total_size; omitted when empty
  std::vector<std::pair<std::string, std::string>> extra_metadata;   // raw JSON values
};
std::string st_index_json(const std::vector<std::pair<std::string, std::string>>& weight_map,
                          const StIndexOptions& options = {});
bool write_text(const std::string& path, const std::string& text);

// A sharded set in `dir`: model-0000i-of-0000n.safetensors plus the index (total_size = data bytes).
// Returns the shard file names.
std::vector<std::string> write_sharded_safetensors(const std::string& dir,
                                                   const std::vector<std::vector<StTensor>>& shards,
                                                   const StWriteOptions& options = {});

// Little-endian bytes of a value array (for building tensors in tests).
template <typename T>
std::vector<uint8_t> le_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) __builtin_memcpy(out.data(), values.data(), out.size());
  return out;
}

}   // namespace akview::testing
