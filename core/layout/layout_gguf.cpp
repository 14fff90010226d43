// GGUF layout (FORMATS.md §2.1): the fixed header, each key/value (key length, key, value type,
// value; an array as one region with its element type and count), each tensor info (name, dims,
// type, offset), the alignment padding, and the data section with each tensor's bytes and the
// padding after it. The header is walked again with gguf_meta's value reader (the parser keeps
// only each key's offset); tensor data comes from the parsed tensors. A file that did not open is
// walked as far as its header reads (walk_gguf_prefix): the keys and tensor infos before the failure.
//
//   0x00 magic | 0x04 u32 version | 0x08 i64 n_tensors | 0x10 i64 n_kv | KV... | INFO... | pad | data
#include <fmt/format.h>

#include "core/byte_reader.hpp"
#include "core/formats/gguf_meta.hpp"
#include "core/layout/layout_walkers.hpp"

namespace akview::layout {
namespace {

constexpr uint64_t kFixedHeaderBytes = 24;
constexpr uint32_t kDefaultAlignment = 32;

std::string render_value(const MetaValue& v) {
  switch (v.type) {
    case MetaType::string: return shorten(v.str);
    case MetaType::boolean: return v.num.u ? "true" : "false";
    case MetaType::f32:
    case MetaType::f64: return fmt::format("{}", v.num.f);
    case MetaType::i8:
    case MetaType::i16:
    case MetaType::i32:
    case MetaType::i64: return fmt::format("{}", v.num.i);
    case MetaType::array: return fmt::format("{} x {}", v.count, meta_type_name(v.elem_type));
    default: return fmt::format("{}", v.num.u);
  }
}

class GgufWalker {
 public:
  GgufWalker(const Model& model, uint32_t file_index, RegionWriter& w)
      : model_(&model),
        file_index_(file_index),
        path_(model.files[file_index].path),
        data_offset_(model.files[file_index].data_offset),
        bytes_(model.files[file_index].map.bytes()),
        w_(w),
        r_(bytes_, path_) {}
  // A file that did not open: no Model, the bytes alone.
  GgufWalker(std::span<const uint8_t> bytes, std::string_view path, RegionWriter& w)
      : path_(path), bytes_(bytes), w_(w), r_(bytes_, path_) {}

  // The regions up to the first item that cannot be read or that holds `failure_at` (where opening
  // failed; kNoOffset: nowhere known). Returns that item's offset and error, or the end of the
  // header and no error when every key and tensor info reads.
  std::pair<uint64_t, std::optional<Error>> run_prefix(uint64_t failure_at) {
    auto holds = [&](uint64_t at, uint64_t end) {
      return failure_at != kNoOffset && failure_at >= at && failure_at < end;
    };
    r_.skip(4, "magic");
    const uint32_t version = r_.u32("version");
    const int64_t n_tensors = r_.i64("tensor count");
    const int64_t n_kv = r_.i64("metadata count");
    if (!r_.ok()) return {0, r_.error()};
    if (holds(0, kFixedHeaderBytes)) return {0, std::nullopt};
    w_.emit(0, 0, kFixedHeaderBytes, RegionKind::header, "GGUF header", fmt::format("v{}", version));
    w_.emit(1, 0, 4, RegionKind::magic, "magic", "GGUF");
    w_.emit(1, 4, 4, RegionKind::version, "version", fmt::format("{}", version));
    w_.emit(1, 8, 8, RegionKind::count, "tensor count", fmt::format("{}", n_tensors));
    w_.emit(1, 16, 8, RegionKind::count, "key/value count", fmt::format("{}", n_kv));
    // Each section: measure the items that read (pass 1), emit the parent and them (pass 2).
    auto section = [&](int64_t n, RegionKind kind, std::string_view label, std::string_view noun,
                       auto read) -> std::pair<uint64_t, std::optional<Error>> {
      const uint64_t begin = r_.pos();
      int64_t ok = 0;
      std::optional<Error> error;
      uint64_t stop = begin;
      for (; ok < n; ++ok) {
        const uint64_t at = r_.pos();
        Status s = read(nullptr, static_cast<uint64_t>(ok));
        if (!s.ok() || holds(at, r_.pos())) {
          if (!s.ok()) error = s.error();
          stop = at;
          break;
        }
        stop = r_.pos();
      }
      if (ok > 0) {
        w_.emit(0, begin, stop - begin, kind, std::string(label), fmt::format("{} of {} {}", ok, n, noun));
        r_ = ByteReader(bytes_, path_);
        r_.seek(begin);
        for (int64_t i = 0; i < ok; ++i) (void)read(&w_, static_cast<uint64_t>(i));
      }
      r_ = ByteReader(bytes_, path_);
      r_.seek(stop);
      if (ok < n) return {stop, error ? error : std::optional<Error>(Error{})};
      return {stop, std::nullopt};
    };
    auto kv = section(n_kv, RegionKind::metadata, "key/values", "keys",
                      [&](RegionWriter* w, uint64_t) { return read_kv(w); });
    if (kv.second) return kv;
    auto infos = section(n_tensors, RegionKind::tensor_infos, "tensor infos", "tensors",
                         [&](RegionWriter* w, uint64_t i) { return read_info(w, i); });
    if (infos.second) return infos;
    return {infos.first, std::nullopt};
  }

  Status run() {
    r_.skip(4, "magic");
    const uint32_t version = r_.u32("version");
    const int64_t n_tensors = r_.i64("tensor count");
    const int64_t n_kv = r_.i64("metadata count");
    if (!r_.ok()) return r_.error();
    w_.emit(0, 0, kFixedHeaderBytes, RegionKind::header, "GGUF header", fmt::format("v{}", version));
    w_.emit(1, 0, 4, RegionKind::magic, "magic", "GGUF");
    w_.emit(1, 4, 4, RegionKind::version, "version", fmt::format("{}", version));
    w_.emit(1, 8, 8, RegionKind::count, "tensor count", fmt::format("{}", n_tensors));
    w_.emit(1, 16, 8, RegionKind::count, "key/value count", fmt::format("{}", n_kv));

    // Pass 1 measures the sections (parents come before their children); pass 2 emits.
    const uint64_t kv_begin = r_.pos();
    for (int64_t i = 0; i < n_kv && r_.ok(); ++i) AKV_TRY(read_kv(nullptr));
    const uint64_t kv_end = r_.pos();
    if (n_kv > 0) {
      w_.emit(0, kv_begin, kv_end - kv_begin, RegionKind::metadata, "key/values", fmt::format("{} keys", n_kv));
      r_.seek(kv_begin);
      for (int64_t i = 0; i < n_kv && !w_.stopped(); ++i) AKV_TRY(read_kv(&w_));
    }
    r_.seek(kv_end);
    for (int64_t i = 0; i < n_tensors && r_.ok(); ++i) AKV_TRY(read_info(nullptr, 0));
    const uint64_t infos_end = r_.pos();
    if (n_tensors > 0) {
      w_.emit(0, kv_end, infos_end - kv_end, RegionKind::tensor_infos, "tensor infos",
              fmt::format("{} tensors", n_tensors));
      r_.seek(kv_end);
      for (int64_t i = 0; i < n_tensors && !w_.stopped(); ++i) AKV_TRY(read_info(&w_, static_cast<uint64_t>(i)));
    }
    if (infos_end != model_->files[file_index_].header_bytes)
      return make_error(ErrorCode::schema, path_, infos_end,
                        "the header ends elsewhere than when the file was opened (was it rewritten?)");
    const uint64_t data_start = data_offset_;
    if (data_start > infos_end)
      w_.emit(0, infos_end, data_start - infos_end, RegionKind::padding, "alignment padding",
              fmt::format("{} bytes to a multiple of {}", data_start - infos_end, alignment()));
    if (bytes_.size() > data_start) emit_data(data_start);
    return {};
  }

 private:
  uint32_t alignment() const {
    for (const MetaEntry& m : model_->meta)
      if (m.file == file_index_ && m.key == "general.alignment" && m.value.type == MetaType::u32)
        return static_cast<uint32_t>(m.value.num.u);
    return kDefaultAlignment;
  }

  // One key/value; with a writer, its regions (the kv, then key length, key, type, value).
  Status read_kv(RegionWriter* w) {
    const uint64_t at = r_.pos();
    const uint64_t key_len = r_.u64("metadata key length");
    const std::string_view key = r_.chars(key_len, "metadata key");
    const uint32_t code = r_.u32("metadata value type");
    if (!r_.ok()) return r_.error();
    const GgufValueType* type = gguf_value_type(code);
    if (!type)
      return make_error(ErrorCode::unknown_type, path_, at + 8 + key_len, "value type is not a GGUF value type");
    const uint64_t value_at = r_.pos();
    MetaValue v;
    AKV_TRY(read_gguf_value(r_, type->type, 0, GgufValueContext{nullptr, "metadata value"}, v));
    if (!w) return {};
    const uint64_t end = r_.pos();
    const std::string label = shorten(key, 200);
    w->emit(1, at, end - at, RegionKind::kv, label, render_value(v));
    w->emit(2, at, 8, RegionKind::length, "key length", fmt::format("{}", key_len));
    w->emit(2, at + 8, key_len, RegionKind::key, "key", label);
    w->emit(2, value_at - 4, 4, RegionKind::value_type, "value type", std::string(meta_type_name(type->type)));
    if (type->type != MetaType::array) {
      w->emit(2, value_at, end - value_at, RegionKind::value, "value", render_value(v));
      return {};
    }
    w->emit(2, value_at, end - value_at, RegionKind::array, "array", render_value(v));
    w->emit(3, value_at, 4, RegionKind::value_type, "element type", std::string(meta_type_name(v.elem_type)));
    w->emit(3, value_at + 4, 8, RegionKind::count, "element count", fmt::format("{}", v.count));
    if (end > value_at + 12)
      w->emit(3, value_at + 12, end - value_at - 12, RegionKind::elements, "elements",
              fmt::format("{} x {}", v.count, meta_type_name(v.elem_type)));
    return {};
  }

  // One tensor info: name length, name, n_dims and dims, type, offset.
  Status read_info(RegionWriter* w, uint64_t index) {
    const uint64_t at = r_.pos();
    const uint64_t name_len = r_.u64("tensor name length");
    const std::string_view name = r_.chars(name_len, "tensor name");
    const uint32_t n_dims = r_.u32("tensor n_dims");
    if (!r_.ok()) return r_.error();
    if (n_dims > 4) return make_error(ErrorCode::too_many_dims, path_, at + 8 + name_len, "more than 4 dimensions");
    std::vector<int64_t> ne(n_dims);
    for (auto& d : ne) d = r_.i64("tensor dimension");
    const uint32_t type = r_.u32("tensor type");
    const uint64_t offset = r_.u64("tensor offset");
    if (!r_.ok()) return r_.error();
    if (!w) return {};
    const uint64_t end = r_.pos();
    const std::string label = shorten(name, 200);
    const auto info = type_from_ggml(type);
    const std::string type_name = info ? std::string(type_info(*info).name) : fmt::format("ggml type {}", type);
    w->emit(1, at, end - at, RegionKind::tensor_info, label,
            fmt::format("#{} {} ne [{}] @+{}", index, type_name, fmt::join(ne, ", "), offset));
    w->emit(2, at, 8, RegionKind::length, "name length", fmt::format("{}", name_len));
    w->emit(2, at + 8, name_len, RegionKind::name, "name", label);
    const uint64_t dims_at = at + 8 + name_len;
    w->emit(2, dims_at, 4 + 8 * uint64_t{n_dims}, RegionKind::dims, "dims",
            fmt::format("n_dims {}, ne [{}]", n_dims, fmt::join(ne, ", ")));
    w->emit(2, end - 12, 4, RegionKind::type, "type", fmt::format("{} ({})", type_name, type));
    w->emit(2, end - 8, 8, RegionKind::offset, "offset",
            model_ ? fmt::format("{} (absolute {:#x})", offset, data_offset_ + offset)
                   : fmt::format("{} in the data section", offset));
    return {};
  }

  void emit_data(uint64_t data_start) {
    const uint64_t end = bytes_.size();
    w_.emit(0, data_start, end - data_start, RegionKind::data, "data section",
            fmt::format("{} bytes", end - data_start));
    const uint32_t align = alignment();
    SpanCallbacks cb;
    cb.describe = [&](uint32_t id) { return describe_tensor(*model_, id); };
    cb.unclaimed = [&](uint64_t a, uint64_t b, uint8_t depth) {
      // ggml pads each tensor to the alignment: fewer than `align` bytes up to an aligned offset.
      const auto bytes = bytes_.subspan(a, b - a);
      bool zero = true;
      for (uint8_t c : bytes) zero = zero && c == 0;
      const bool padding = zero && b - a < align && ((b - data_start) % align == 0 || b == end);
      if (padding) return w_.emit(depth, a, b - a, RegionKind::padding, "padding", fmt::format("{} bytes", b - a));
      return w_.emit(depth, a, b - a, RegionKind::gap, "gap", fmt::format("{} bytes no tensor claims", b - a));
    };
    emit_spans(w_, 1, data_start, end, tensor_spans(*model_, file_index_), cb);
  }

  const Model* model_ = nullptr;   // null: a file that did not open
  uint32_t file_index_ = 0;
  std::string path_;
  uint64_t data_offset_ = 0;
  std::span<const uint8_t> bytes_;
  RegionWriter& w_;
  ByteReader r_;
};

}   // namespace

Status walk_gguf(const Model& model, uint32_t file_index, RegionWriter& writer) {
  return GgufWalker(model, file_index, writer).run();
}

std::pair<uint64_t, std::optional<Error>> walk_gguf_prefix(std::span<const uint8_t> bytes, std::string_view path,
                                                           uint64_t failure_at, RegionWriter& writer) {
  return GgufWalker(bytes, path, writer).run_prefix(failure_at);
}

}   // namespace akview::layout
