// The symbolic pickle machine (FORMATS.md §5.4 opcodes, §5.5 allowlist, §5.6 algorithm).
// Each opcode is one row of kOpcodes; each allowed global is one row of kAllowedGlobals.
// Sizes are bounded: bytes, stack, memo, values and tensors are capped, and every length is checked against
// the bytes that remain before anything is allocated.
#include "core/formats/pickle_vm.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "core/byte_reader.hpp"
#include "core/checked.hpp"

namespace akview {
namespace {

using GK = GlobalKind;
// torch's weights-only allowlist (_get_allowed_globals), reduced to what a state_dict needs plus
// the harmless rest as opaque tokens. Element sizes from the dtypes (FORMATS.md §5.3 table).
constexpr std::array kAllowedGlobals = {
    AllowedGlobal{"collections", "OrderedDict", GK::ordered_dict},
    AllowedGlobal{"collections", "Counter", GK::counter},
    AllowedGlobal{"torch._utils", "_rebuild_tensor", GK::rebuild_tensor_v2},
    AllowedGlobal{"torch._utils", "_rebuild_tensor_v2", GK::rebuild_tensor_v2},
    AllowedGlobal{"torch._utils", "_rebuild_tensor_v3", GK::rebuild_tensor_v3},
    AllowedGlobal{"torch._utils", "_rebuild_parameter", GK::rebuild_parameter},
    AllowedGlobal{"torch._utils", "_rebuild_parameter_with_state", GK::rebuild_parameter_with_state},
    AllowedGlobal{"torch._tensor", "_rebuild_from_type_v2", GK::opaque},
    AllowedGlobal{"torch._utils", "_rebuild_qtensor", GK::opaque},
    AllowedGlobal{"torch._utils", "_rebuild_sparse_tensor", GK::opaque},
    AllowedGlobal{"torch._utils", "_rebuild_meta_tensor_no_storage", GK::opaque},
    AllowedGlobal{"torch._utils", "_rebuild_wrapper_subclass", GK::opaque},
    AllowedGlobal{"torch._utils", "_rebuild_device_tensor_from_numpy", GK::opaque},
    AllowedGlobal{"torch._utils", "_rebuild_device_tensor_from_cpu_tensor", GK::opaque},
    AllowedGlobal{"torch.nn.parameter", "Parameter", GK::parameter_class},
    AllowedGlobal{"torch.serialization", "_get_layout", GK::opaque},
    AllowedGlobal{"torch", "Size", GK::torch_size},
    AllowedGlobal{"torch", "Tensor", GK::opaque},
    AllowedGlobal{"torch", "device", GK::opaque},
    AllowedGlobal{"_codecs", "encode", GK::codecs_encode},
    AllowedGlobal{"builtins", "bytearray", GK::opaque},
    AllowedGlobal{"builtins", "set", GK::opaque},
    AllowedGlobal{"builtins", "complex", GK::opaque},
    AllowedGlobal{"torch", "per_tensor_affine", GK::opaque},
    AllowedGlobal{"torch", "per_tensor_symmetric", GK::opaque},
    AllowedGlobal{"torch", "per_channel_affine", GK::opaque},
    AllowedGlobal{"torch", "per_channel_symmetric", GK::opaque},
    AllowedGlobal{"torch", "per_channel_affine_float_qparams", GK::opaque},
    // storage classes (legacy typed storages carry the dtype; UntypedStorage counts bytes)
    AllowedGlobal{"torch", "DoubleStorage", GK::storage_class, TypeId::f64, 8},
    AllowedGlobal{"torch", "FloatStorage", GK::storage_class, TypeId::f32, 4},
    AllowedGlobal{"torch", "HalfStorage", GK::storage_class, TypeId::f16, 2},
    AllowedGlobal{"torch", "BFloat16Storage", GK::storage_class, TypeId::bf16, 2},
    AllowedGlobal{"torch", "LongStorage", GK::storage_class, TypeId::i64, 8},
    AllowedGlobal{"torch", "IntStorage", GK::storage_class, TypeId::i32, 4},
    AllowedGlobal{"torch", "ShortStorage", GK::storage_class, TypeId::i16, 2},
    AllowedGlobal{"torch", "CharStorage", GK::storage_class, TypeId::i8, 1},
    AllowedGlobal{"torch", "ByteStorage", GK::storage_class, TypeId::u8, 1},
    AllowedGlobal{"torch", "BoolStorage", GK::storage_class, TypeId::boolean, 1},
    AllowedGlobal{"torch", "ComplexFloatStorage", GK::storage_class, TypeId::c64, 8},
    AllowedGlobal{"torch", "ComplexDoubleStorage", GK::storage_class, TypeId::c128, 16},
    AllowedGlobal{"torch", "QInt8Storage", GK::storage_class, TypeId::i8, 1},
    AllowedGlobal{"torch", "QUInt8Storage", GK::storage_class, TypeId::u8, 1},
    AllowedGlobal{"torch", "QInt32Storage", GK::storage_class, TypeId::i32, 4},
    AllowedGlobal{"torch", "QUInt4x2Storage", GK::storage_class, TypeId::u8, 1},
    AllowedGlobal{"torch", "QUInt2x4Storage", GK::storage_class, TypeId::u8, 1},
    AllowedGlobal{"torch", "UntypedStorage", GK::storage_class, TypeId::u8, 1},
    AllowedGlobal{"torch.storage", "UntypedStorage", GK::storage_class, TypeId::u8, 1},
    // dtypes (str(dtype) spelling); elem_bytes 0 marks dtypes akview has no element type for
    AllowedGlobal{"torch", "float64", GK::dtype, TypeId::f64, 8},
    AllowedGlobal{"torch", "float32", GK::dtype, TypeId::f32, 4},
    AllowedGlobal{"torch", "float16", GK::dtype, TypeId::f16, 2},
    AllowedGlobal{"torch", "bfloat16", GK::dtype, TypeId::bf16, 2},
    AllowedGlobal{"torch", "int64", GK::dtype, TypeId::i64, 8},
    AllowedGlobal{"torch", "int32", GK::dtype, TypeId::i32, 4},
    AllowedGlobal{"torch", "int16", GK::dtype, TypeId::i16, 2},
    AllowedGlobal{"torch", "int8", GK::dtype, TypeId::i8, 1},
    AllowedGlobal{"torch", "uint8", GK::dtype, TypeId::u8, 1},
    AllowedGlobal{"torch", "uint16", GK::dtype, TypeId::u16, 2},
    AllowedGlobal{"torch", "uint32", GK::dtype, TypeId::u32, 4},
    AllowedGlobal{"torch", "uint64", GK::dtype, TypeId::u64, 8},
    AllowedGlobal{"torch", "bool", GK::dtype, TypeId::boolean, 1},
    AllowedGlobal{"torch", "complex64", GK::dtype, TypeId::c64, 8},
    AllowedGlobal{"torch", "complex128", GK::dtype, TypeId::c128, 16},
    AllowedGlobal{"torch", "float8_e4m3fn", GK::dtype, TypeId::f8_e4m3, 1},
    AllowedGlobal{"torch", "float8_e5m2", GK::dtype, TypeId::f8_e5m2, 1},
    AllowedGlobal{"torch", "float8_e4m3fnuz", GK::dtype, TypeId::f8_e4m3fnuz, 1},
    AllowedGlobal{"torch", "float8_e5m2fnuz", GK::dtype, TypeId::f8_e5m2fnuz, 1},
    AllowedGlobal{"torch", "float8_e8m0fnu", GK::dtype, TypeId::f8_e8m0, 1},
    AllowedGlobal{"torch", "complex32", GK::dtype, TypeId::u8, 0},
    AllowedGlobal{"torch", "qint8", GK::dtype, TypeId::i8, 0},
    AllowedGlobal{"torch", "quint8", GK::dtype, TypeId::u8, 0},
    AllowedGlobal{"torch", "qint32", GK::dtype, TypeId::i32, 0},
    AllowedGlobal{"torch", "quint4x2", GK::dtype, TypeId::u8, 0},
    AllowedGlobal{"torch", "quint2x4", GK::dtype, TypeId::u8, 0},
};

// Python 2 module names that Python 3's unpickler renames before lookup (_compat_pickle).
struct ModuleAlias {
  std::string_view from, to;
};
constexpr std::array kModuleAliases = {
    ModuleAlias{"__builtin__", "builtins"},
    ModuleAlias{"copy_reg", "copyreg"},
};

constexpr size_t kMaxStack = 1 << 20;
constexpr size_t kMaxMemo = 1 << 22;
constexpr size_t kMaxValues = 1 << 26;
constexpr size_t kMaxGlobalChars = 512;
constexpr size_t kMaxDims = 64;
// Tensors one pickle may build (rebuilds and Parameters): far above any checkpoint (thousands), and
// refused before the per-tensor records (shape, stride) grow without bound.
constexpr size_t kMaxTensors = size_t{1} << 20;
// Bytes of one pickle (a data.pkl, a legacy checkpoint's main pickle): checkpoints hold megabytes at
// most; a stream of ops that neither stops nor grows the stack (MEMOIZE after MEMOIZE) ends here.
constexpr uint64_t kMaxPickleBytes = uint64_t{1} << 28;

std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\'') out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

PyValue value_of(PyKind kind) {
  PyValue v;
  v.kind = kind;
  return v;
}

class Vm;
using Handler = Status (Vm::*)();

struct Opcode {
  uint8_t byte;
  std::string_view name;
  Handler run;
};

class Vm {
 public:
  Vm(std::span<const uint8_t> bytes, std::string_view file, uint64_t base, PersistentIds pids)
      : r_(bytes, file, base), file_(file), pids_(pids) {}

  Result<PickleResult> run();

  // opcode handlers (kOpcodes rows)
  Status op_proto() {
    r_.u8("protocol");
    return ok();
  }
  Status op_frame() {
    uint64_t n = r_.u64("frame length");
    if (r_.ok() && n > r_.remaining())
      return err(ErrorCode::truncated, op_at_, "pickle frame runs past the end of the data");
    return ok();
  }
  Status op_mark() {
    if (marks_.size() >= kMaxStack)
      return err(ErrorCode::count_too_large, op_at_, fmt::format("more pickle marks than the cap of {}", kMaxStack));
    marks_.push_back(stack_.size());
    return ok();
  }
  Status op_none() { return push(value_of(PyKind::none)); }
  Status op_true() { return push_int(PyKind::boolean, 1); }
  Status op_false() { return push_int(PyKind::boolean, 0); }
  Status op_binint() { return push_int(PyKind::integer, static_cast<int32_t>(r_.u32("BININT"))); }
  Status op_binint1() { return push_int(PyKind::integer, r_.u8("BININT1")); }
  Status op_binint2() { return push_int(PyKind::integer, r_.u16("BININT2")); }
  Status op_long1() {
    uint8_t n = r_.u8("LONG1 length");
    auto b = r_.bytes(n, "LONG1 value");
    if (!r_.ok()) return r_.error();
    if (n > 8) {
      PyValue v = value_of(PyKind::big_integer);
      v.text.assign(reinterpret_cast<const char*>(b.data()), b.size());
      return push(std::move(v));
    }
    uint64_t u = 0;
    for (size_t i = 0; i < n; ++i) u |= uint64_t(b[i]) << (8 * i);
    if (n > 0 && n < 8 && (b[n - 1] & 0x80)) u |= ~uint64_t{0} << (8 * n);   // sign-extend
    return push_int(PyKind::integer, static_cast<int64_t>(u));
  }
  Status op_binfloat() {
    uint64_t be = r_.u64("BINFLOAT");
    PyValue v = value_of(PyKind::floating);
    v.floating = std::bit_cast<double>(__builtin_bswap64(be));
    return push(std::move(v));
  }
  Status op_binunicode() { return push_text(PyKind::string, r_.u32("BINUNICODE length")); }
  Status op_short_binunicode() { return push_text(PyKind::string, r_.u8("SHORT_BINUNICODE length")); }
  Status op_short_binstring() { return push_text(PyKind::string, r_.u8("SHORT_BINSTRING length")); }
  Status op_binbytes() { return push_text(PyKind::bytes, r_.u32("BINBYTES length")); }
  Status op_short_binbytes() { return push_text(PyKind::bytes, r_.u8("SHORT_BINBYTES length")); }
  Status op_empty_dict() { return push(value_of(PyKind::dict)); }
  Status op_empty_list() { return push(value_of(PyKind::list)); }
  Status op_empty_tuple() { return push(value_of(PyKind::tuple)); }
  Status op_empty_set() { return push(value_of(PyKind::object)); }
  Status op_tuple() {
    auto items = pop_mark();
    if (!items) return items.error();
    PyValue v = value_of(PyKind::tuple);
    v.items = std::move(*items);
    return push(std::move(v));
  }
  Status op_tuple1() { return tuple_n(1); }
  Status op_tuple2() { return tuple_n(2); }
  Status op_tuple3() { return tuple_n(3); }
  Status op_append() {
    if (stack_.size() < 2) return underflow();
    uint32_t item = pop();
    return extend_list(stack_.back(), {item});
  }
  Status op_appends() {
    auto items = pop_mark();
    if (!items) return items.error();
    if (stack_.empty()) return underflow();
    return extend_list(stack_.back(), *items);
  }
  Status op_setitem() {
    if (stack_.size() < 3) return underflow();
    uint32_t value = pop(), key = pop();
    return extend_dict(stack_.back(), {key, value});
  }
  Status op_setitems() {
    auto items = pop_mark();
    if (!items) return items.error();
    if (items->size() % 2 != 0) return err(ErrorCode::schema, op_at_, "SETITEMS with an odd number of items");
    if (stack_.empty()) return underflow();
    return extend_dict(stack_.back(), *items);
  }
  Status op_binput() { return memo_put(r_.u8("BINPUT index")); }
  Status op_long_binput() { return memo_put(r_.u32("LONG_BINPUT index")); }
  Status op_memoize() { return memo_put(static_cast<uint32_t>(memo_.size())); }
  Status op_binget() { return memo_get(r_.u8("BINGET index")); }
  Status op_long_binget() { return memo_get(r_.u32("LONG_BINGET index")); }
  Status op_global() {
    auto module = read_line("GLOBAL module");
    auto name = read_line("GLOBAL name");
    if (!r_.ok()) return r_.error();
    return push_global(module, name);
  }
  Status op_stack_global() {
    if (stack_.size() < 2) return underflow();
    uint32_t name = pop(), module = pop();
    if (values_[name].kind != PyKind::string || values_[module].kind != PyKind::string)
      return err(ErrorCode::schema, op_at_, "STACK_GLOBAL needs two strings");
    std::string m = values_[module].text, n = values_[name].text;
    return push_global(m, n);
  }
  Status op_binpersid();
  Status op_reduce();
  Status op_newobj();
  Status op_build() {
    if (stack_.size() < 2) return underflow();
    pop();   // the state: tensor set_() arguments or an OrderedDict's _metadata; not needed to list tensors
    return ok();
  }
  Status op_stop() {
    stopped_ = true;
    return ok();
  }

 private:
  Status ok() { return r_.ok() ? Status{} : Status{r_.error()}; }
  Status err(ErrorCode code, uint64_t at, std::string message) {
    return make_error(code, file_, at, std::move(message));
  }
  Status underflow() { return err(ErrorCode::schema, op_at_, "pickle stack underflow"); }

  Status push(PyValue v) {
    if (!r_.ok()) return r_.error();
    if (values_.size() >= kMaxValues)
      return err(ErrorCode::count_too_large, op_at_,
                 fmt::format("pickle holds more values than the cap of {}", kMaxValues));
    if (stack_.size() >= kMaxStack)
      return err(ErrorCode::count_too_large, op_at_,
                 fmt::format("pickle stack deeper than the cap of {} entries", kMaxStack));
    v.offset = op_at_;
    values_.push_back(std::move(v));
    stack_.push_back(static_cast<uint32_t>(values_.size() - 1));
    return ok();
  }
  Status push_int(PyKind kind, int64_t i) {
    PyValue v = value_of(kind);
    v.integer = i;
    return push(std::move(v));
  }
  Status push_text(PyKind kind, uint64_t n) {
    auto s = r_.chars(n, "pickle string");
    if (!r_.ok()) return r_.error();
    PyValue v = value_of(kind);
    v.text = std::string(s);
    return push(std::move(v));
  }
  uint32_t pop() {
    uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  Result<std::vector<uint32_t>> pop_mark() {
    if (marks_.empty())
      return make_error(ErrorCode::schema, file_, op_at_, "pickle opcode needs a MARK but none is set");
    size_t m = marks_.back();
    marks_.pop_back();
    if (m > stack_.size()) return make_error(ErrorCode::schema, file_, op_at_, "pickle MARK lies above the stack");
    std::vector<uint32_t> items(stack_.begin() + static_cast<ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  Status tuple_n(size_t n) {
    if (stack_.size() < n) return underflow();
    PyValue v = value_of(PyKind::tuple);
    v.items.assign(stack_.end() - static_cast<ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return push(std::move(v));
  }
  Status extend_list(uint32_t target, const std::vector<uint32_t>& items) {
    if (values_[target].kind != PyKind::list)
      return err(ErrorCode::refused, op_at_, "APPEND(S) on something that is not a list");
    auto& dst = values_[target].items;
    dst.insert(dst.end(), items.begin(), items.end());
    return ok();
  }
  Status extend_dict(uint32_t target, const std::vector<uint32_t>& items) {
    if (values_[target].kind != PyKind::dict)
      return err(ErrorCode::refused, op_at_, "SETITEM(S) on something that is not a dict");
    auto& dst = values_[target].items;
    dst.insert(dst.end(), items.begin(), items.end());
    return ok();
  }
  Status memo_put(uint32_t index) {
    if (!r_.ok()) return r_.error();
    if (stack_.empty()) return underflow();
    if (memo_.size() >= kMaxMemo && !memo_.count(index))
      return err(ErrorCode::count_too_large, op_at_,
                 fmt::format("pickle memo larger than the cap of {} entries", kMaxMemo));
    memo_[index] = stack_.back();
    return ok();
  }
  Status memo_get(uint32_t index) {
    if (!r_.ok()) return r_.error();
    auto it = memo_.find(index);
    if (it == memo_.end())
      return err(ErrorCode::schema, op_at_, fmt::format("pickle memo index {} was never stored", index));
    if (stack_.size() >= kMaxStack)
      return err(ErrorCode::count_too_large, op_at_,
                 fmt::format("pickle stack deeper than the cap of {} entries", kMaxStack));
    stack_.push_back(it->second);
    return ok();
  }
  std::string read_line(std::string_view what) {
    std::string s;
    while (r_.ok()) {
      uint8_t c = r_.u8(what);
      if (!r_.ok() || c == '\n') break;
      if (s.size() >= kMaxGlobalChars) {
        r_.fail(ErrorCode::schema, op_at_, "pickle GLOBAL name is too long");
        break;
      }
      s += static_cast<char>(c);
    }
    return s;
  }
  Status push_global(std::string module, const std::string& name) {
    for (const auto& a : kModuleAliases)
      if (module == a.from) module = std::string(a.to);
    for (size_t i = 0; i < kAllowedGlobals.size(); ++i) {
      if (kAllowedGlobals[i].module == module && kAllowedGlobals[i].name == name) {
        PyValue v = value_of(PyKind::global);
        v.index = static_cast<uint32_t>(i);
        return push(std::move(v));
      }
    }
    return err(ErrorCode::refused, op_at_,
               fmt::format("pickle global '{}.{}' is not allowed (only plain tensor data is read)", printable(module),
                           printable(name)));
  }
  const AllowedGlobal* global_of(uint32_t id) const {
    return values_[id].kind == PyKind::global ? &kAllowedGlobals[values_[id].index] : nullptr;
  }
  bool is_int(uint32_t id) const { return values_[id].kind == PyKind::integer || values_[id].kind == PyKind::boolean; }
  Result<std::vector<int64_t>> int_tuple(uint32_t id, std::string_view what) {
    const PyValue& v = values_[id];
    if (v.kind != PyKind::tuple && v.kind != PyKind::list)
      return make_error(ErrorCode::schema, file_, op_at_, fmt::format("tensor {} is not a tuple", what));
    if (v.items.size() > kMaxDims)
      return make_error(ErrorCode::too_many_dims, file_, op_at_,
                        fmt::format("tensor {} has {} dimensions", what, v.items.size()));
    std::vector<int64_t> out;
    for (uint32_t item : v.items) {
      if (!is_int(item) || values_[item].integer < 0)
        return make_error(ErrorCode::bad_shape, file_, op_at_,
                          fmt::format("tensor {} holds a value that is not a non-negative int", what));
      out.push_back(values_[item].integer);
    }
    return out;
  }
  Result<uint32_t> rebuild_tensor(const std::vector<uint32_t>& args, bool v3);
  Result<uint32_t> rebuild_parameter(const std::vector<uint32_t>& args);
  Result<uint32_t> call(const AllowedGlobal& g, uint32_t callable, const std::vector<uint32_t>& args);
  Status push_existing(uint32_t id) {
    if (stack_.size() >= kMaxStack)
      return err(ErrorCode::count_too_large, op_at_,
                 fmt::format("pickle stack deeper than the cap of {} entries", kMaxStack));
    stack_.push_back(id);
    return ok();
  }

  ByteReader r_;
  std::string_view file_;
  PersistentIds pids_;
  uint64_t op_at_ = 0;
  bool stopped_ = false;
  std::vector<PyValue> values_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, uint32_t> memo_;
  std::vector<PickleStorage> storages_;
  std::unordered_map<std::string, uint32_t> storage_by_key_;
  std::vector<PickleTensor> tensors_;

  friend struct OpcodeTable;
};

// The opcodes of FORMATS.md §5.4 that torch's weights-only unpickler accepts, plus protocol 4's
// FRAME / SHORT_BINUNICODE / MEMOIZE / STACK_GLOBAL and the byte-string opcodes (plain data).
// Every other byte (INST, OBJ, NEWOBJ_EX, PERSID, EXT*, the text-mode opcodes ...) is refused.
const std::array kOpcodes = {
    Opcode{0x80, "PROTO", &Vm::op_proto},
    Opcode{0x95, "FRAME", &Vm::op_frame},
    Opcode{0x2e, "STOP", &Vm::op_stop},
    Opcode{0x28, "MARK", &Vm::op_mark},
    Opcode{0x63, "GLOBAL", &Vm::op_global},
    Opcode{0x93, "STACK_GLOBAL", &Vm::op_stack_global},
    Opcode{0x51, "BINPERSID", &Vm::op_binpersid},
    Opcode{0x52, "REDUCE", &Vm::op_reduce},
    Opcode{0x62, "BUILD", &Vm::op_build},
    Opcode{0x81, "NEWOBJ", &Vm::op_newobj},
    Opcode{0x7d, "EMPTY_DICT", &Vm::op_empty_dict},
    Opcode{0x5d, "EMPTY_LIST", &Vm::op_empty_list},
    Opcode{0x29, "EMPTY_TUPLE", &Vm::op_empty_tuple},
    Opcode{0x8f, "EMPTY_SET", &Vm::op_empty_set},
    Opcode{0x74, "TUPLE", &Vm::op_tuple},
    Opcode{0x85, "TUPLE1", &Vm::op_tuple1},
    Opcode{0x86, "TUPLE2", &Vm::op_tuple2},
    Opcode{0x87, "TUPLE3", &Vm::op_tuple3},
    Opcode{0x61, "APPEND", &Vm::op_append},
    Opcode{0x65, "APPENDS", &Vm::op_appends},
    Opcode{0x73, "SETITEM", &Vm::op_setitem},
    Opcode{0x75, "SETITEMS", &Vm::op_setitems},
    Opcode{0x58, "BINUNICODE", &Vm::op_binunicode},
    Opcode{0x8c, "SHORT_BINUNICODE", &Vm::op_short_binunicode},
    Opcode{0x55, "SHORT_BINSTRING", &Vm::op_short_binstring},
    Opcode{0x42, "BINBYTES", &Vm::op_binbytes},
    Opcode{0x43, "SHORT_BINBYTES", &Vm::op_short_binbytes},
    Opcode{0x68, "BINGET", &Vm::op_binget},
    Opcode{0x6a, "LONG_BINGET", &Vm::op_long_binget},
    Opcode{0x71, "BINPUT", &Vm::op_binput},
    Opcode{0x72, "LONG_BINPUT", &Vm::op_long_binput},
    Opcode{0x94, "MEMOIZE", &Vm::op_memoize},
    Opcode{0x4e, "NONE", &Vm::op_none},
    Opcode{0x88, "NEWTRUE", &Vm::op_true},
    Opcode{0x89, "NEWFALSE", &Vm::op_false},
    Opcode{0x4a, "BININT", &Vm::op_binint},
    Opcode{0x4b, "BININT1", &Vm::op_binint1},
    Opcode{0x4d, "BININT2", &Vm::op_binint2},
    Opcode{0x8a, "LONG1", &Vm::op_long1},
    Opcode{0x47, "BINFLOAT", &Vm::op_binfloat},
};

// Byte -> row of kOpcodes (or -1), built once from the table.
const std::array<int8_t, 256>& opcode_index() {
  static const auto table = [] {
    std::array<int8_t, 256> t;
    t.fill(-1);
    for (size_t i = 0; i < kOpcodes.size(); ++i) t[kOpcodes[i].byte] = static_cast<int8_t>(i);
    return t;
  }();
  return table;
}

Result<PickleResult> Vm::run() {
  const auto& index = opcode_index();
  while (!stopped_) {
    op_at_ = r_.file_offset();
    if (r_.pos() >= kMaxPickleBytes)
      return make_error(ErrorCode::header_too_large, file_, op_at_,
                        fmt::format("pickle runs past the cap of {} bytes without a STOP", kMaxPickleBytes));
    uint8_t byte = r_.u8("pickle opcode");
    if (!r_.ok()) return make_error(ErrorCode::truncated, file_, op_at_, "pickle ends without a STOP opcode");
    int row = index[byte];
    if (row < 0)
      return make_error(ErrorCode::refused, file_, op_at_,
                        fmt::format("pickle opcode 0x{:02x} is not allowed (only plain tensor data is read)", byte));
    Status s = (this->*kOpcodes[static_cast<size_t>(row)].run)();
    if (!s.ok()) return std::move(s).error();
  }
  if (stack_.empty()) return make_error(ErrorCode::schema, file_, op_at_, "pickle STOP with an empty stack");
  PickleResult out;
  out.root = stack_.back();
  out.end = r_.pos();
  out.values = std::move(values_);
  out.storages = std::move(storages_);
  out.tensors = std::move(tensors_);
  return out;
}

Status Vm::op_binpersid() {
  if (stack_.empty()) return underflow();
  uint32_t pid = pop();
  const PyValue& t = values_[pid];
  const size_t want = pids_ == PersistentIds::legacy_6_tuple ? 6 : 5;
  if (pids_ == PersistentIds::refuse)
    return err(ErrorCode::refused, op_at_, "persistent id where no storage may appear");
  if (t.kind != PyKind::tuple || t.items.size() != want || values_[t.items[0]].kind != PyKind::string ||
      values_[t.items[0]].text != "storage")
    return err(ErrorCode::refused, op_at_, fmt::format("persistent id is not a ('storage', ...) {}-tuple", want));
  const AllowedGlobal* cls = global_of(t.items[1]);
  if (!cls || cls->kind != GK::storage_class)
    return err(ErrorCode::schema, op_at_, "persistent id names no storage class");
  const PyValue& key = values_[t.items[2]];
  const PyValue& location = values_[t.items[3]];
  const PyValue& numel = values_[t.items[4]];
  if (key.kind != PyKind::string || location.kind != PyKind::string || numel.kind != PyKind::integer ||
      numel.integer < 0)
    return err(ErrorCode::schema, op_at_, "persistent id needs a key string, a location string and an element count");
  uint64_t view_offset = 0;
  if (want == 6) {
    const PyValue& view = values_[t.items[5]];
    if (view.kind == PyKind::tuple && view.items.size() == 3 && is_int(view.items[1]) &&
        values_[view.items[1]].integer >= 0)
      view_offset = static_cast<uint64_t>(values_[view.items[1]].integer);
    else if (view.kind != PyKind::none)
      return err(ErrorCode::schema, op_at_, "legacy storage view metadata is neither None nor (key, offset, size)");
  }
  uint32_t index;
  auto it = storage_by_key_.find(key.text);
  if (it != storage_by_key_.end()) {
    index = it->second;
  } else {
    PickleStorage s;
    s.key = key.text;
    s.location = location.text;
    s.global_row = values_[t.items[1]].index;
    s.numel = static_cast<uint64_t>(numel.integer);
    s.offset = op_at_;
    storages_.push_back(std::move(s));
    index = static_cast<uint32_t>(storages_.size() - 1);
    storage_by_key_.emplace(key.text, index);
  }
  PyValue v = value_of(PyKind::storage);
  v.index = index;
  v.integer = static_cast<int64_t>(view_offset);
  return push(std::move(v));
}

Result<uint32_t> Vm::rebuild_tensor(const std::vector<uint32_t>& args, bool v3) {
  const size_t min_args = v3 ? 7 : 4, max_args = v3 ? 8 : 7;
  if (args.size() < min_args || args.size() > max_args)
    return make_error(ErrorCode::schema, file_, op_at_, fmt::format("tensor rebuild with {} arguments", args.size()));
  const PyValue& storage = values_[args[0]];
  if (storage.kind != PyKind::storage)
    return make_error(ErrorCode::schema, file_, op_at_, "tensor rebuild without a storage");
  if (!is_int(args[1]) || values_[args[1]].integer < 0)
    return make_error(ErrorCode::schema, file_, op_at_, "tensor storage offset is not a non-negative int");
  if (tensors_.size() >= kMaxTensors)
    return make_error(ErrorCode::count_too_large, file_, op_at_,
                      fmt::format("pickle builds more tensors than the cap of {} tensors", kMaxTensors));
  PickleTensor t;
  t.storage = storage.index;
  t.offset = op_at_;
  auto size = int_tuple(args[2], "size");
  if (!size) return std::move(size).error();
  auto stride = int_tuple(args[3], "stride");
  if (!stride) return std::move(stride).error();
  if (size->size() != stride->size())
    return make_error(ErrorCode::bad_shape, file_, op_at_, "tensor size and stride have different lengths");
  t.size = std::move(*size);
  t.stride = std::move(*stride);
  if (args.size() > 4 && values_[args[4]].kind == PyKind::boolean) t.requires_grad = values_[args[4]].integer != 0;
  const AllowedGlobal& cls = kAllowedGlobals[storages_[t.storage].global_row];
  t.dtype = cls.dtype;
  t.elem_bytes = cls.elem_bytes;
  if (v3) {
    const AllowedGlobal* dt = global_of(args[6]);
    if (!dt || dt->kind != GK::dtype)
      return make_error(ErrorCode::schema, file_, op_at_, "_rebuild_tensor_v3 without a dtype");
    t.dtype = dt->dtype;
    t.elem_bytes = dt->elem_bytes;
  }
  // Storage offset in tensor elements; legacy views add their own element offset.
  auto off = checked_add(static_cast<uint64_t>(values_[args[1]].integer), static_cast<uint64_t>(storage.integer));
  if (!off) return make_error(ErrorCode::overflow, file_, op_at_, "tensor storage offset overflows");
  t.storage_offset = *off;
  tensors_.push_back(std::move(t));
  PyValue v = value_of(PyKind::tensor);
  v.index = static_cast<uint32_t>(tensors_.size() - 1);
  v.offset = op_at_;
  values_.push_back(std::move(v));
  return static_cast<uint32_t>(values_.size() - 1);
}

Result<uint32_t> Vm::rebuild_parameter(const std::vector<uint32_t>& args) {
  if (args.empty() || values_[args[0]].kind != PyKind::tensor)
    return make_error(ErrorCode::schema, file_, op_at_, "Parameter rebuild without a tensor");
  if (tensors_.size() >= kMaxTensors)
    return make_error(ErrorCode::count_too_large, file_, op_at_,
                      fmt::format("pickle builds more tensors than the cap of {} tensors", kMaxTensors));
  PickleTensor t = tensors_[values_[args[0]].index];
  t.is_parameter = true;
  t.requires_grad = args.size() > 1 && values_[args[1]].kind == PyKind::boolean && values_[args[1]].integer != 0;
  tensors_.push_back(std::move(t));
  PyValue v = value_of(PyKind::tensor);
  v.index = static_cast<uint32_t>(tensors_.size() - 1);
  v.offset = op_at_;
  values_.push_back(std::move(v));
  return static_cast<uint32_t>(values_.size() - 1);
}

// What an allowlisted callable "returns": computed symbolically from its row, never called.
Result<uint32_t> Vm::call(const AllowedGlobal& g, uint32_t callable, const std::vector<uint32_t>& args) {
  auto make = [&](PyValue v) -> uint32_t {
    v.offset = op_at_;
    values_.push_back(std::move(v));
    return static_cast<uint32_t>(values_.size() - 1);
  };
  switch (g.kind) {
    case GK::ordered_dict:
    case GK::counter: {
      PyValue d = value_of(PyKind::dict);
      if (!args.empty()) {
        const PyValue& pairs = values_[args[0]];
        if (pairs.kind == PyKind::dict) {
          d.items = pairs.items;
        } else if (pairs.kind == PyKind::list || pairs.kind == PyKind::tuple) {
          for (uint32_t p : pairs.items) {
            if (values_[p].kind != PyKind::tuple || values_[p].items.size() != 2)
              return make_error(ErrorCode::schema, file_, op_at_, "OrderedDict item is not a pair");
            d.items.push_back(values_[p].items[0]);
            d.items.push_back(values_[p].items[1]);
          }
        }
      }
      return make(std::move(d));
    }
    case GK::rebuild_tensor_v2: return rebuild_tensor(args, false);
    case GK::rebuild_tensor_v3: return rebuild_tensor(args, true);
    case GK::rebuild_parameter:
    case GK::rebuild_parameter_with_state:
    case GK::parameter_class: return rebuild_parameter(args);
    case GK::codecs_encode: {
      if (args.empty() || values_[args[0]].kind != PyKind::string)
        return make_error(ErrorCode::schema, file_, op_at_, "_codecs.encode without a string");
      // latin1: every code point below 256 becomes one byte (the text is UTF-8 here)
      PyValue b = value_of(PyKind::bytes);
      const std::string& s = values_[args[0]].text;
      for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) b.text += static_cast<char>(c);
        else if ((c & 0xe0) == 0xc0 && i + 1 < s.size())
          b.text += static_cast<char>(((c & 0x1f) << 6) | (s[++i] & 0x3f));
        else return make_error(ErrorCode::schema, file_, op_at_, "_codecs.encode of text outside latin1");
      }
      return make(std::move(b));
    }
    case GK::torch_size: {
      PyValue t = value_of(PyKind::tuple);
      if (!args.empty() && (values_[args[0]].kind == PyKind::tuple || values_[args[0]].kind == PyKind::list))
        t.items = values_[args[0]].items;
      return make(std::move(t));
    }
    case GK::storage_class:
    case GK::dtype:
    case GK::opaque: {
      PyValue o = value_of(PyKind::object);
      o.index = values_[callable].index;
      return make(std::move(o));
    }
  }
  return make_error(ErrorCode::refused, file_, op_at_, "call of an unknown allowlisted global");
}

Status Vm::op_reduce() {
  if (stack_.size() < 2) return underflow();
  uint32_t args_id = pop(), callable = pop();
  const AllowedGlobal* g = global_of(callable);
  if (!g) return err(ErrorCode::refused, op_at_, "REDUCE on something that is not an allowed global");
  if (values_[args_id].kind != PyKind::tuple) return err(ErrorCode::schema, op_at_, "REDUCE arguments are not a tuple");
  if (values_.size() >= kMaxValues)
    return err(ErrorCode::count_too_large, op_at_,
               fmt::format("pickle holds more values than the cap of {}", kMaxValues));
  std::vector<uint32_t> args = values_[args_id].items;
  auto made = call(*g, callable, args);
  if (!made) return std::move(made).error();
  return push_existing(*made);
}

Status Vm::op_newobj() {
  if (stack_.size() < 2) return underflow();
  uint32_t args_id = pop(), cls = pop();
  const AllowedGlobal* g = global_of(cls);
  if (!g) return err(ErrorCode::refused, op_at_, "NEWOBJ on something that is not an allowed class");
  if (values_[args_id].kind != PyKind::tuple) return err(ErrorCode::schema, op_at_, "NEWOBJ arguments are not a tuple");
  if (values_.size() >= kMaxValues)
    return err(ErrorCode::count_too_large, op_at_,
               fmt::format("pickle holds more values than the cap of {}", kMaxValues));
  std::vector<uint32_t> args = values_[args_id].items;
  auto made = call(*g, cls, args);
  if (!made) return std::move(made).error();
  return push_existing(*made);
}

}   // namespace

std::span<const AllowedGlobal> allowed_globals() { return kAllowedGlobals; }

Result<PickleResult> run_pickle(std::span<const uint8_t> bytes, std::string_view file, uint64_t base,
                                PersistentIds pids) {
  Vm vm(bytes, file, base, pids);
  return vm.run();
}

}   // namespace akview
