// Split GGUF sets and directories of GGUF files (FORMATS.md §2.5). Each part is a complete GGUF
// file whose tensor offsets are relative to its own data section; the set is held together by the
// file names and the keys split.no (0-based), split.count and split.tensors.count (any integer type).
#include "core/formats/gguf_split.hpp"

#include <sys/stat.h>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "core/formats/gguf.hpp"
#include "core/formats/gguf_meta.hpp"

namespace akview {
namespace {

constexpr std::string_view kSplitNoKey = "split.no";
constexpr std::string_view kSplitCountKey = "split.count";
constexpr std::string_view kSplitTensorsKey = "split.tensors.count";
constexpr size_t kPartDigits = 5;   // "%05d": at least five digits

// Parses a run of >= 5 decimal digits that makes up all of `s`.
std::optional<uint32_t> parse_part_number(std::string_view s) {
  if (s.size() < kPartDigits) return std::nullopt;
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The entry of `key` that file `file` contributed, or nullptr.
const MetaEntry* find_file_meta(const Model& model, uint32_t file, std::string_view key) {
  for (const auto& m : model.meta)
    if (m.file == file && m.key == key) return &m;
  return nullptr;
}

struct SplitKeys {
  int64_t no = -1, count = -1, tensors = -1;
  uint64_t no_at = kNoOffset, count_at = kNoOffset, tensors_at = kNoOffset;
};

Result<SplitKeys> read_split_keys(const Model& model, uint32_t file) {
  SplitKeys keys;
  const std::string& path = model.files[file].path;
  struct Row {
    std::string_view key;
    int64_t* value;
    uint64_t* at;
  };
  for (const Row& row : {Row{kSplitNoKey, &keys.no, &keys.no_at}, Row{kSplitCountKey, &keys.count, &keys.count_at},
                         Row{kSplitTensorsKey, &keys.tensors, &keys.tensors_at}}) {
    const MetaEntry* e = find_file_meta(model, file, row.key);
    if (!e)
      return make_error(ErrorCode::shard_mismatch, path, kNoOffset,
                        fmt::format("part of a split set has no {} key", row.key));
    auto v = meta_integer(e->value);
    if (!v || *v < 0)
      return make_error(
          ErrorCode::schema, path, e->offset,
          fmt::format("{} must be a non-negative integer (it is {})", row.key, meta_type_name(e->value.type)));
    *row.value = *v;
    *row.at = e->offset;
  }
  return keys;
}

}   // namespace

std::optional<GgufSplitName> parse_gguf_split_name(std::string_view path) {
  constexpr std::string_view kExt = ".gguf", kOf = "-of-";
  auto slash = path.rfind('/');
  const std::string_view dir = slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1);
  std::string_view name = path.substr(dir.size());
  if (name.size() <= kExt.size() || name.substr(name.size() - kExt.size()) != kExt) return std::nullopt;
  name.remove_suffix(kExt.size());
  auto of = name.rfind(kOf);
  if (of == std::string_view::npos) return std::nullopt;
  auto count = parse_part_number(name.substr(of + kOf.size()));
  auto dash = name.substr(0, of).rfind('-');
  if (!count || dash == std::string_view::npos) return std::nullopt;
  auto part = parse_part_number(name.substr(dash + 1, of - dash - 1));
  if (!part || *part < 1 || *count < 1 || *part > *count) return std::nullopt;
  return GgufSplitName{std::string(dir), std::string(name.substr(0, dash)), *part, *count};
}

std::string gguf_split_path(const GgufSplitName& name, uint32_t part) {
  return fmt::format("{}{}-{:05d}-of-{:05d}.gguf", name.dir, name.base, part, name.count);
}

Result<Model> open_gguf_split(const GgufSplitName& name, const OpenOptions& options) {
  Model model;
  model.format = "gguf-split";
  const std::string set = fmt::format("split set '{}{}' ({} parts)", name.dir, name.base, name.count);
  // Every part must be there before any is parsed: a missing part is the likeliest problem.
  for (uint32_t part = 1; part <= name.count; ++part) {
    const std::string path = gguf_split_path(name, part);
    if (!file_exists(path))
      return make_error(ErrorCode::missing_file, path, kNoOffset, fmt::format("part {} of {} is missing", part, set));
  }
  std::optional<SplitKeys> first_keys;
  for (uint32_t part = 1; part <= name.count; ++part) {
    const std::string path = gguf_split_path(name, part);
    auto index = add_gguf_file(model, path, fmt::format("part {}/{}", part, name.count));
    if (!index) return std::move(index).error();
    auto keys = read_split_keys(model, *index);
    if (!keys) return std::move(keys).error();
    if (keys->no != part - 1)
      return make_error(
          ErrorCode::shard_mismatch, path, keys->no_at,
          fmt::format("split.no = {} (0-based), but the file name says part {} of {}", keys->no, part, name.count));
    if (keys->count != name.count)
      return make_error(ErrorCode::shard_mismatch, path, keys->count_at,
                        fmt::format("split.count = {}, but the file name says {} parts", keys->count, name.count));
    if (!first_keys) {
      first_keys = *keys;
    } else if (keys->tensors != first_keys->tensors) {
      return make_error(ErrorCode::shard_mismatch, path, keys->tensors_at,
                        fmt::format("split.tensors.count = {}, but '{}' says {}", keys->tensors, model.files[0].path,
                                    first_keys->tensors));
    }
    if (options.progress) options.progress(static_cast<double>(part) / name.count);
  }
  if (static_cast<uint64_t>(first_keys->tensors) != model.tensors.size())
    return make_error(ErrorCode::shard_mismatch, model.files[0].path, first_keys->tensors_at,
                      fmt::format("split.tensors.count = {}, but the {} parts hold {} tensors", first_keys->tensors,
                                  name.count, model.tensors.size()));
  return model;
}

bool sniff_gguf_dir(const Probe& probe) {
  if (!probe.is_dir) return false;
  for (const auto& e : probe.entries)
    if (e.size() > 5 && e.compare(e.size() - 5, 5, ".gguf") == 0) return true;
  return false;
}

Result<Model> open_gguf_dir(const Probe& probe, const OpenOptions& options) {
  const std::string dir = probe.path.empty() || probe.path.back() == '/' ? probe.path : probe.path + "/";
  // One model per single file, one per split set (keyed by base name and part count).
  std::map<std::string, std::string> models;   // key -> a path that opens it
  for (const auto& e : probe.entries) {
    if (e.size() <= 5 || e.compare(e.size() - 5, 5, ".gguf") != 0) continue;
    if (auto split = parse_gguf_split_name(e))
      models.emplace(fmt::format("{}-*-of-{:05d}.gguf", split->base, split->count), dir + e);
    else models.emplace(e, dir + e);
  }
  if (models.empty())
    return make_error(ErrorCode::not_recognized, probe.path, kNoOffset, "directory holds no .gguf file");
  if (models.size() > 1) {
    std::string list;
    for (const auto& [key, path] : models) list += (list.empty() ? "" : ", ") + key;
    return make_error(ErrorCode::usage, probe.path, kNoOffset,
                      fmt::format("directory holds {} GGUF models ({}); name the one to open", models.size(), list));
  }
  auto inner = probe_path(models.begin()->second);
  if (!inner) return std::move(inner).error();
  return open_gguf(*inner, options);
}

}   // namespace akview
