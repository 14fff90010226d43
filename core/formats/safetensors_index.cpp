// Sharded SafeTensors (FORMATS.md §1.7): model.safetensors.index.json is streamed with the pull
// parser (indexes reach tens of MB, so no DOM), each named shard is opened once, and the index and
// the shards must agree tensor by tensor. A total_size that disagrees is only a warning.
#include "core/formats/safetensors_index.hpp"

#include <sys/stat.h>
#include <algorithm>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/formats/safetensors_file.hpp"
#include "core/json_reader.hpp"
#include "core/name_set.hpp"
#include "core/quote.hpp"

namespace akview {
namespace {

struct WeightEntry {
  std::string_view name;   // tensor name (view into the index mapping, or interned)
  uint32_t shard = 0;      // index into IndexContents::shards
  uint64_t offset = 0;     // file offset of the name in the index
};

struct ShardRef {
  std::string_view name;   // file name as written in the index
  uint64_t offset = 0;     // where the index first names it
  uint32_t file = 0;       // index into Model::files once opened
};

struct IndexContents {
  std::vector<WeightEntry> entries;
  std::vector<ShardRef> shards;
  std::optional<uint64_t> total_size;
  uint64_t total_size_offset = kNoOffset;
};

class IndexParser {
 public:
  IndexParser(Model& model, uint32_t file_index)
      : model_(model),
        file_index_(file_index),
        path_(model.files[file_index].path),
        reader_(model.files[file_index].map.bytes(), path_) {}

  Result<IndexContents> run() {
    if (!parse()) return reader_.error();
    return std::move(out_);
  }

 private:
  std::string_view keep(const JsonToken& tok) { return tok.escaped ? model_.intern(std::string(tok.text)) : tok.text; }

  bool parse() {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind != JsonKind::object_begin)
      return reader_.fail(ErrorCode::schema, tok.offset,
                          fmt::format("the index must be a JSON object, found {}", json_kind_name(tok.kind)));
    bool seen_map = false, seen_meta = false;
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::object_end) break;
      const uint64_t at = tok.offset;
      if (tok.text == "weight_map") {
        if (seen_map) return reader_.fail(ErrorCode::duplicate_key, at, "the index has two 'weight_map' keys");
        seen_map = true;
        if (!parse_weight_map()) return false;
      } else if (tok.text == "metadata") {
        if (seen_meta) return reader_.fail(ErrorCode::duplicate_key, at, "the index has two 'metadata' keys");
        seen_meta = true;
        if (!parse_metadata()) return false;
      } else {
        if (!reader_.next(tok) || !reader_.skip_value(tok)) return false;
      }
    }
    if (!reader_.next(tok)) return false;
    if (!seen_map) return reader_.fail(ErrorCode::schema, 0, "the index has no 'weight_map'");
    return true;
  }

  bool parse_weight_map() {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind != JsonKind::object_begin)
      return reader_.fail(ErrorCode::schema, tok.offset,
                          fmt::format("'weight_map' must be an object, found {}", json_kind_name(tok.kind)));
    NameSet names, shard_names;
    auto name_of = [&](uint32_t i) { return out_.entries[i].name; };
    auto shard_of = [&](uint32_t i) { return out_.shards[i].name; };
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::object_end) return true;
      WeightEntry entry{keep(tok), 0, tok.offset};
      if (!reader_.next(tok)) return false;
      if (tok.kind != JsonKind::string)
        return reader_.fail(ErrorCode::schema, tok.offset,
                            fmt::format("weight_map entry {} must name a shard file, found {}", quote_name(entry.name),
                                        json_kind_name(tok.kind)));
      const std::string_view shard = keep(tok);
      const auto new_shard = static_cast<uint32_t>(out_.shards.size());
      uint32_t id = shard_names.insert(shard, new_shard, shard_of);
      if (id == NameSet::kAbsent) {
        out_.shards.push_back({shard, tok.offset, 0});
        id = new_shard;
      }
      entry.shard = id;
      out_.entries.push_back(entry);
      if (names.insert(entry.name, static_cast<uint32_t>(out_.entries.size() - 1), name_of) != NameSet::kAbsent)
        return reader_.fail(ErrorCode::duplicate_key, entry.offset,
                            fmt::format("weight_map names tensor {} twice", quote_name(entry.name)));
    }
  }

  // `metadata`: strings and numbers are kept typed; anything else as raw JSON text.
  bool parse_metadata() {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind == JsonKind::null) return true;
    if (tok.kind != JsonKind::object_begin)
      return reader_.fail(ErrorCode::schema, tok.offset,
                          fmt::format("'metadata' must be an object, found {}", json_kind_name(tok.kind)));
    for (;;) {
      if (!reader_.next(tok)) return false;
      if (tok.kind == JsonKind::object_end) return true;
      MetaEntry entry;
      entry.key = keep(tok);
      entry.offset = tok.offset;
      entry.file = file_index_;
      entry.source = "index";
      if (!reader_.next(tok)) return false;
      MetaValue& v = entry.value;
      switch (tok.kind) {
        case JsonKind::string:
          v.type = MetaType::string;
          v.str = keep(tok);
          break;
        case JsonKind::number:
          v.type = tok.num == JsonNumber::uint   ? MetaType::u64
                   : tok.num == JsonNumber::sint ? MetaType::i64
                                                 : MetaType::f64;
          if (tok.num == JsonNumber::uint) v.num.u = tok.u;
          else if (tok.num == JsonNumber::sint) v.num.i = tok.i;
          else v.num.f = tok.f;
          if (entry.key == "total_size" && tok.num == JsonNumber::uint) {
            out_.total_size = tok.u;
            out_.total_size_offset = tok.offset;
          }
          break;
        default: {
          const uint64_t start = tok.offset;
          if (!reader_.skip_value(tok)) return false;
          const auto bytes = model_.files[file_index_].map.bytes();
          v.type = MetaType::json;
          v.str = {reinterpret_cast<const char*>(bytes.data() + start), reader_.file_offset() - start};
        }
      }
      model_.meta.push_back(entry);
    }
  }

  Model& model_;
  uint32_t file_index_;
  std::string path_;
  JsonReader reader_;
  IndexContents out_;
};

constexpr std::string_view kIndexSuffix = ".safetensors.index.json";

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// File offset of a tensor's name in its header (the byte after the opening quote is name[0]).
uint64_t name_offset(const Model& model, const Tensor& t) {
  const auto bytes = model.files[t.file].map.bytes();
  const auto* p = reinterpret_cast<const uint8_t*>(t.name.data());
  if (p > bytes.data() && p < bytes.data() + bytes.size()) return static_cast<uint64_t>(p - bytes.data()) - 1;
  return kNoOffset;
}

// Every tensor of the index is in its named shard, and every shard tensor is in the index.
Status check_agreement(const Model& model, const IndexContents& index, const std::string& index_path) {
  NameSet names;
  names.reserve(index.entries.size());
  auto name_of = [&](uint32_t i) { return index.entries[i].name; };
  for (uint32_t i = 0; i < index.entries.size(); ++i) (void)names.insert(index.entries[i].name, i, name_of);
  std::vector<uint8_t> found(index.entries.size(), 0);
  std::vector<uint32_t> entry_of(model.tensors.size(), NameSet::kAbsent);
  for (uint32_t k = 0; k < model.tensors.size(); ++k) {
    const Tensor& t = model.tensors[k];
    const uint32_t e = names.find(t.name, name_of);
    entry_of[k] = e;
    if (e != NameSet::kAbsent && index.shards[index.entries[e].shard].file == t.file) found[e] = 1;
  }
  for (uint32_t k = 0; k < model.tensors.size(); ++k) {
    const Tensor& t = model.tensors[k];
    const std::string& shard_path = model.files[t.file].path;
    const uint32_t e = entry_of[k];
    if (e == NameSet::kAbsent)
      return make_error(
          ErrorCode::shard_mismatch, shard_path, name_offset(model, t),
          fmt::format("tensor {} is in this shard but not in the index {}", quote_name(t.name), index_path));
    const ShardRef& named = index.shards[index.entries[e].shard];
    if (named.file == t.file) continue;
    if (found[e])
      return make_error(ErrorCode::shard_mismatch, shard_path, name_offset(model, t),
                        fmt::format("tensor {} is in two shards: this one and {} (where the index {} puts it)",
                                    quote_name(t.name), model.files[named.file].path, index_path));
    return make_error(ErrorCode::shard_mismatch, shard_path, name_offset(model, t),
                      fmt::format("tensor {} is in this shard, but the index {} maps it to {}", quote_name(t.name),
                                  index_path, model.files[named.file].path));
  }
  for (uint32_t e = 0; e < index.entries.size(); ++e)
    if (!found[e])
      return make_error(
          ErrorCode::shard_mismatch, index_path, index.entries[e].offset,
          fmt::format("the index maps tensor {} to {}, which does not contain it", quote_name(index.entries[e].name),
                      model.files[index.shards[index.entries[e].shard].file].path));
  return {};
}

}   // namespace

bool is_safetensors_index_name(std::string_view path) {
  return path.size() >= kIndexSuffix.size() && path.substr(path.size() - kIndexSuffix.size()) == kIndexSuffix;
}

Result<Model> open_safetensors_index(const std::string& index_path, const OpenOptions& options) {
  Model model;
  model.format = "safetensors-sharded";
  auto map = MappedFile::open(index_path);
  if (!map) return std::move(map).error();
  model.files.push_back(SourceFile{index_path, std::move(*map), "index", 0, 0});
  model.files[0].header_bytes = model.files[0].map.size();
  auto parsed = IndexParser(model, 0).run();
  if (!parsed) return std::move(parsed).error();
  IndexContents& index = *parsed;

  // Shards in name order (model-00001-of-0000n first), each opened once.
  std::vector<uint32_t> order(index.shards.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return index.shards[a].name < index.shards[b].name; });
  const std::string dir = directory_of(index_path);
  for (uint32_t shard : order) {
    const ShardRef& ref = index.shards[shard];
    struct stat st {};
    const std::string path = dir + std::string(ref.name);
    if (ref.name.empty() || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return make_error(ErrorCode::missing_file, index_path, ref.offset,
                        fmt::format("the index names shard {}, but {} is not a file", quote_name(ref.name), path));
  }
  uint64_t data_bytes = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (options.cancel && options.cancel->load())
      return make_error(ErrorCode::io, index_path, kNoOffset, "opening was cancelled");
    ShardRef& ref = index.shards[order[i]];
    auto file =
        add_safetensors_file(model, dir + std::string(ref.name), fmt::format("shard {}/{}", i + 1, order.size()));
    if (!file) return std::move(file).error();
    ref.file = *file;
    const SourceFile& sf = model.files[*file];
    data_bytes += sf.map.size() - sf.data_offset;
    if (options.progress) options.progress(static_cast<double>(i + 1) / static_cast<double>(order.size()));
  }
  AKV_TRY(check_agreement(model, index, index_path));
  if (index.total_size && *index.total_size != data_bytes)
    model.notes.push_back({ErrorCode::size_mismatch, index_path, index.total_size_offset,
                           fmt::format("metadata.total_size is {}, but the shards' data sections hold {} bytes",
                                       *index.total_size, data_bytes),
                           false});
  return model;
}

}   // namespace akview
