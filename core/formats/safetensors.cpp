// The SafeTensors entries of the format table (safetensors.hpp): sniffers by content (the extension
// only breaks ties) and openers that pick the index or the one file and hand it down.
#include "core/formats/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/formats/safetensors_index.hpp"

namespace akview {
namespace {

constexpr uint64_t kLengthPrefixBytes = kSafetensorsPrefixBytes;
constexpr uint64_t kMaxHeaderBytes = kSafetensorsMaxHeaderBytes;
constexpr std::string_view kExtension = ".safetensors";

constexpr bool is_json_ws(uint8_t c) { return is_safetensors_json_ws(c); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}   // namespace

bool sniff_safetensors(const Probe& p) {
  if (p.is_dir) return false;
  if (is_safetensors_index_name(p.path)) return true;
  if (p.head.size() > kLengthPrefixBytes) {
    uint64_t n;
    std::memcpy(&n, p.head.data(), sizeof n);
    const uint8_t first = p.head[kLengthPrefixBytes];
    if (n >= 2 && n <= kMaxHeaderBytes && n <= p.size - kLengthPrefixBytes && (first == '{' || is_json_ws(first))) {
      size_t i = kLengthPrefixBytes;
      while (i < p.head.size() && is_json_ws(p.head[i])) ++i;
      if (i == p.head.size() || p.head[i] == '{') return true;
    }
  }
  // Too short or too broken to tell by content: a file named *.safetensors gets SafeTensors' precise
  // error, unless it carries another format's magic (zip, pickle) that a later sniffer will claim.
  if (!ends_with(p.path, kExtension)) return false;
  const bool zip = p.head.size() >= 4 && std::memcmp(p.head.data(), "PK\x03\x04", 4) == 0;
  const bool pickle = p.head.size() >= 2 && p.head[0] == 0x80 && p.head[1] >= 2 && p.head[1] <= 5;
  return !zip && !pickle;
}

bool sniff_safetensors_dir(const Probe& p) {
  if (!p.is_dir) return false;
  if (p.has_entry("model.safetensors.index.json") || p.has_entry("model.safetensors")) return true;
  return std::count_if(p.entries.begin(), p.entries.end(),
                       [](const std::string& e) { return ends_with(e, kExtension); }) == 1;
}

Result<Model> open_safetensors(const Probe& p, const OpenOptions& options) {
  if (is_safetensors_index_name(p.path)) return open_safetensors_index(p.path, options);
  Model model;
  model.format = "safetensors";
  auto added = add_safetensors_file(model, p.path, "model");
  if (!added) return std::move(added).error();
  return model;
}

Result<Model> open_safetensors_dir(const Probe& p, const OpenOptions& options) {
  const std::string dir = p.path.empty() || p.path.back() == '/' ? p.path : p.path + "/";
  if (p.has_entry("model.safetensors.index.json"))
    return open_safetensors_index(dir + "model.safetensors.index.json", options);
  std::string file = "model.safetensors";
  if (!p.has_entry(file)) {
    auto it =
        std::find_if(p.entries.begin(), p.entries.end(), [](const std::string& e) { return ends_with(e, kExtension); });
    if (it == p.entries.end())
      return make_error(ErrorCode::not_recognized, p.path, kNoOffset, "directory holds no .safetensors file");
    file = *it;
  }
  Model model;
  model.format = "safetensors";
  auto added = add_safetensors_file(model, dir + file, "model");
  if (!added) return std::move(added).error();
  return model;
}

}   // namespace akview
