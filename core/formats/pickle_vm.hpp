// A symbolic pickle machine for PyTorch checkpoints (FORMATS.md §5.3-5.6): it reads the opcodes
// of §5.4 (plus FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL) into plain data and opaque tokens.
// Nothing is ever imported or called: a GLOBAL is looked up in a fixed allowlist table and any
// other global refuses the whole file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/types.hpp"

namespace akview {

enum class PyKind : uint8_t {
  none,
  boolean,
  integer,
  big_integer,
  floating,
  string,
  bytes,
  tuple,
  list,
  dict,
  global,    // an allowlisted global (`global_row` says which)
  storage,   // a persistent-id storage token (`index` into PickleResult::storages)
  tensor,    // a rebuilt tensor token (`index` into PickleResult::tensors)
  object,    // the result of an allowlisted call akview does not model (torch.device, a qtensor, ...)
};

struct PyValue {
  PyKind kind = PyKind::none;
  int64_t integer = 0;   // boolean / integer
  double floating = 0;
  std::string text;              // string (UTF-8), bytes, big_integer (LE two's complement bytes)
  std::vector<uint32_t> items;   // tuple/list: value ids; dict: key, value, key, value ...
  uint32_t index = 0;            // storage / tensor index, or global row
  uint64_t offset = 0;           // absolute file offset of the opcode that made it
};

// What a global means to the machine. The rows live in pickle_vm.cpp (kAllowedGlobals).
enum class GlobalKind : uint8_t {
  ordered_dict,
  counter,
  rebuild_tensor_v2,
  rebuild_tensor_v3,
  rebuild_parameter,
  rebuild_parameter_with_state,
  storage_class,
  dtype,
  codecs_encode,
  torch_size,
  parameter_class,
  opaque,
};

struct AllowedGlobal {
  std::string_view module;
  std::string_view name;
  GlobalKind kind;
  TypeId dtype = TypeId::u8;   // storage_class / dtype rows
  uint8_t elem_bytes = 0;      // storage_class / dtype rows (0: no element type akview reads)
};
std::span<const AllowedGlobal> allowed_globals();

struct PickleStorage {
  std::string key;            // zip: data/<key>; legacy: the key in the storage list
  std::string location;       // "cpu", "cuda:0", ...
  uint32_t global_row = 0;    // the storage class row
  uint64_t numel = 0;         // elements of the storage class dtype (bytes for UntypedStorage)
  uint64_t view_offset = 0;   // legacy view_metadata offset in elements (0 otherwise)
  uint64_t offset = 0;        // the BINPERSID opcode
};

struct PickleTensor {
  uint32_t storage = 0;
  TypeId dtype = TypeId::u8;
  uint8_t elem_bytes = 0;        // 0: dtype akview cannot read (quantized storages)
  uint64_t storage_offset = 0;   // elements
  std::vector<int64_t> size;
  std::vector<int64_t> stride;
  bool requires_grad = false;
  bool is_parameter = false;
  uint64_t offset = 0;   // the REDUCE opcode
};

struct PickleResult {
  std::vector<PyValue> values;
  uint32_t root = 0;
  std::vector<PickleStorage> storages;
  std::vector<PickleTensor> tensors;
  uint64_t end = 0;   // relative position just after STOP (legacy streams hold several pickles)
};

enum class PersistentIds : uint8_t {
  zip_5_tuple,      // ("storage", cls, key, location, numel)
  legacy_6_tuple,   // ("storage", cls, root_key, location, numel, view_metadata)
  refuse,           // no persistent ids allowed (the small legacy header pickles)
};

// Runs one pickle from the start of `bytes` to its STOP. `base` is the absolute offset of bytes[0].
Result<PickleResult> run_pickle(std::span<const uint8_t> bytes, std::string_view file, uint64_t base,
                                PersistentIds pids);

}   // namespace akview
