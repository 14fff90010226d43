// The Model: every source file, tensor and metadata entry of one opened model, whatever its format.
// Metadata points into the read-only mappings (zero copy); tensor names too, until pack_names copies
// them into one block the Model owns (the TUI does, after its first frame), so a header's pages need
// not stay resident to list, sort or filter names. The Model owns the mappings and the block, so views stay valid for
// its lifetime (moving a Model keeps them valid too).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.hpp"
#include "core/types.hpp"

namespace akview {

inline constexpr uint32_t kNone = ~uint32_t{0};

struct SourceFile {
  std::string path;   // path as opened (relative to the user's argument where possible)
  MappedFile map;
  std::string role;            // "model", "shard 1/4", "part 2/3", "blob", "index", "config"
  uint64_t header_bytes = 0;   // bytes of header (length prefix + JSON, or GGUF header + infos)
  uint64_t data_offset = 0;    // absolute offset of the data section
};

// Companion tensors of a composite quantized tensor (MLX / Ollama): bits, group size, mode.
struct QuantInfo {
  uint8_t bits = 0;
  uint32_t group_size = 0;
  uint32_t scales = kNone;         // tensor index of the scales
  uint32_t biases = kNone;         // tensor index of the biases (affine only)
  uint32_t global_scale = kNone;   // tensor index of a scalar/vector global scale (nvfp4)
};

enum TensorFlags : uint16_t {
  kTensorCompanion = 1 << 0,     // scales/biases shown beneath their logical tensor
  kTensorUnsupported = 1 << 1,   // listed, but its values cannot be decoded
  kTensorNonContiguous = 1 << 2,
};

struct Tensor {
  std::string_view name;   // native name
  TypeId type = TypeId::f32;
  uint8_t rank = 0;
  uint16_t flags = 0;
  uint32_t file = 0;        // index into Model::files
  uint32_t dims_at = 0;     // index of the first dim in Model::dims (numpy order, outermost first)
  uint32_t quant = kNone;   // index into Model::quants for composite types
  uint64_t offset = 0;      // absolute byte offset of the data in its file
  uint64_t nbytes = 0;
};

// PyTorch checkpoints (FORMATS.md §5.3): what a Tensor does not carry. One row per tensor,
// indexed like Model::tensors, present only when the model came from a PyTorch checkpoint.
struct TorchTensorInfo {
  uint32_t storage = 0;          // index into Model::torch_storages
  uint64_t storage_offset = 0;   // in elements of the tensor's dtype
  uint32_t strides_at = 0;       // first stride in Model::torch_strides (the Tensor's rank gives the count)
  bool is_parameter = false;
  bool requires_grad = false;
};

// One storage of a PyTorch checkpoint; several tensors may share it (views, tied weights).
struct TorchStorage {
  std::string_view key;        // zip: <prefix>/data/<key>; legacy: the key in the storage list
  std::string_view location;   // "cpu", "cuda:0", ...
  uint32_t file = 0;
  uint64_t offset = 0;   // absolute offset of the storage's first byte
  uint64_t nbytes = 0;
};

// Metadata value types; 0..12 are GGUF's gguf_type codes, the rest are akview's.
enum class MetaType : uint8_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
  json = 13,   // raw JSON text (config.json values, index metadata)
};
std::string_view meta_type_name(MetaType t);   // "UINT32", "STRING", ... (GGUF spelling)

struct MetaValue {
  MetaType type = MetaType::string;
  union {
    uint64_t u;
    int64_t i;
    double f;
  } num{0};
  std::string_view str;   // string value, or JSON text for MetaType::json
  // Arrays are kept as a byte range and decoded on demand (tokenizer arrays reach 250k strings).
  MetaType elem_type = MetaType::u8;
  uint8_t depth = 0;           // nesting depth of the element type (0: scalar elements)
  uint64_t count = 0;          // number of elements
  uint64_t elems_offset = 0;   // absolute file offset of the first element
  uint64_t elems_bytes = 0;    // bytes spanned by all elements
};

struct MetaEntry {
  std::string_view key;
  MetaValue value;
  uint32_t file = 0;
  uint64_t offset = 0;       // absolute offset of the key in its file
  std::string_view source;   // "gguf", "safetensors", "index", "config.json", ...
};

// A problem that does not stop the model from opening (shown by `check`, and in the UI).
// `fails_check`: the file breaks a rule of its format that akview tolerates when browsing
// (e.g. leading whitespace before a SafeTensors header); `akview check` then exits 1.
struct Note {
  ErrorCode code = ErrorCode::schema;
  std::string file;
  uint64_t offset = kNoOffset;
  std::string message;
  bool fails_check = false;
};

class Model {
 public:
  Model();
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  std::string path;        // the user's argument
  std::string disk_path;   // where it lies on disk: `path`, or the cache folder a remote model is laid out in
  std::string format;      // "safetensors", "safetensors-sharded", "gguf", "gguf-split", ...
  std::vector<SourceFile> files;
  std::vector<Tensor> tensors;
  std::vector<int64_t> dims;   // shapes of all tensors, see Tensor::dims_at
  std::vector<QuantInfo> quants;
  std::vector<MetaEntry> meta;
  std::vector<Note> notes;
  // PyTorch only (empty otherwise): strides, storage offsets and the storages tensors share.
  std::vector<TorchTensorInfo> torch_tensors;
  std::vector<TorchStorage> torch_storages;
  std::vector<int64_t> torch_strides;

  std::span<const int64_t> shape(const Tensor& t) const { return {dims.data() + t.dims_at, t.rank}; }
  uint64_t n_elements(const Tensor& t) const;             // product of the shape (checked at open)
  std::span<const uint8_t> data(const Tensor& t) const;   // the tensor's bytes (empty if out of range)

  // Appends a tensor whose shape is `shape`; returns its index.
  uint32_t add_tensor(Tensor t, std::span<const int64_t> shape);
  // Stores a string that must outlive the parse (an unescaped JSON name); returns a stable view.
  std::string_view intern(std::string s);
  // After the parse: copies every tensor name into one block and points the names there (a
  // million names of a 94 MB header take ~20 MB; the header's pages can then be dropped).
  void pack_names();

  // Name lookup; build_index() after the tensors are final (it returns the first tensor whose name
  // an earlier tensor has, else kNone; the first of equal names is the one found). A parser that
  // builds it early (the duplicate check of a one-file model) leaves it for open_model, which builds
  // it unless has_index(); whatever reorders the tensors afterwards calls drop_index().
  // find() returns nullptr if absent. `threads` > 1 first-touches a new table's pages on that many
  // threads (the fill itself is one thread's).
  uint32_t build_index(int threads = 1);
  bool has_index() const;
  void drop_index();
  const Tensor* find(std::string_view name) const;
  // find() of a name whose hash_name() (name_set.hpp) is known, and the load of its slot started
  // early: a loop over many names that prefetches a few ahead waits for one miss at a time.
  const Tensor* find_hashed(std::string_view name, uint64_t hash) const;
  void prefetch_slot(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }
  const MetaEntry* find_meta(std::string_view key) const;

  uint64_t total_bytes() const;        // sum of nbytes over non-companion tensors
  uint64_t total_parameters() const;   // sum of elements over non-companion tensors

 private:
  std::deque<std::string> strings_;
  std::unique_ptr<char[]> names_;   // pack_names(): every tensor name, end to end
  std::vector<uint64_t> slots_;     // open-addressing hash: (hash tag << 32) | tensor index
  size_t indexed_ = 0;              // tensors.size() when the index was built
};

}   // namespace akview
