// The title bar of an opened model (title_bar.hpp).
#include "ui/tui/title_bar.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/formats/ollama.hpp"
#include "ui/text/format.hpp"
#include "ui/tui/canvas.hpp"

namespace akview::tui {
namespace {

std::vector<std::string_view> path_parts(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// An Ollama manifest lives at <store>/manifests/<host>/<namespace>/<model>/<tag>.
std::string ollama_identity(const Model& model) {
  for (const SourceFile& f : model.files) {
    if (f.role != "manifest") continue;
    const auto parts = path_parts(f.path);
    if (parts.size() < 5 || parts[parts.size() - 5] != "manifests") return {};
    OllamaName n;
    n.host = parts[parts.size() - 4];
    n.ns = parts[parts.size() - 3];
    n.model = parts[parts.size() - 2];
    n.tag = parts.back();
    return n.display();
  }
  return {};
}

// A Hugging Face cache keeps a repository in a folder `models--<org>--<name>`.
std::string hub_identity(std::string_view path) {
  for (std::string_view part : path_parts(path)) {
    if (!part.starts_with("models--") || part.size() <= 8) continue;
    std::string repo(part.substr(8));
    if (const size_t sep = repo.find("--"); sep != std::string::npos) repo.replace(sep, 2, "/");
    return repo;
  }
  return {};
}

// The home folder as `~`.
std::string home_short(const std::string& path) {
  const char* home = std::getenv("HOME");
  if (!home || !*home) return path;
  const std::string_view h(home);
  if (path.size() > h.size() && path.starts_with(h) && path[h.size()] == '/') return "~" + path.substr(h.size());
  return path;
}

}   // namespace

std::string model_identity(const Model& model) {
  if (std::string name = ollama_identity(model); !name.empty()) return name;
  if (std::string repo = hub_identity(model.path); !repo.empty()) return repo;
  const auto parts = path_parts(model.path);
  return parts.empty() ? model.path : std::string(parts.back());
}

std::string type_mix(const InfoReport& info) {
  std::string out;
  for (size_t k = 0; k < info.types.size() && k < 4; ++k) {
    const double pct =
        info.bytes ? 100.0 * static_cast<double>(info.types[k].bytes) / static_cast<double>(info.bytes) : 0;
    out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : " ", info.types[k].type, pct);
  }
  if (info.types.size() > 4) out += " …";
  return out;
}

std::string model_title(const ModelSession& s, int width, std::pair<int, int>* size_columns) {
  const InfoReport& info = s.info;
  uint64_t size = 0;
  for (const FileRow& f : info.files) size += f.size;
  const std::string identity = model_identity(s.model);
  std::string text = fmt::format(" {} │ {} tensor{} │ {} params", identity, info.tensors, info.tensors == 1 ? "" : "s",
                                 format_count(info.parameters));
  if (const std::string mix = type_mix(info); !mix.empty()) text += " │ " + mix;
  text += fmt::format(" │ {} │ ", info.format);
  const int size_at = display_width(text);
  text += format_bytes(size);
  if (size_columns) *size_columns = {size_at, display_width(text)};
  if (info.files.size() != 1) text += fmt::format(" in {} files", info.files.size());
  // The path last, in the room left (cut in the middle: its start and its file name both tell).
  const std::string path = home_short(info.path);
  const int room = width - display_width(text) - 3;
  if (path != identity && room >= 8) text += " │ " + elide_middle(path, room);
  return text;
}

}   // namespace akview::tui
