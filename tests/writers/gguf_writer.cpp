// The GGUF v3 fixture writer (FORMATS.md §2.1-2.5); see gguf_writer.hpp.
#include "tests/writers/gguf_writer.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/types.hpp"

namespace akview::testing {
namespace {

// Appends n bytes (resize + memcpy: GCC 12 -O3 reports false -Warray-bounds on vector::insert here).
void append(std::vector<uint8_t>& out, const void* p, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, p, n);
}

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  append(out, &v, sizeof(T));   // little-endian host
}

void put_string(std::vector<uint8_t>& out, std::string_view s, std::optional<uint64_t> claimed_len = {}) {
  put<uint64_t>(out, claimed_len.value_or(s.size()));
  append(out, s.data(), s.size());
}

template <typename T>
GgufValue scalar(uint32_t type, T v) {
  GgufValue out{type, {}};
  put(out.payload, v);
  return out;
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

bool write_all(int fd, const uint8_t* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}   // namespace

GgufValue gguf_u8(uint8_t v) { return scalar(kGgufU8, v); }
GgufValue gguf_i8(int8_t v) { return scalar(kGgufI8, v); }
GgufValue gguf_u16(uint16_t v) { return scalar(kGgufU16, v); }
GgufValue gguf_i16(int16_t v) { return scalar(kGgufI16, v); }
GgufValue gguf_u32(uint32_t v) { return scalar(kGgufU32, v); }
GgufValue gguf_i32(int32_t v) { return scalar(kGgufI32, v); }
GgufValue gguf_f32(float v) { return scalar(kGgufF32, v); }
GgufValue gguf_bool(bool v) { return scalar(kGgufBool, static_cast<uint8_t>(v)); }
GgufValue gguf_u64(uint64_t v) { return scalar(kGgufU64, v); }
GgufValue gguf_i64(int64_t v) { return scalar(kGgufI64, v); }
GgufValue gguf_f64(double v) { return scalar(kGgufF64, v); }

GgufValue gguf_string(std::string_view v) {
  GgufValue out{kGgufString, {}};
  put_string(out.payload, v);
  return out;
}

GgufValue gguf_string_raw(uint64_t claimed_len, std::string_view bytes) {
  GgufValue out{kGgufString, {}};
  put_string(out.payload, bytes, claimed_len);
  return out;
}

GgufValue gguf_array(uint32_t elem_type, const std::vector<GgufValue>& elems) {
  GgufValue out{kGgufArray, {}};
  put<uint32_t>(out.payload, elem_type);
  put<uint64_t>(out.payload, elems.size());
  for (const auto& e : elems) out.payload.insert(out.payload.end(), e.payload.begin(), e.payload.end());
  return out;
}

GgufValue gguf_array_raw(uint32_t elem_type, uint64_t count, std::vector<uint8_t> raw) {
  GgufValue out{kGgufArray, {}};
  put<uint32_t>(out.payload, elem_type);
  put<uint64_t>(out.payload, count);
  append(out.payload, raw.data(), raw.size());
  return out;
}

GgufWriter& GgufWriter::set(std::string key, GgufValue value) {
  for (auto& kv : kvs_)
    if (kv.first == key) {
      kv.second = std::move(value);
      return *this;
    }
  return add(std::move(key), std::move(value));
}

GgufWriter& GgufWriter::add(std::string key, GgufValue value) {
  kvs_.emplace_back(std::move(key), std::move(value));
  return *this;
}

GgufWriter& GgufWriter::remove(std::string_view key) {
  kvs_.erase(std::remove_if(kvs_.begin(), kvs_.end(), [&](const auto& kv) { return kv.first == key; }), kvs_.end());
  return *this;
}

GgufWriter& GgufWriter::set_alignment(uint32_t alignment) {
  options_.alignment = alignment;
  return set("general.alignment", gguf_u32(alignment));
}

GgufWriter& GgufWriter::add_tensor(GgufTensorSpec tensor) {
  tensors_.push_back(std::move(tensor));
  return *this;
}

uint64_t GgufWriter::tensor_bytes(const GgufTensorSpec& t) {
  if (!t.data.empty()) return t.data.size();
  auto type = type_from_ggml(t.ggml_type);
  if (!type) return 0;
  const TypeInfo& info = type_info(*type);
  uint64_t blocks = 1;   // (ne[0] / block) * ne[1] * ...; no dims: one element
  for (size_t d = 0; d < t.ne.size(); ++d)
    blocks *= static_cast<uint64_t>(d == 0 ? t.ne[0] / info.block_elems : t.ne[d]);
  return blocks * info.block_bytes;
}

std::vector<uint64_t> GgufWriter::data_offsets() const {
  std::vector<uint64_t> offsets;
  uint64_t at = 0;
  const uint64_t align = std::max<uint32_t>(options_.alignment, 1);
  for (const auto& t : tensors_) {
    offsets.push_back(at);
    at += align_up(tensor_bytes(t), align);
  }
  return offsets;
}

uint64_t GgufWriter::infos_end() const {
  uint64_t end = 24;
  for (const auto& [key, value] : kvs_) end += 8 + key.size() + 4 + value.payload.size();
  for (const auto& t : tensors_) end += 8 + t.name.size() + 4 + 8 * t.ne.size() + 4 + 8;
  return end;
}

std::vector<uint8_t> GgufWriter::header() const {
  std::vector<uint8_t> out;
  out.insert(out.end(), options_.magic.begin(), options_.magic.end());
  put<uint32_t>(out, options_.version);
  put<int64_t>(out, options_.n_tensors.value_or(static_cast<int64_t>(tensors_.size())));
  put<int64_t>(out, options_.n_kv.value_or(static_cast<int64_t>(kvs_.size())));
  for (const auto& [key, value] : kvs_) {
    put_string(out, key);
    put<uint32_t>(out, value.type);
    out.insert(out.end(), value.payload.begin(), value.payload.end());
  }
  const auto offsets = data_offsets();
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    put_string(out, t.name, t.name_len);
    put<uint32_t>(out, t.n_dims.value_or(static_cast<uint32_t>(t.ne.size())));
    for (int64_t d : t.ne) put<int64_t>(out, d);
    put<uint32_t>(out, t.ggml_type);
    put<uint64_t>(out, t.offset.value_or(offsets[i]));
  }
  if (!tensors_.empty()) out.resize(align_up(out.size(), std::max<uint32_t>(options_.alignment, 1)), 0);
  return out;
}

uint64_t GgufWriter::file_size() const {
  uint64_t size = header().size();
  const uint64_t align = std::max<uint32_t>(options_.alignment, 1);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const uint64_t n = tensor_bytes(tensors_[i]);
    size += i + 1 < tensors_.size() ? align_up(n, align) : n;   // no padding after the last tensor
  }
  return size;
}

std::vector<uint8_t> GgufWriter::bytes() const {
  std::vector<uint8_t> out = header();
  const uint64_t align = std::max<uint32_t>(options_.alignment, 1);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    const uint64_t n = tensor_bytes(t);
    if (!t.data.empty()) {
      out.insert(out.end(), t.data.begin(), t.data.end());   // tests pick the size
    } else {
      for (uint64_t j = 0; j < n; ++j) out.push_back(static_cast<uint8_t>((j * 31 + i * 7 + 1) & 0xff));
    }
    if (i + 1 < tensors_.size()) out.resize(out.size() + (align_up(n, align) - n), 0);
  }
  if (options_.truncate_to && *options_.truncate_to < out.size()) out.resize(*options_.truncate_to);
  return out;
}

bool GgufWriter::write(const std::string& path, bool sparse) const {
  // Replace rather than truncate: ext4 flushes a file truncated and rewritten in place on close.
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok;
  if (sparse) {
    const std::vector<uint8_t> h = header();
    uint64_t size = file_size();
    if (options_.truncate_to) size = std::min(size, *options_.truncate_to);
    ok = write_all(fd, h.data(), std::min<uint64_t>(h.size(), size)) && ::ftruncate(fd, static_cast<off_t>(size)) == 0;
  } else {
    const std::vector<uint8_t> b = bytes();
    ok = write_all(fd, b.data(), b.size());
  }
  return ::close(fd) == 0 && ok;
}

std::vector<std::string> write_gguf_split(const std::string& dir, const std::string& base, uint32_t n_parts,
                                          const GgufWriter& model, const GgufSplitOptions& options) {
  std::vector<std::string> paths;
  const auto& tensors = model.tensors();
  const size_t per_part = (tensors.size() + n_parts - 1) / std::max<uint32_t>(n_parts, 1);
  for (uint32_t part = 1; part <= n_parts; ++part) {
    GgufWriter w;
    w.options() = model.options();
    if (part == 1)
      for (const auto& [key, value] : model.kvs()) w.add(key, value);
    else if (model.options().alignment != 32) w.set_alignment(model.options().alignment);
    w.set("split.no", gguf_u16(static_cast<uint16_t>(part - 1)));
    w.set("split.count", gguf_u16(static_cast<uint16_t>(n_parts)));
    w.set("split.tensors.count", gguf_i32(static_cast<int32_t>(tensors.size())));
    const size_t begin = std::min(tensors.size(), (part - 1) * per_part);
    const size_t end = std::min(tensors.size(), part * per_part);
    for (size_t i = begin; i < end; ++i) w.add_tensor(tensors[i]);
    if (options.tweak) options.tweak(part, w);
    const std::string path = fmt::format("{}/{}-{:05d}-of-{:05d}.gguf", dir, base, part, n_parts);
    if (!w.write(path)) return {};
    paths.push_back(path);
  }
  return paths;
}

}   // namespace akview::testing
