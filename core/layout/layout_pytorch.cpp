// PyTorch checkpoints (FORMATS.md §5.2, §5.6): a zip's records (local header, name, extra field,
// data, data descriptor), its central directory and end records, with data.pkl as opcodes and
// each data/<k> record as a storage holding its tensors; a legacy file's five pickles and its
// storages (an i64 element count, then the bytes). Record positions come from the zip reader,
// storages and tensors from the opened model; bytes that several views read (tied weights, views)
// are `shared` regions, a normal thing in PyTorch and no finding.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/formats/zip_reader.hpp"
#include "core/layout/layout_walkers.hpp"

namespace akview::layout {
namespace {

constexpr uint64_t kLocalFixedBytes = 30;
constexpr uint64_t kCentralFixedBytes = 46;
constexpr uint64_t kEocdBytes = 22;
constexpr uint64_t kLocatorBytes = 20;
constexpr uint32_t kEocdSig = 0x06054b50, kLocatorSig = 0x07064b50, kZip64EocdSig = 0x06064b50,
                   kDescriptorSig = 0x08074b50;

// The storage whose first byte is at `offset` in `file`, or kNone.
uint32_t storage_at(const Model& model, uint32_t file, uint64_t offset) {
  for (uint32_t s = 0; s < model.torch_storages.size(); ++s)
    if (model.torch_storages[s].file == file && model.torch_storages[s].offset == offset) return s;
  return kNone;
}

std::string storage_value(const Model& model, uint32_t s) {
  std::string names;
  for (uint32_t i = 0; i < model.torch_tensors.size(); ++i)
    if (model.torch_tensors[i].storage == s) names += (names.empty() ? "" : ", ") + std::string(model.tensors[i].name);
  return shorten(fmt::format("{} bytes: {}", model.torch_storages[s].nbytes, names));
}

// The tensors of storage `s` at `depth` over its bytes, up to `end` (the region that holds them may be
// shorter than the storage claims: a zip record cut short); bytes several views read are `shared`.
bool emit_storage_tensors(const Model& model, uint32_t s, uint8_t depth, RegionWriter& w, uint64_t end) {
  const TorchStorage& st = model.torch_storages[s];
  std::vector<Span> spans;
  for (uint32_t i = 0; i < model.torch_tensors.size(); ++i)
    if (model.torch_tensors[i].storage == s) spans.push_back(Span{model.tensors[i].offset, model.tensors[i].nbytes, i});
  SpanCallbacks cb;
  cb.describe = [&](uint32_t id) { return describe_tensor(model, id); };
  cb.unclaimed = [&](uint64_t a, uint64_t b, uint8_t d) {
    return w.emit(d, a, b - a, RegionKind::padding, "unused storage bytes",
                  fmt::format("{} bytes no tensor views", b - a));
  };
  cb.claimed_twice = RegionKind::shared;
  return emit_spans(w, depth, st.offset, std::min(st.offset + st.nbytes, end), std::move(spans), cb);
}

class ZipWalker {
 public:
  ZipWalker(const Model& model, uint32_t file_index, RegionWriter& w)
      : model_(model), file_index_(file_index), f_(model.files[file_index]), bytes_(f_.map.bytes()), w_(w) {}

  Status run() {
    auto entries = read_zip_directory(bytes_, f_.path);
    if (!entries) return entries.error();
    entries_ = std::move(*entries);
    find_end_records();
    if (eocd_ == kNoOffset)
      return make_error(ErrorCode::bad_magic, f_.path, bytes_.size(), "no end of central directory");
    std::vector<Span> spans;
    uint64_t cd_begin = zip64_eocd_ != kNoOffset ? zip64_eocd_ : locator_ != kNoOffset ? locator_ : eocd_;
    const uint64_t cd_end = cd_begin;
    for (uint32_t i = 0; i < entries_.size(); ++i) {
      const ZipEntry& e = entries_[i];
      const uint64_t data_end = e.data_offset + e.compressed_size;
      spans.push_back(Span{e.local_header, data_end + descriptor_bytes(e) - e.local_header, i});
      cd_begin = std::min(cd_begin, e.directory_offset);
    }
    const auto n = static_cast<uint32_t>(entries_.size());
    spans.push_back(Span{cd_begin, cd_end - cd_begin, n});
    cd_begin_ = cd_begin;
    cd_end_ = cd_end;
    if (zip64_eocd_ != kNoOffset)   // its size field does not count the 12 bytes before it
      spans.push_back(Span{zip64_eocd_,
                           std::min<uint64_t>(load_le(bytes_, zip64_eocd_ + 4, 8), locator_ - zip64_eocd_ - 12) + 12,
                           n + 1});
    if (locator_ != kNoOffset) spans.push_back(Span{locator_, kLocatorBytes, n + 2});
    spans.push_back(Span{eocd_, bytes_.size() - eocd_, n + 3});
    SpanCallbacks cb;
    cb.describe = [&](uint32_t id) { return describe(id); };
    cb.children = [&](uint32_t id, uint8_t depth) { return children(id, depth); };
    emit_spans(w_, 0, 0, bytes_.size(), std::move(spans), cb);
    return status_;
  }

 private:
  void find_end_records() {
    if (bytes_.size() < kEocdBytes) return;
    const uint64_t last = bytes_.size() - kEocdBytes;
    const uint64_t first = last > 0xffff ? last - 0xffff : 0;
    for (uint64_t at = last + 1; at-- > first;)
      if (load_le(bytes_, at, 4) == kEocdSig && at + kEocdBytes + load_le(bytes_, at + 20, 2) == bytes_.size()) {
        eocd_ = at;
        break;
      }
    if (eocd_ == kNoOffset || eocd_ < kLocatorBytes || load_le(bytes_, eocd_ - kLocatorBytes, 4) != kLocatorSig) return;
    locator_ = eocd_ - kLocatorBytes;
    const uint64_t rec = load_le(bytes_, locator_ + 8, 8);
    if (rec + 12 <= locator_ && load_le(bytes_, rec, 4) == kZip64EocdSig) zip64_eocd_ = rec;
  }

  // A data descriptor after the data (general purpose flag bit 3): 16 bytes, or 24 with ZIP64 sizes.
  uint64_t descriptor_bytes(const ZipEntry& e) const {
    const uint64_t at = e.data_offset + e.compressed_size;
    if (!(load_le(bytes_, e.local_header + 6, 2) & 8) || at + 16 > bytes_.size() ||
        load_le(bytes_, at, 4) != kDescriptorSig)
      return 0;
    if (load_le(bytes_, at + 8, 4) == (e.compressed_size & 0xffffffff) &&
        load_le(bytes_, at + 12, 4) == (e.size & 0xffffffff))
      return 16;
    return at + 24 <= bytes_.size() ? 24 : 0;
  }

  Region describe(uint32_t id) const {
    const auto n = static_cast<uint32_t>(entries_.size());
    if (id < n) {
      const ZipEntry& e = entries_[id];
      return Region{0,
                    0,
                    0,
                    RegionKind::record,
                    shorten(e.name, 200),
                    fmt::format("{} bytes{}", e.size, e.method == 0 ? " stored" : " compressed")};
    }
    if (id == n)
      return Region{0, 0, 0, RegionKind::central_directory, "central directory", fmt::format("{} entries", n)};
    if (id == n + 1) return Region{0, 0, 0, RegionKind::end_record, "zip64 end of central directory", ""};
    if (id == n + 2) return Region{0, 0, 0, RegionKind::end_record, "zip64 end locator", ""};
    return Region{0, 0, 0, RegionKind::end_record, "end of central directory", fmt::format("{} entries", n)};
  }

  bool children(uint32_t id, uint8_t depth) {
    const auto n = static_cast<uint32_t>(entries_.size());
    if (id == n) {
      // The entries, and whatever else the directory's span holds (bytes between or after them, or
      // entries that overlap) as gap and overlap regions: a finding.
      std::vector<Span> spans;
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t at = entries_[i].directory_offset;
        spans.push_back(Span{at,
                             kCentralFixedBytes + load_le(bytes_, at + 28, 2) + load_le(bytes_, at + 30, 2) +
                                 load_le(bytes_, at + 32, 2),
                             i});
      }
      SpanCallbacks cb;
      cb.describe = [&](uint32_t i) {
        return Region{0,
                      0,
                      0,
                      RegionKind::directory_entry,
                      shorten(entries_[i].name, 200),
                      fmt::format("local header at {:#x}", entries_[i].local_header)};
      };
      cb.children = [](uint32_t, uint8_t) { return true; };
      return emit_spans(w_, depth, cd_begin_, cd_end_, std::move(spans), cb);
    }
    if (id > n) return true;
    const ZipEntry& e = entries_[id];
    const uint64_t lh = e.local_header;
    const uint64_t name_len = load_le(bytes_, lh + 26, 2), extra_len = load_le(bytes_, lh + 28, 2);
    w_.emit(depth, lh, kLocalFixedBytes, RegionKind::header, "local header", fmt::format("method {}", e.method));
    w_.emit(depth, lh + kLocalFixedBytes, name_len, RegionKind::name, "name", shorten(e.name, 200));
    if (extra_len)
      w_.emit(depth, lh + kLocalFixedBytes + name_len, extra_len, RegionKind::padding, "extra field",
              fmt::format("{} bytes", extra_len));
    const auto sub = static_cast<uint8_t>(depth + 1);
    const uint32_t s = storage_at(model_, file_index_, e.data_offset);
    if (e.compressed_size == 0) {
      // nothing: an empty record has no data region
    } else if (s != kNone) {
      w_.emit(depth, e.data_offset, e.compressed_size, RegionKind::storage,
              fmt::format("storage {}", model_.torch_storages[s].key), storage_value(model_, s));
      if (!emit_storage_tensors(model_, s, sub, w_, e.data_offset + e.compressed_size)) return false;
    } else if (e.name.ends_with(".pkl") && e.method == 0) {
      w_.emit(depth, e.data_offset, e.compressed_size, RegionKind::pickle, "pickle",
              fmt::format("{} bytes", e.compressed_size));
      if (Status st = walk_pickle_opcodes(bytes_, f_.path, e.data_offset, e.data_offset + e.compressed_size, sub, w_);
          !st) {
        status_ = st;
        return false;
      }
    } else {
      const std::string_view text(reinterpret_cast<const char*>(bytes_.data() + e.data_offset), e.compressed_size);
      w_.emit(depth, e.data_offset, e.compressed_size, RegionKind::record_data, "data", shorten(text, 64));
    }
    const uint64_t d = descriptor_bytes(e);
    if (d)
      w_.emit(depth, e.data_offset + e.compressed_size, d, RegionKind::header, "data descriptor",
              fmt::format("{} bytes", d));
    return !w_.stopped();
  }

  const Model& model_;
  uint32_t file_index_;
  const SourceFile& f_;
  std::span<const uint8_t> bytes_;
  RegionWriter& w_;
  std::vector<ZipEntry> entries_;
  uint64_t eocd_ = kNoOffset, locator_ = kNoOffset, zip64_eocd_ = kNoOffset;
  uint64_t cd_begin_ = 0, cd_end_ = 0;   // the central directory's span
  Status status_;
};

constexpr std::array<std::string_view, 5> kLegacyPickles = {"magic number", "protocol version", "sys_info",
                                                            "state_dict", "storage keys"};

}   // namespace

Status walk_pytorch_zip(const Model& model, uint32_t file_index, RegionWriter& writer) {
  return ZipWalker(model, file_index, writer).run();
}

Status walk_pytorch_legacy(const Model& model, uint32_t file_index, RegionWriter& w) {
  const SourceFile& f = model.files[file_index];
  const auto bytes = f.map.bytes();
  uint64_t pos = 0;
  for (std::string_view label : kLegacyPickles) {
    auto end = pickle_end(bytes, f.path, pos, bytes.size());
    if (!end) return end.error();
    w.emit(0, pos, *end - pos, RegionKind::pickle, std::string(label), fmt::format("{} bytes", *end - pos));
    AKV_TRY(walk_pickle_opcodes(bytes, f.path, pos, *end, 1, w));
    pos = *end;
  }
  std::vector<Span> spans;
  for (uint32_t s = 0; s < model.torch_storages.size(); ++s) {
    const TorchStorage& st = model.torch_storages[s];
    if (st.file == file_index && st.offset >= pos + 8) spans.push_back(Span{st.offset - 8, st.nbytes + 8, s});
  }
  SpanCallbacks cb;
  cb.describe = [&](uint32_t s) {
    return Region{
        0, 0, 0, RegionKind::storage, fmt::format("storage {}", model.torch_storages[s].key), storage_value(model, s)};
  };
  cb.children = [&](uint32_t s, uint8_t depth) {
    const TorchStorage& st = model.torch_storages[s];
    const uint64_t count = load_le(bytes, st.offset - 8, 8);
    w.emit(depth, st.offset - 8, 8, RegionKind::count, "element count", fmt::format("{}", count));
    if (st.nbytes == 0) return !w.stopped();
    w.emit(depth, st.offset, st.nbytes, RegionKind::record_data, "bytes", fmt::format("{} bytes", st.nbytes));
    return emit_storage_tensors(model, s, static_cast<uint8_t>(depth + 1), w, st.offset + st.nbytes);
  };
  emit_spans(w, 0, pos, bytes.size(), std::move(spans), cb);
  return {};
}

}   // namespace akview::layout
