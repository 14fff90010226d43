// The table of formats, tried in order: content decides; the file extension is only a tie-breaker
// when the content is too short or too broken to tell (so a broken .gguf gets GGUF's error).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

#include <fmt/format.h>

#include "core/formats/format.hpp"
#include "core/formats/gguf.hpp"
#include "core/formats/mlx.hpp"
#include "core/formats/ollama.hpp"
#include "core/formats/pytorch.hpp"
#include "core/formats/recognised.hpp"
#include "core/formats/safetensors.hpp"

namespace akview {

bool Probe::has_entry(std::string_view name) const { return std::binary_search(entries.begin(), entries.end(), name); }

namespace {

constexpr uint64_t kHeadBytes = 4096;   // Probe::head: enough for every sniffer's magic and first JSON bytes

constexpr std::array kFormats = {
    FormatEntry{"gguf", "GGUF file (v2/v3), or one part of a split set", sniff_gguf, open_gguf},
    FormatEntry{"safetensors", "SafeTensors file", sniff_safetensors, open_safetensors},
    FormatEntry{"pytorch-zip", "PyTorch zip checkpoint (torch.save)", sniff_pytorch_zip, open_pytorch_zip},
    FormatEntry{"pytorch-legacy", "PyTorch legacy pickle checkpoint", sniff_pytorch_legacy, open_pytorch_legacy},
    FormatEntry{"ollama-manifest", "Ollama manifest", sniff_ollama_manifest, open_ollama_manifest},
    FormatEntry{"ollama-store", "Ollama models folder (manifests/ + blobs/)", sniff_ollama_store, open_ollama_store},
    FormatEntry{"mlx", "MLX quantized model directory (config.json with quantization)", sniff_mlx_dir, open_mlx_dir},
    FormatEntry{"safetensors-dir", "directory with model.safetensors or model.safetensors.index.json",
                sniff_safetensors_dir, open_safetensors_dir},
    FormatEntry{"gguf-dir", "directory with .gguf files", sniff_gguf_dir, open_gguf_dir},
};

std::string hex_head(const Probe& p) {
  std::string s;
  for (size_t i = 0; i < std::min<size_t>(p.head.size(), 8); ++i) s += fmt::format("{}{:02x}", i ? " " : "", p.head[i]);
  return s;
}

}   // namespace

std::span<const FormatEntry> format_table() { return kFormats; }

Result<Probe> probe_path(const std::string& path) {
  Probe p;
  p.path = path;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return make_error(ErrorCode::io, path, kNoOffset, fmt::format("cannot open: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) {
    p.is_dir = true;
    DIR* d = opendir(path.c_str());
    if (!d) return make_error(ErrorCode::io, path, kNoOffset, fmt::format("cannot list: {}", std::strerror(errno)));
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      p.entries.emplace_back(e->d_name);
    }
    closedir(d);
    std::sort(p.entries.begin(), p.entries.end());
    return p;
  }
  if (!S_ISREG(st.st_mode)) return make_error(ErrorCode::io, path, kNoOffset, "not a regular file or directory");
  p.size = static_cast<uint64_t>(st.st_size);
  AKV_TRY(prepare_file_read(path, 0, std::min<uint64_t>(p.size, kHeadBytes)));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::io, path, kNoOffset, fmt::format("cannot open: {}", std::strerror(errno)));
  p.head.resize(std::min<uint64_t>(p.size, kHeadBytes));
  ssize_t got = p.head.empty() ? 0 : pread(fd, p.head.data(), p.head.size(), 0);
  ::close(fd);
  if (got < 0) return make_error(ErrorCode::io, path, 0, fmt::format("cannot read: {}", std::strerror(errno)));
  p.head.resize(static_cast<size_t>(got));
  return p;
}

const FormatEntry* detect_format(const Probe& probe) {
  for (const auto& f : kFormats)
    if (f.sniff(probe)) return &f;
  return nullptr;
}

Probe probe_bytes(std::span<const uint8_t> bytes) {
  Probe p;
  p.size = bytes.size();
  const auto head = bytes.first(std::min<size_t>(bytes.size(), kHeadBytes));
  p.head.assign(head.begin(), head.end());
  return p;
}

Result<Model> open_one_model(const std::string& path, const OpenOptions& options) {
  auto probe = probe_path(path);
  if (!probe) {
    // Not a path: perhaps an Ollama `name:tag` in the models folder (FORMATS.md §4.1).
    if (auto manifest = resolve_ollama_reference(path)) probe = probe_path(*manifest);
    if (!probe) return std::move(probe).error();
  }
  if (const FormatEntry* found = detect_format(*probe)) {
    const FormatEntry& f = *found;
    if (!f.open)
      return make_error(ErrorCode::unsupported, path, kNoOffset,
                        fmt::format("recognised as {}, which akview does not open yet", f.description));
    auto model = f.open(*probe, options);
    if (model) {
      model->path = path;
      model->disk_path = path;
      if (!model->has_index()) model->build_index();
#ifndef NDEBUG
      for (const Tensor& t : model->tensors) assert(model->find(t.name) && model->find(t.name)->name == t.name);
#endif
    }
    return model;
  }
  if (probe->is_dir)
    return make_error(ErrorCode::not_recognized, path, kNoOffset,
                      "directory holds no model.safetensors, model.safetensors.index.json, *.gguf or Ollama store");
  if (probe->size == 0) return make_error(ErrorCode::not_recognized, path, 0, "empty file: not a weight file");
  return make_error(ErrorCode::not_recognized, path, 0,
                    fmt::format("not a known weight format (first bytes: {})", hex_head(*probe)));
}

}   // namespace akview
