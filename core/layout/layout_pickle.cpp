// Pickle programs as regions (FORMATS.md §5.4): one region per opcode with its argument. The
// table gives each opcode's argument shape; it covers the opcodes the pickle machine accepts
// (pickle_vm.cpp), so any pickle of a model that opened can be laid out. Nothing is interpreted.
#include <array>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/layout/layout_walkers.hpp"

namespace akview::layout {
namespace {

enum class Arg : uint8_t {
  none,
  u8,          // one byte
  u16,         // 2 bytes LE
  u32,         // 4 bytes LE
  i32,         // 4 bytes LE, signed
  u64,         // 8 bytes LE (FRAME)
  f64_be,      // 8 bytes big-endian double (BINFLOAT)
  bytes_u8,    // u8 length + bytes
  bytes_u32,   // u32 length + bytes
  long_u8,     // u8 length + little-endian two's complement integer (LONG1)
  two_lines,   // "module\nname\n" (GLOBAL)
};

struct OpcodeRow {
  uint8_t byte;
  std::string_view name;
  Arg arg;
};
constexpr std::array kOpcodeArgs = {
    OpcodeRow{0x80, "PROTO", Arg::u8},
    OpcodeRow{0x95, "FRAME", Arg::u64},
    OpcodeRow{0x2e, "STOP", Arg::none},
    OpcodeRow{0x28, "MARK", Arg::none},
    OpcodeRow{0x63, "GLOBAL", Arg::two_lines},
    OpcodeRow{0x93, "STACK_GLOBAL", Arg::none},
    OpcodeRow{0x51, "BINPERSID", Arg::none},
    OpcodeRow{0x52, "REDUCE", Arg::none},
    OpcodeRow{0x62, "BUILD", Arg::none},
    OpcodeRow{0x81, "NEWOBJ", Arg::none},
    OpcodeRow{0x7d, "EMPTY_DICT", Arg::none},
    OpcodeRow{0x5d, "EMPTY_LIST", Arg::none},
    OpcodeRow{0x29, "EMPTY_TUPLE", Arg::none},
    OpcodeRow{0x8f, "EMPTY_SET", Arg::none},
    OpcodeRow{0x74, "TUPLE", Arg::none},
    OpcodeRow{0x85, "TUPLE1", Arg::none},
    OpcodeRow{0x86, "TUPLE2", Arg::none},
    OpcodeRow{0x87, "TUPLE3", Arg::none},
    OpcodeRow{0x61, "APPEND", Arg::none},
    OpcodeRow{0x65, "APPENDS", Arg::none},
    OpcodeRow{0x73, "SETITEM", Arg::none},
    OpcodeRow{0x75, "SETITEMS", Arg::none},
    OpcodeRow{0x58, "BINUNICODE", Arg::bytes_u32},
    OpcodeRow{0x8c, "SHORT_BINUNICODE", Arg::bytes_u8},
    OpcodeRow{0x55, "SHORT_BINSTRING", Arg::bytes_u8},
    OpcodeRow{0x42, "BINBYTES", Arg::bytes_u32},
    OpcodeRow{0x43, "SHORT_BINBYTES", Arg::bytes_u8},
    OpcodeRow{0x68, "BINGET", Arg::u8},
    OpcodeRow{0x6a, "LONG_BINGET", Arg::u32},
    OpcodeRow{0x71, "BINPUT", Arg::u8},
    OpcodeRow{0x72, "LONG_BINPUT", Arg::u32},
    OpcodeRow{0x94, "MEMOIZE", Arg::none},
    OpcodeRow{0x4e, "NONE", Arg::none},
    OpcodeRow{0x88, "NEWTRUE", Arg::none},
    OpcodeRow{0x89, "NEWFALSE", Arg::none},
    OpcodeRow{0x4a, "BININT", Arg::i32},
    OpcodeRow{0x4b, "BININT1", Arg::u8},
    OpcodeRow{0x4d, "BININT2", Arg::u16},
    OpcodeRow{0x8a, "LONG1", Arg::long_u8},
    OpcodeRow{0x47, "BINFLOAT", Arg::f64_be},
};

const OpcodeRow* find_opcode(uint8_t byte) {
  for (const auto& row : kOpcodeArgs)
    if (row.byte == byte) return &row;
  return nullptr;
}

struct Op {
  const OpcodeRow* row = nullptr;
  uint64_t size = 0;   // opcode byte + argument
  std::string value;
};

// Decodes the opcode at `at` (absolute) without reading past `limit`.
Result<Op> read_op(std::span<const uint8_t> file, std::string_view path, uint64_t at, uint64_t limit) {
  Op op;
  op.row = find_opcode(file[at]);
  if (!op.row)
    return make_error(ErrorCode::refused, path, at,
                      fmt::format("pickle opcode 0x{:02x} is not one akview reads", file[at]));
  const uint64_t arg = at + 1;
  auto need = [&](uint64_t n) -> Status {
    if (n > limit - arg)
      return make_error(ErrorCode::truncated, path, at, fmt::format("{} runs past the pickle", op.row->name));
    return {};
  };
  auto text = [&](uint64_t from, uint64_t n) {
    return shorten(std::string_view(reinterpret_cast<const char*>(file.data() + from), n));
  };
  switch (op.row->arg) {
    case Arg::none: op.size = 1; break;
    case Arg::u8:
      AKV_TRY(need(1));
      op.size = 2;
      op.value = fmt::format("{}", file[arg]);
      break;
    case Arg::u16:
      AKV_TRY(need(2));
      op.size = 3;
      op.value = fmt::format("{}", load_le(file, arg, 2));
      break;
    case Arg::u32:
      AKV_TRY(need(4));
      op.size = 5;
      op.value = fmt::format("{}", load_le(file, arg, 4));
      break;
    case Arg::i32:
      AKV_TRY(need(4));
      op.size = 5;
      op.value = fmt::format("{}", static_cast<int32_t>(load_le(file, arg, 4)));
      break;
    case Arg::u64:
      AKV_TRY(need(8));
      op.size = 9;
      op.value = fmt::format("{}", load_le(file, arg, 8));
      break;
    case Arg::f64_be: {
      AKV_TRY(need(8));
      uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = (bits << 8) | file[arg + i];
      op.size = 9;
      op.value = fmt::format("{}", std::bit_cast<double>(bits));
      break;
    }
    case Arg::bytes_u8:
    case Arg::long_u8: {
      AKV_TRY(need(1));
      const uint64_t n = file[arg];
      AKV_TRY(need(1 + n));
      op.size = 2 + n;
      if (op.row->arg == Arg::long_u8) {
        // Two's complement, little-endian: sign-extend from the top byte.
        const int shift = 64 - 8 * static_cast<int>(n);
        if (n == 0) op.value = "0";
        else if (n <= 8)
          op.value =
              fmt::format("{}", static_cast<int64_t>(load_le(file, arg + 1, static_cast<int>(n)) << shift) >> shift);
        else op.value = fmt::format("{}-byte integer", n);
      } else {
        op.value = text(arg + 1, n);
      }
      break;
    }
    case Arg::bytes_u32: {
      AKV_TRY(need(4));
      const uint64_t n = load_le(file, arg, 4);
      AKV_TRY(need(4 + n));
      op.size = 5 + n;
      op.value = text(arg + 4, n);
      break;
    }
    case Arg::two_lines: {
      uint64_t end = arg;
      int lines = 0;
      while (end < limit && lines < 2)
        if (file[end++] == '\n') ++lines;
      if (lines < 2) return make_error(ErrorCode::truncated, path, at, "GLOBAL runs past the pickle");
      op.size = end - at;
      std::string v = text(arg, end - arg - 1);
      for (char& c : v)
        if (c == '\n') c = '.';
      op.value = v;
      break;
    }
  }
  return op;
}

}   // namespace

Result<uint64_t> pickle_end(std::span<const uint8_t> file, std::string_view path, uint64_t begin, uint64_t limit) {
  for (uint64_t at = begin; at < limit;) {
    auto op = read_op(file, path, at, limit);
    if (!op) return op.error();
    at += op->size;
    if (op->row->byte == 0x2e) return at;
  }
  return make_error(ErrorCode::truncated, path, begin, "pickle has no STOP opcode");
}

Status walk_pickle_opcodes(std::span<const uint8_t> file, std::string_view path, uint64_t begin, uint64_t end,
                           uint8_t depth, RegionWriter& w) {
  uint64_t at = begin;
  while (at < end && !w.stopped()) {
    auto op = read_op(file, path, at, end);
    if (!op) return op.error();
    w.emit(depth, at, op->size, RegionKind::opcode, std::string(op->row->name), std::move(op->value));
    at += op->size;
    if (op->row->byte == 0x2e) break;
  }
  if (at < end && !w.stopped())
    w.emit(depth, at, end - at, RegionKind::gap, "after STOP", fmt::format("{} bytes", end - at));
  return {};
}

}   // namespace akview::layout
