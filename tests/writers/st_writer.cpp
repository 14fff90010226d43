// The SafeTensors fixture writer: reference layout (FORMATS.md §1.6) and sharded sets (§1.7).
#include "tests/writers/st_writer.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace akview::testing {
namespace {

// Dtype declaration order of the reference enum ("MUST be in increasing alignment order").
constexpr std::array<std::string_view, 22> kDtypeOrder = {
    "BOOL", "F4",  "F6_E2M3", "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ",
    "I16",  "U16", "F16",     "BF16",    "I32", "U32", "F32",     "C64",     "F64",     "I64",         "U64"};

int dtype_rank(std::string_view dtype) {
  auto it = std::find(kDtypeOrder.begin(), kDtypeOrder.end(), dtype);
  return it == kDtypeOrder.end() ? -1 : static_cast<int>(it - kDtypeOrder.begin());
}

uint64_t tensor_bytes(const StTensor& t) { return t.bytes.empty() && t.nbytes ? *t.nbytes : t.bytes.size(); }

// JSON string escaping as serde_json does: quote, backslash and control characters; UTF-8 raw.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

bool write_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

struct Layout {
  std::vector<StTensor> ordered;
  std::string header;   // everything between the length prefix and the data
  uint64_t data_bytes = 0;
};

Layout plan(const std::vector<StTensor>& tensors, const StWriteOptions& options) {
  Layout l;
  l.ordered = options.sort ? sort_like_reference(tensors) : tensors;
  for (const auto& t : l.ordered) l.data_bytes += tensor_bytes(t);
  l.header =
      options.leading + (options.header ? *options.header : st_header_json(l.ordered, options)) + options.padding;
  if (options.pad)
    while (l.header.size() % 8 != 0) l.header += ' ';
  return l;
}

}   // namespace

std::vector<StTensor> sort_like_reference(std::vector<StTensor> tensors) {
  std::stable_sort(tensors.begin(), tensors.end(), [](const StTensor& a, const StTensor& b) {
    const int ra = dtype_rank(a.dtype), rb = dtype_rank(b.dtype);
    return ra != rb ? ra > rb : a.name < b.name;
  });
  return tensors;
}

std::string st_header_json(const std::vector<StTensor>& ordered, const StWriteOptions& options) {
  std::string out = "{";
  bool first = true;
  if (!options.metadata.empty()) {
    out += "\"__metadata__\":{";
    for (size_t i = 0; i < options.metadata.size(); ++i) {
      if (i) out += ',';
      append_json_string(out, options.metadata[i].first);
      out += ':';
      append_json_string(out, options.metadata[i].second);
    }
    out += '}';
    first = false;
  }
  uint64_t offset = 0;
  for (const auto& t : ordered) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, t.name);
    out += ":{\"dtype\":";
    append_json_string(out, t.dtype);
    out += ",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) out += fmt::format("{}{}", i ? "," : "", t.shape[i]);
    const uint64_t n = tensor_bytes(t);
    out += fmt::format("],\"data_offsets\":[{},{}]}}", offset, offset + n);
    offset += n;
  }
  out += '}';
  return out;
}

uint64_t st_data_bytes(const std::vector<StTensor>& tensors) {
  uint64_t sum = 0;
  for (const auto& t : tensors) sum += tensor_bytes(t);
  return sum;
}

std::vector<uint8_t> safetensors_bytes(const std::vector<StTensor>& tensors, const StWriteOptions& options) {
  const Layout l = plan(tensors, options);
  const uint64_t n = options.header_len ? *options.header_len : l.header.size();
  std::vector<uint8_t> out(8 + l.header.size() + l.data_bytes, 0);   // holes stay zero
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, l.header.data(), l.header.size());
  size_t at = 8 + l.header.size();
  for (const auto& t : l.ordered) {
    if (!t.bytes.empty()) std::memcpy(out.data() + at, t.bytes.data(), t.bytes.size());
    at += tensor_bytes(t);
  }
  out.resize(out.size() + options.extra_data_bytes, 0);
  out.resize(out.size() - std::min<uint64_t>(options.missing_data_bytes, out.size()));
  return out;
}

bool write_safetensors(const std::string& path, const std::vector<StTensor>& tensors, const StWriteOptions& options) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok;
  if (!options.sparse) {
    const auto bytes = safetensors_bytes(tensors, options);
    ok = write_all(fd, bytes.data(), bytes.size());
  } else {
    // Header only; the data section becomes a hole, so a 1 TB file costs no disk.
    const Layout l = plan(tensors, options);
    const uint64_t n = options.header_len ? *options.header_len : l.header.size();
    ok = write_all(fd, &n, 8) && write_all(fd, l.header.data(), l.header.size());
    const uint64_t total = 8 + l.header.size() + l.data_bytes + options.extra_data_bytes - options.missing_data_bytes;
    ok = ok && ::ftruncate(fd, static_cast<off_t>(total)) == 0;
  }
  return ::close(fd) == 0 && ok;
}

std::string st_index_json(const std::vector<std::pair<std::string, std::string>>& weight_map,
                          const StIndexOptions& options) {
  auto sorted = weight_map;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = "{\n  \"metadata\": {";
  bool first = true;
  auto sep = [&] {
    out += first ? "\n" : ",\n";
    first = false;
  };
  for (const auto& [key, raw] : options.extra_metadata) {
    sep();
    out += "    ";
    append_json_string(out, key);
    out += ": " + raw;
  }
  if (options.total_size) {
    sep();
    out += fmt::format("    \"total_size\": {}", *options.total_size);
  }
  out += first ? "},\n" : "\n  },\n";
  out += "  \"weight_map\": {";
  for (size_t i = 0; i < sorted.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    append_json_string(out, sorted[i].first);
    out += ": ";
    append_json_string(out, sorted[i].second);
  }
  out += sorted.empty() ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

bool write_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = write_all(fd, text.data(), text.size());
  return ::close(fd) == 0 && ok;
}

std::vector<std::string> write_sharded_safetensors(const std::string& dir,
                                                   const std::vector<std::vector<StTensor>>& shards,
                                                   const StWriteOptions& options) {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> weight_map;
  uint64_t total = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    names.push_back(fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size()));
    if (!write_safetensors(dir + "/" + names.back(), shards[i], options)) return {};
    for (const auto& t : shards[i]) weight_map.emplace_back(t.name, names.back());
    total += st_data_bytes(shards[i]);
  }
  StIndexOptions index;
  index.total_size = total;
  if (!write_text(dir + "/model.safetensors.index.json", st_index_json(weight_map, index))) return {};
  return names;
}

}   // namespace akview::testing
