// Sharded SafeTensors (FORMATS.md §1.7): model.safetensors.index.json is streamed with the pull
// parser (indexes reach tens of MB, so no DOM), each named shard is opened once, and the index and
// the shards must agree tensor by tensor. A total_size that disagrees is only a warning.
// The headers are parsed on several threads: each shard alone into a Model of its own, the index
// beside them, and the shards guessed from their names (NAME-00001-of-00163.safetensors beside the
// index) before the index has said which it names; then they are joined in the index's order, so
// tensors, notes and the first error are those of reading the shards one by one.
#include "core/formats/safetensors_index.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <algorithm>
#include <atomic>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/formats/safetensors_file.hpp"
#include "core/huge_pages.hpp"
#include "core/json_reader.hpp"
#include "core/name_set.hpp"
#include "core/parallel_chunks.hpp"
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
  NameSet names;   // entries by tensor name: built by first_duplicate, read by check_agreement
  std::optional<uint64_t> total_size;
  uint64_t total_size_offset = kNoOffset;
};

// The first weight_map entry whose name an earlier entry has (the parse's error, as if the names
// were checked as they came); builds index.names.
std::optional<Error> first_duplicate(IndexContents& index, const std::string& index_path) {
  NameSet& names = index.names;
  names = NameSet();
  names.reserve(index.entries.size());
  auto name_of = [&](uint32_t i) { return index.entries[i].name; };
  for (uint32_t i = 0; i < index.entries.size(); ++i)
    if (names.insert(index.entries[i].name, i, name_of) != NameSet::kAbsent)
      return Error{ErrorCode::duplicate_key, index_path, index.entries[i].offset,
                   fmt::format("weight_map names tensor {} twice", quote_name(index.entries[i].name))};
  return std::nullopt;
}

class IndexParser {
 public:
  IndexParser(Model& model, uint32_t file_index)
      : model_(model),
        file_index_(file_index),
        path_(model.files[file_index].path),
        reader_(model.files[file_index].map.bytes(), path_) {}

  // The index, or its first error in file order: a name the weight_map repeats before the point
  // where the parse failed is that error.
  Result<IndexContents> run() {
    if (!parse()) {
      if (auto duplicate = first_duplicate(out_, path_)) return *duplicate;
      return reader_.error();
    }
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

  // The entries in file order. Duplicate names are found after the parse (first_duplicate): most
  // opens prove there are none for free, by matching every entry to a distinct shard tensor.
  bool parse_weight_map() {
    JsonToken tok;
    if (!reader_.next(tok)) return false;
    if (tok.kind != JsonKind::object_begin)
      return reader_.fail(ErrorCode::schema, tok.offset,
                          fmt::format("'weight_map' must be an object, found {}", json_kind_name(tok.kind)));
    // Room for the entries at once (an entry takes 60-100 bytes of the index): growing a vector of
    // ~10^6 entries by doubling copied it ~20 times and touched twice its pages.
    out_.entries.reserve(model_.files[file_index_].map.size() / 64);
    advise_huge_pages(out_.entries.data(), out_.entries.capacity() * sizeof(WeightEntry));
    NameSet shard_names;
    auto shard_of = [&](uint32_t i) { return out_.shards[i].name; };
    uint32_t last_shard = NameSet::kAbsent;   // entries of one shard mostly come together
    JsonToken value;
    for (;;) {
      WeightEntry entry;
      // Nearly every entry is `"name": "file"` in plain ASCII: read in one step; anything else (and
      // every error) through the general tokens, from the same byte.
      if (reader_.next_plain_member(tok, value)) {
        entry = {tok.text, 0, tok.offset};
        tok = value;
      } else {
        if (!reader_.next(tok)) return false;
        if (tok.kind == JsonKind::object_end) return true;
        entry = {keep(tok), 0, tok.offset};
        if (!reader_.next(tok)) return false;
        if (tok.kind != JsonKind::string)
          return reader_.fail(ErrorCode::schema, tok.offset,
                              fmt::format("weight_map entry {} must name a shard file, found {}",
                                          quote_name(entry.name), json_kind_name(tok.kind)));
      }
      if (last_shard == NameSet::kAbsent || tok.escaped || out_.shards[last_shard].name != tok.text) {
        const std::string_view shard = keep(tok);
        const auto new_shard = static_cast<uint32_t>(out_.shards.size());
        last_shard = shard_names.insert(shard, new_shard, shard_of);
        if (last_shard == NameSet::kAbsent) {
          out_.shards.push_back({shard, tok.offset, 0});
          last_shard = new_shard;
        }
      }
      entry.shard = last_shard;
      out_.entries.push_back(entry);
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
constexpr std::string_view kShardExtension = ".safetensors";
constexpr int kMaxParseThreads = 8;
constexpr size_t kAgreementChunk = 1 << 16;   // tensors a thread looks up in the index at a time

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// The files of `dir` named as shards of a set, sorted: what an index beside them almost always names.
std::vector<std::string> guess_shards(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.empty() ? "." : dir.c_str());
  if (!d) return out;
  while (const dirent* e = readdir(d)) {
    if (!is_safetensors_shard_name(e->d_name)) continue;
    // Regular files only (a FIFO would block the open); the opener checks what the index names anyway.
    struct stat st {};
    if (e->d_type == DT_REG || (stat((dir + e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode)))
      out.emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// One shard parsed alone: a Model whose files[0] is the shard, or the shard's error.
using ShardParse = std::optional<Result<Model>>;

Result<Model> parse_shard(const std::string& path, NameCheck names) {
  Model part;
  auto file = add_safetensors_file(part, path, "", names);
  if (!file) return std::move(file).error();
  return part;
}

// A shard parsed with NameCheck::by_caller whose names were not proved distinct by the model's name
// index: checked alone now, and where its header repeats a name, parsed again for that error (the
// one NameCheck::now gives, offset and all). Returns whether it was parsed again.
bool check_shard_names(ShardParse& p, const std::string& path) {
  if (!p || !*p) return false;
  Model& part = **p;
  const bool repeated = part.build_index() != kNone;
  part.drop_index();
  if (!repeated) return false;
  p = parse_shard(path, NameCheck::now);
  return true;
}

// The shards parsed alone in `parts` (each a Model whose files[0] is the shard), their tensors and
// shapes appended to `model` in their order, as add_safetensors_file would have appended them one by
// one: file indexes from `first_file` on (where the shards' files will sit), dims indexes shifted.
// Touches model.tensors and model.dims only (so it may run while the index's parse fills the
// model's metadata); the tensors are copied on `threads`. finish_join does the rest.
struct CopiedShards {
  std::vector<uint32_t> file;                   // each part's file index
  std::vector<size_t> tensors_at;               // where each part's tensors start in model.tensors
  std::vector<std::vector<uint32_t>> outside;   // per part: tensors whose names lie outside its header (unescaped)
};

CopiedShards copy_shards(Model& model, const std::vector<Model*>& parts, uint32_t first_file, int threads) {
  const size_t n = parts.size();
  CopiedShards out;
  out.file.resize(n);
  out.outside.resize(n);
  std::vector<size_t> tensors_at(n + 1, model.tensors.size()), dims_at(n + 1, model.dims.size());
  for (size_t i = 0; i < n; ++i) {
    tensors_at[i + 1] = tensors_at[i] + parts[i]->tensors.size();
    dims_at[i + 1] = dims_at[i] + parts[i]->dims.size();
    out.file[i] = first_file + static_cast<uint32_t>(i);
  }
  model.tensors.reserve(tensors_at[n]);
  advise_huge_pages(model.tensors.data() + model.tensors.size(),
                    (tensors_at[n] - model.tensors.size()) * sizeof(Tensor));
  // The new rows' first touches on every thread, before resize fills them on this one.
  populate_on_threads(model.tensors.data() + model.tensors.size(),
                      (tensors_at[n] - model.tensors.size()) * sizeof(Tensor), threads);
  model.tensors.resize(tensors_at[n]);
  model.dims.resize(dims_at[n]);
  parallel_chunks(n, threads, [&](size_t i, int) {
    const Model& part = *parts[i];
    const auto bytes = part.files[0].map.bytes();   // the mapping moves with its SourceFile, its address unchanged
    Tensor* dest = model.tensors.data() + tensors_at[i];
    for (size_t k = 0; k < part.tensors.size(); ++k) {
      Tensor t = part.tensors[k];
      const auto* p = reinterpret_cast<const uint8_t*>(t.name.data());
      if (!t.name.empty() && !(p >= bytes.data() && p < bytes.data() + bytes.size()))
        out.outside[i].push_back(static_cast<uint32_t>(k));
      t.file = out.file[i];
      t.dims_at += static_cast<uint32_t>(dims_at[i]);
      dest[k] = t;
    }
    std::copy(part.dims.begin(), part.dims.end(), model.dims.begin() + static_cast<ptrdiff_t>(dims_at[i]));
    return true;
  });
  out.tensors_at.assign(tensors_at.begin(), tensors_at.end() - 1);
  return out;
}

// After copy_shards: the shards' files moved to the model (at the indexes copy_shards gave them,
// roles set), and the strings that were unescaped into a part stored again in `model`; metadata and
// notes appended in the parts' order.
void finish_join(Model& model, const std::vector<Model*>& parts, const CopiedShards& copied) {
  const size_t n = parts.size();
  for (size_t i = 0; i < n; ++i) {
    parts[i]->files[0].role = fmt::format("shard {}/{}", i + 1, n);
    model.files.push_back(std::move(parts[i]->files[0]));
  }
  for (size_t i = 0; i < n; ++i) {
    const auto bytes = model.files[copied.file[i]].map.bytes();
    auto keep = [&](std::string_view s) {
      const auto* p = reinterpret_cast<const uint8_t*>(s.data());
      if (s.empty() || (p >= bytes.data() && p < bytes.data() + bytes.size())) return s;
      return model.intern(std::string(s));
    };
    for (uint32_t k : copied.outside[i]) {
      Tensor& t = model.tensors[copied.tensors_at[i] + k];
      t.name = keep(t.name);
    }
    for (MetaEntry m : parts[i]->meta) {
      m.key = keep(m.key);
      m.value.str = keep(m.value.str);
      m.file = copied.file[i];
      model.meta.push_back(m);
    }
    for (Note& note : parts[i]->notes) model.notes.push_back(std::move(note));
  }
}

// Appends the shards parsed alone in `parts` to `model` in their order (copy_shards, then
// finish_join). Returns each part's file index.
std::vector<uint32_t> join_shards(Model& model, const std::vector<Model*>& parts, int threads) {
  const CopiedShards copied = copy_shards(model, parts, static_cast<uint32_t>(model.files.size()), threads);
  finish_join(model, parts, copied);
  return copied.file;
}

// Whether the index and the shards agree, proved the quick way: every entry names a distinct tensor
// of the shard it names, and there are as many entries as tensors (so no name repeats on either
// side). Builds the model's name index (open_one_model keeps it). False says nothing about which
// rule broke: check_agreement, after first_duplicate, finds the first error.
// `indexed`: the name index was built already (by the early join), without a repeated name.
bool agree_quickly(Model& model, const IndexContents& index, int threads, bool indexed) {
  if (index.entries.size() != model.tensors.size()) return false;
  if (!(indexed && model.has_index()) && model.build_index() != kNone) return false;
  // One bit a tensor, set by the entry that names it (a second entry finding it set: a repeat).
  std::vector<std::atomic<uint64_t>> claimed((model.tensors.size() + 63) / 64);
  std::atomic<bool> ok{true};
  parallel_chunks((index.entries.size() + kAgreementChunk - 1) / kAgreementChunk, threads, [&](size_t chunk, int) {
    const size_t begin = chunk * kAgreementChunk, end = std::min(index.entries.size(), begin + kAgreementChunk);
    constexpr size_t kAhead = 16;   // names whose slots are being loaded (each hashed once)
    uint64_t ahead[kAhead];
    for (size_t e = begin; e < end && e < begin + kAhead; ++e) ahead[e % kAhead] = hash_name(index.entries[e].name);
    for (size_t e = begin; e < end; ++e) {
      const uint64_t h = ahead[e % kAhead];
      if (e + kAhead < end) {
        ahead[e % kAhead] = hash_name(index.entries[e + kAhead].name);
        model.prefetch_slot(ahead[e % kAhead]);
      }
      const WeightEntry& entry = index.entries[e];
      const Tensor* t = model.find_hashed(entry.name, h);
      if (!t || t->file != index.shards[entry.shard].file) {
        ok = false;
        return false;
      }
      const auto k = static_cast<size_t>(t - model.tensors.data());
      const uint64_t bit = uint64_t{1} << (k % 64);
      if (claimed[k / 64].fetch_or(bit, std::memory_order_relaxed) & bit) {
        ok = false;
        return false;
      }
    }
    return true;
  });
  return ok;
}

// File offset of a tensor's name in its header (the byte after the opening quote is name[0]).
uint64_t name_offset(const Model& model, const Tensor& t) {
  const auto bytes = model.files[t.file].map.bytes();
  const auto* p = reinterpret_cast<const uint8_t*>(t.name.data());
  if (p > bytes.data() && p < bytes.data() + bytes.size()) return static_cast<uint64_t>(p - bytes.data()) - 1;
  return kNoOffset;
}

// Every tensor of the index is in its named shard, and every shard tensor is in the index. The
// lookups run on `threads`; the first disagreement in tensor order is the error, as in one pass.
Status check_agreement(const Model& model, const IndexContents& index, const std::string& index_path, int threads) {
  auto name_of = [&](uint32_t i) { return index.entries[i].name; };
  std::vector<uint32_t> entry_of(model.tensors.size(), NameSet::kAbsent);
  parallel_chunks((model.tensors.size() + kAgreementChunk - 1) / kAgreementChunk, threads, [&](size_t chunk, int) {
    const size_t end = std::min(model.tensors.size(), (chunk + 1) * kAgreementChunk);
    for (size_t k = chunk * kAgreementChunk; k < end; ++k)
      entry_of[k] = index.names.find(model.tensors[k].name, name_of);
    return true;
  });
  std::vector<uint8_t> found(index.entries.size(), 0);
  for (uint32_t k = 0; k < model.tensors.size(); ++k) {
    const uint32_t e = entry_of[k];
    if (e != NameSet::kAbsent && index.shards[index.entries[e].shard].file == model.tensors[k].file) found[e] = 1;
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

Error cancelled(const std::string& index_path) {
  return make_error(ErrorCode::io, index_path, kNoOffset, "opening was cancelled");
}

}   // namespace

bool is_safetensors_index_name(std::string_view path) {
  return path.size() >= kIndexSuffix.size() && path.substr(path.size() - kIndexSuffix.size()) == kIndexSuffix;
}

bool is_safetensors_shard_name(std::string_view name) {
  if (!name.ends_with(kShardExtension)) return false;
  const std::string_view stem = name.substr(0, name.size() - kShardExtension.size());
  const auto of = stem.rfind("-of-");
  if (of == std::string_view::npos || of == 0 || of + 4 == stem.size()) return false;
  const auto dash = stem.rfind('-', of - 1);
  if (dash == std::string_view::npos || dash + 1 == of) return false;
  auto digits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(stem.substr(dash + 1, of - dash - 1)) && digits(stem.substr(of + 4));
}

Result<Model> open_safetensors_index(const std::string& index_path, const OpenOptions& options, int threads) {
  // One thread more than the cores: a remote index (tens of MB, the last file in) keeps its task
  // waiting while the shards' headers, in long before it, are parsed on every core.
  if (threads <= 0) threads = std::min(machine_threads() + 1, kMaxParseThreads);
  Model model;
  model.format = "safetensors-sharded";
  model.files.push_back(SourceFile{index_path, MappedFile(), "index", 0, 0});
  const std::string dir = directory_of(index_path);
  auto stopped = [&] { return options.cancel && options.cancel->load(); };

  // The index and the shards guessed from their names, all at once; a guess the index does not
  // name is left out of the model, its errors too.
  const std::vector<std::string> guessed = guess_shards(dir);
  std::vector<ShardParse> parts(guessed.size());
  std::optional<Result<IndexContents>> parsed;
  const double steps = static_cast<double>(guessed.size() + 1);
  // The guessed shards joined (tensors copied, names indexed) as soon as the last of them is
  // parsed, while the index may still be parsed or on its way: what the index names almost always
  // is the guessed set, and then only finish_join is left after the index (else this is undone).
  std::atomic<size_t> shards_parsed{0};
  std::optional<CopiedShards> early;
  bool early_duplicate = false;
  auto join_early = [&] {
    std::vector<Model*> ready;
    for (ShardParse& p : parts) {
      if (!p || !*p) return;
      ready.push_back(&**p);
    }
    early = copy_shards(model, ready, 1, threads);
    early_duplicate = model.build_index(threads) != kNone;
  };
  parallel_chunks(
      guessed.size() + 1, threads,
      [&](size_t task, int) {
        if (stopped()) return false;
        if (task == 0) {
          // Mapped here, beside the shards' parses: a remote index (tens of MB) may still be on
          // its way while the shards' headers, already in, are parsed.
          auto map = MappedFile::open(index_path);
          if (!map) {
            parsed = std::move(map).error();
            return true;
          }
          model.files[0].map = std::move(*map);
          model.files[0].header_bytes = model.files[0].map.size();
          parsed = IndexParser(model, 0).run();
        } else {
          // Each shard's repeated names are found by the model's name index, built once for all.
          parts[task - 1] = parse_shard(dir + guessed[task - 1], NameCheck::by_caller);
          if (shards_parsed.fetch_add(1, std::memory_order_acq_rel) + 1 == guessed.size() && !stopped()) join_early();
        }
        return true;
      },
      [&](size_t done) {
        if (options.progress) options.progress(static_cast<double>(done) / steps);
      });
  if (!parsed) return cancelled(index_path);
  if (!*parsed) return std::move(*parsed).error();
  IndexContents& index = **parsed;

  // Shards in name order (model-00001-of-0000n first), each opened once.
  std::vector<uint32_t> order(index.shards.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return index.shards[a].name < index.shards[b].name; });
  for (uint32_t shard : order) {
    const ShardRef& ref = index.shards[shard];
    struct stat st {};
    const std::string path = dir + std::string(ref.name);
    if (ref.name.empty() || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      if (auto duplicate = first_duplicate(index, index_path)) return *duplicate;
      return make_error(ErrorCode::missing_file, index_path, ref.offset,
                        fmt::format("the index names shard {}, but {} is not a file", quote_name(ref.name), path));
    }
  }
  // The named shards that were not guessed (named otherwise), parsed now.
  std::vector<ShardParse*> part_of(order.size());
  std::vector<ShardParse> late;
  std::vector<size_t> late_at;   // positions in `order`
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string_view name = index.shards[order[i]].name;
    auto it = std::lower_bound(guessed.begin(), guessed.end(), name);
    if (it != guessed.end() && *it == name) part_of[i] = &parts[static_cast<size_t>(it - guessed.begin())];
    else late_at.push_back(i);
  }
  late.resize(late_at.size());
  for (size_t k = 0; k < late_at.size(); ++k) part_of[late_at[k]] = &late[k];
  parallel_chunks(late_at.size(), threads, [&](size_t k, int) {
    if (stopped()) return false;
    late[k] = parse_shard(dir + std::string(index.shards[order[late_at[k]]].name), NameCheck::now);
    return true;
  });
  if (stopped() || std::any_of(part_of.begin(), part_of.end(), [](ShardParse* p) { return !*p; }))
    return cancelled(index_path);

  // The guessed shards' names were checked only where the early join's name index covers exactly
  // the shards the index names and found no name twice; else each is checked alone.
  bool joined_early = early && late_at.empty() && order.size() == guessed.size();
  if (!joined_early || early_duplicate) {
    std::vector<size_t> used;   // guessed shards the index names
    for (size_t i = 0; i < order.size(); ++i)
      if (part_of[i] >= parts.data() && part_of[i] < parts.data() + parts.size())
        used.push_back(static_cast<size_t>(part_of[i] - parts.data()));
    std::atomic<bool> reparsed{false};
    parallel_chunks(used.size(), threads, [&](size_t k, int) {
      if (check_shard_names(parts[used[k]], dir + guessed[used[k]])) reparsed = true;
      return true;
    });
    // A shard parsed again has a new mapping: the early join's names pointed into the old one.
    if (reparsed) joined_early = false;
  }

  // The first error in the order of reading one by one: the index's repeated name, then the first
  // shard that failed, then the first disagreement.
  std::vector<Model*> shard_models;
  for (ShardParse* p : part_of) {
    if (!**p) {
      if (auto duplicate = first_duplicate(index, index_path)) return *duplicate;
      return std::move(**p).error();
    }
    shard_models.push_back(&***p);
  }
  std::vector<uint32_t> files;
  if (joined_early) {
    finish_join(model, shard_models, *early);
    files = early->file;
  } else {
    model.tensors.clear();
    model.dims.clear();
    model.drop_index();
    files = join_shards(model, shard_models, threads);
  }
  uint64_t data_bytes = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    index.shards[order[i]].file = files[i];
    const SourceFile& sf = model.files[files[i]];
    data_bytes += sf.map.size() - sf.data_offset;
  }
  if (!agree_quickly(model, index, threads, joined_early && !early_duplicate)) {
    if (auto duplicate = first_duplicate(index, index_path)) return *duplicate;
    AKV_TRY(check_agreement(model, index, index_path, threads));
  }
  if (options.progress) options.progress(1.0);
  if (index.total_size && *index.total_size != data_bytes)
    model.notes.push_back({ErrorCode::size_mismatch, index_path, index.total_size_offset,
                           fmt::format("metadata.total_size is {}, but the shards' data sections hold {} bytes",
                                       *index.total_size, data_bytes),
                           false});
  return model;
}

}   // namespace akview
