// Content sniffers for MLX directories, Ollama stores and manifests, and PyTorch checkpoints.
// FORMATS.md §3.5 (MLX config), §4.1-4.2 (Ollama), §5.1 (PyTorch magic bytes).
#include "core/formats/recognised.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace akview {
namespace {

bool head_starts_with(const Probe& p, std::string_view magic) {
  return p.head.size() >= magic.size() && std::memcmp(p.head.data(), magic.data(), magic.size()) == 0;
}

// Reads a small text file (at most `limit` bytes); empty on failure.
std::string read_small(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string s(limit, '\0');
  in.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

}   // namespace

bool sniff_pytorch_zip(const Probe& p) { return !p.is_dir && head_starts_with(p, "PK\x03\x04"); }

bool sniff_pytorch_legacy(const Probe& p) {
  static constexpr unsigned char kMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                             0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};
  return !p.is_dir && p.head.size() >= sizeof kMagic && std::memcmp(p.head.data(), kMagic, sizeof kMagic) == 0;
}

bool sniff_ollama_manifest(const Probe& p) {
  if (p.is_dir || p.head.empty() || p.head[0] != '{') return false;
  std::string_view text(reinterpret_cast<const char*>(p.head.data()), p.head.size());
  return text.find("\"schemaVersion\"") != std::string_view::npos && text.find("\"layers\"") != std::string_view::npos;
}

bool sniff_ollama_store(const Probe& p) { return p.is_dir && p.has_entry("manifests") && p.has_entry("blobs"); }

bool sniff_mlx_dir(const Probe& p) {
  if (!p.is_dir || !p.has_entry("config.json")) return false;
  std::string config = read_small(p.path + "/config.json", 1 << 20);
  return config.find("\"quantization\"") != std::string::npos ||
         config.find("\"quantization_config\"") != std::string::npos;
}

}   // namespace akview
