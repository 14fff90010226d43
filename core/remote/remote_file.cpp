// Remote bytes into the cache's stand-in files (see remote_file.hpp).
#include "core/remote/remote_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/remote/head_extent.hpp"
#include "core/remote/http.hpp"

namespace akview::remote {
namespace {

constexpr uint64_t kMaxRequestBytes = 16ull << 20;
constexpr uint64_t kMaxWholeRequestBytes = 256ull << 20;   // a file fetched whole: one request up to this
constexpr uint64_t kMaxWindowChunks = 64;                  // read-ahead grows to 16 MiB
constexpr double kByteUrlSeconds = 600;                    // a CDN's signed URL is reused this long

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string sidecar_path(const std::string& standin) {
  std::filesystem::path p(standin);
  return (p.parent_path() / ("." + p.filename().string() + ".akview")).string();
}

// A strong validator for If-Range: the ETag unless it is weak, else Last-Modified.
std::string validator_of(const HttpResponse& r) {
  std::string etag = r.header("etag");
  if (!r.headers.count("etag")) etag.clear();
  if (!etag.empty() && !etag.starts_with("W/")) return etag;
  if (auto it = r.headers.find("last-modified"); it != r.headers.end()) return it->second;
  return {};
}

}   // namespace

Result<std::shared_ptr<RemoteFile>> RemoteFile::open(RemoteIdentity identity, std::string standin_path) {
  std::shared_ptr<RemoteFile> f(new RemoteFile());
  f->id_ = std::move(identity);
  f->path_ = std::move(standin_path);
  f->sidecar_ = sidecar_path(f->path_);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(f->path_).parent_path(), ec);
  f->fd_ = ::open(f->path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (f->fd_ < 0)
    return make_error(ErrorCode::io, f->path_, kNoOffset,
                      fmt::format("cannot create the cache file: {}", std::strerror(errno)));
  const uint64_t chunks = (f->id_.size + kChunkBytes - 1) / kChunkBytes;
  f->bits_.assign((chunks + 63) / 64, 0);
  // What an earlier run fetched, if it was fetched under the same identity.
  std::ifstream in(f->sidecar_, std::ios::binary);
  std::string magic, key, url, validator, linked, size_text;
  bool reuse = false;
  if (in && std::getline(in, magic) && magic == "akview-remote 1" && std::getline(in, url) &&
      std::getline(in, size_text) && std::getline(in, validator) && std::getline(in, linked)) {
    reuse = size_text == std::to_string(f->id_.size) && linked == f->id_.linked_etag;
    if (reuse) {
      in.read(reinterpret_cast<char*>(f->bits_.data()), static_cast<std::streamsize>(f->bits_.size() * 8));
      if (in.gcount() != static_cast<std::streamsize>(f->bits_.size() * 8)) reuse = false;
      else f->validator_ = validator;
    }
  }
  struct stat st {};
  if (!reuse || fstat(f->fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) != f->id_.size) {
    std::fill(f->bits_.begin(), f->bits_.end(), 0);
    f->validator_.clear();
    if (ftruncate(f->fd_, 0) != 0 || ftruncate(f->fd_, static_cast<off_t>(f->id_.size)) != 0)
      return make_error(ErrorCode::io, f->path_, kNoOffset,
                        fmt::format("cannot size the cache file: {}", std::strerror(errno)));
    // An old sidecar would claim chunks this file no longer holds; a new one is written with the first fetch.
    std::remove(f->sidecar_.c_str());
  }
  return f;
}

RemoteFile::~RemoteFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RemoteFile::save_sidecar() {
  const std::string tmp = sidecar_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << "akview-remote 1\n" << id_.url << "\n" << id_.size << "\n" << validator_ << "\n" << id_.linked_etag << "\n";
    out.write(reinterpret_cast<const char*>(bits_.data()), static_cast<std::streamsize>(bits_.size() * 8));
  }
  std::rename(tmp.c_str(), sidecar_.c_str());
}

bool RemoteFile::chunk_has(uint64_t c) const { return (bits_[c / 64] >> (c % 64)) & 1; }

void RemoteFile::mark(uint64_t begin, uint64_t end) {
  for (uint64_t c = begin / kChunkBytes; c * kChunkBytes < end; ++c) bits_[c / 64] |= uint64_t{1} << (c % 64);
}

bool RemoteFile::has(uint64_t offset, uint64_t length) const { return missing_bytes(offset, length) == 0; }

uint64_t RemoteFile::missing_bytes(uint64_t offset, uint64_t length) const {
  std::lock_guard lock(mutex_);
  if (length == 0 || offset >= id_.size) return 0;
  const uint64_t end = std::min(id_.size, offset + length);
  uint64_t missing = 0;
  for (uint64_t c = offset / kChunkBytes; c * kChunkBytes < end; ++c)
    if (!chunk_has(c)) missing += std::min(end, (c + 1) * kChunkBytes) - std::max(offset, c * kChunkBytes);
  return missing;
}

uint64_t RemoteFile::fetched_bytes() const {
  std::lock_guard lock(mutex_);
  uint64_t n = 0;
  for (uint64_t w : bits_) n += static_cast<uint64_t>(__builtin_popcountll(w));
  return std::min(n * kChunkBytes, id_.size);
}

std::vector<RemoteFile::Span> RemoteFile::missing_spans(uint64_t begin, uint64_t end, uint64_t max_span) const {
  std::vector<Span> out;
  end = std::min(end, id_.size);
  for (uint64_t c = begin / kChunkBytes; c * kChunkBytes < end; ++c) {
    if (chunk_has(c)) continue;
    const uint64_t b = c * kChunkBytes, e = std::min(id_.size, b + kChunkBytes);
    if (!out.empty() && out.back().end == b && out.back().end - out.back().begin < max_span) out.back().end = e;
    else out.push_back({b, e});
  }
  return out;
}

std::pair<uint64_t, uint64_t> RemoteFile::fetched_span(uint64_t offset, uint64_t cap) const {
  std::lock_guard lock(mutex_);
  const uint64_t c = offset / kChunkBytes;
  if (offset >= id_.size || !chunk_has(c)) return {offset, offset};
  uint64_t first = c, last = c;
  const uint64_t cap_chunks = std::max<uint64_t>(1, cap / kChunkBytes);
  while (first > 0 && chunk_has(first - 1) && c - first + 1 < cap_chunks / 2) --first;
  while ((last + 1) * kChunkBytes < id_.size && chunk_has(last + 1) && last - first + 1 < cap_chunks) ++last;
  return {first * kChunkBytes, std::min(id_.size, (last + 1) * kChunkBytes)};
}

std::string RemoteFile::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

void RemoteFile::set_error(const Error& e) {
  std::lock_guard lock(mutex_);
  last_error_ = e.to_string();
}

// One round of range requests over several files (the shards of a model), all at once. Each file's
// sidecar is saved after it unless `save` is false (the caller saves them once after its last round).
Status RemoteFile::fetch_many(std::span<RemoteFile* const> files, std::span<const std::vector<Span>> spans, bool save) {
  std::vector<HttpRequest> requests;
  std::vector<std::pair<size_t, Span>> owners;
  for (size_t i = 0; i < files.size(); ++i) {
    RemoteFile& f = *files[i];
    std::string url, validator;
    {
      std::lock_guard lock(f.mutex_);
      url = !f.byte_url_.empty() && now_seconds() - f.byte_url_at_ < kByteUrlSeconds ? f.byte_url_ : f.id_.url;
      validator = f.validator_;
    }
    for (const Span& s : spans[i]) {
      HttpRequest r;
      r.url = url;
      r.has_range = true;
      r.range_begin = s.begin;
      r.range_end = s.end;
      r.if_range = validator;
      r.label = f.id_.label;
      r.dest_fd = f.fd_;   // straight into the stand-in; marked fetched only once whole
      requests.push_back(std::move(r));
      owners.emplace_back(i, s);
    }
  }
  if (requests.empty()) return {};
  auto results = http_client().run(requests);
  Status status;
  for (size_t k = 0; k < results.size(); ++k) {
    RemoteFile& f = *files[owners[k].first];
    const Span s = owners[k].second;
    auto& r = results[k];
    if (!r) {
      // A CDN's signed URL that expired (403) or went away: back to the origin once.
      bool retried = false;
      if (requests[k].url != f.id_.url && r.error().code == ErrorCode::network) {
        HttpRequest again = requests[k];
        again.url = f.id_.url;
        auto second = http_client().run_one(again);
        if (second) {
          r = std::move(second);
          retried = true;
        }
      }
      if (!retried) {
        f.set_error(r.error());
        if (status.ok()) status = r.error();
        continue;
      }
    }
    const HttpResponse& resp = *r;
    if (resp.total_size != 0 && resp.total_size != f.id_.size) {
      Error e =
          make_error(ErrorCode::changed, f.id_.label, kNoOffset,
                     fmt::format("changed on the server since it was opened: it is {} bytes, it was {}; R reloads",
                                 resp.total_size, f.id_.size));
      f.set_error(e);
      if (status.ok()) status = e;
      continue;
    }
    const std::string linked = resp.first_headers.count("x-linked-etag") ? resp.first_headers.at("x-linked-etag") : "";
    if (!linked.empty() && !f.id_.linked_etag.empty()) {
      auto strip = [](std::string v) {
        if (v.starts_with("W/")) v.erase(0, 2);
        std::erase(v, '"');
        return v;
      };
      if (strip(linked) != strip(f.id_.linked_etag)) {
        Error e = make_error(ErrorCode::changed, f.id_.label, kNoOffset,
                             "changed on the server since it was listed (its content hash differs); R reloads");
        f.set_error(e);
        if (status.ok()) status = e;
        continue;
      }
    }
    std::lock_guard lock(f.mutex_);
    if (f.validator_.empty()) f.validator_ = validator_of(resp);
    if (resp.redirects > 0) {
      f.byte_url_ = resp.url;
      f.byte_url_at_ = now_seconds();
    }
    f.mark(s.begin, s.end);
  }
  if (save)
    for (RemoteFile* f : files) {
      std::lock_guard lock(f->mutex_);
      f->save_sidecar();
    }
  return status;
}

Status RemoteFile::fetch_spans(std::vector<Span> spans) {
  RemoteFile* self = this;
  std::vector<Span> copy = std::move(spans);
  return fetch_many(std::span<RemoteFile* const>(&self, 1), std::span<const std::vector<Span>>(&copy, 1));
}

uint64_t RemoteFile::head_extent_locked() {
  std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(id_.size, kChunkBytes)));
  if (!head.empty() && pread(fd_, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) return head.size();
  return estimate_head_extent(head, id_.size).bytes;
}

Status RemoteFile::ensure_heads(std::span<const std::shared_ptr<RemoteFile>> files,
                                std::span<const std::shared_ptr<RemoteFile>> whole) {
  std::vector<RemoteFile*> round;
  std::vector<std::vector<Span>> spans;
  for (const auto& f : whole) {
    std::lock_guard lock(f->mutex_);
    auto missing = f->missing_spans(0, f->id_.size, kMaxWholeRequestBytes);
    if (missing.empty()) continue;
    round.push_back(f.get());
    spans.push_back(std::move(missing));
  }
  for (const auto& f : files) {
    std::lock_guard lock(f->mutex_);
    if (f->id_.size == 0 || f->chunk_has(0)) continue;
    round.push_back(f.get());
    spans.push_back({{0, std::min(f->id_.size, kChunkBytes)}});
  }
  // The sidecars are saved once, after the second round: saving each after the first too put 164
  // file creations and renames (50-130 ms on a shared host) between the two rounds of a 163-shard open.
  Status first = fetch_many(round, spans, false);
  std::vector<RemoteFile*> touched = round;
  round.clear();
  spans.clear();
  for (const auto& f : files) {
    std::lock_guard lock(f->mutex_);
    if (f->id_.size == 0 || !f->chunk_has(0)) continue;
    if (f->head_extent_ == 0) f->head_extent_ = f->head_extent_locked();
    f->head_done_ = true;
    auto missing = f->missing_spans(0, f->head_extent_, ~uint64_t{0});
    if (missing.empty()) continue;
    // One request from the first missing chunk of the header to its end.
    round.push_back(f.get());
    spans.push_back({{missing.front().begin, missing.back().end}});
  }
  Status second = fetch_many(round, spans, false);
  touched.insert(touched.end(), round.begin(), round.end());
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (RemoteFile* f : touched) {
    std::lock_guard lock(f->mutex_);
    f->save_sidecar();
  }
  return first.ok() ? second : first;
}

Status RemoteFile::ensure_whole(std::span<const std::shared_ptr<RemoteFile>> files) { return ensure_heads({}, files); }

Status RemoteFile::seed(std::span<const uint8_t> bytes, const std::string& validator) {
  std::lock_guard lock(mutex_);
  if (bytes.size() > id_.size || (bytes.size() % kChunkBytes != 0 && bytes.size() != id_.size))
    return make_error(ErrorCode::io, path_, 0, "seed bytes must end on a chunk boundary");
  if (!validator_.empty() && validator_ != validator) {
    std::fill(bits_.begin(), bits_.end(), 0);
  }
  uint64_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0)
      return make_error(ErrorCode::io, path_, done,
                        fmt::format("cannot write the cache file: {}", std::strerror(errno)));
    done += static_cast<uint64_t>(n);
  }
  validator_ = validator;
  mark(0, bytes.size());
  save_sidecar();
  return {};
}

Status RemoteFile::ensure_head() {
  std::shared_ptr<RemoteFile> self(std::shared_ptr<RemoteFile>{}, this);   // non-owning
  return ensure_heads(std::span<const std::shared_ptr<RemoteFile>>(&self, 1));
}

Status RemoteFile::ensure(uint64_t offset, uint64_t length, uint64_t max_request) {
  std::vector<Span> spans;
  {
    std::lock_guard lock(mutex_);
    if (length == 0 || offset >= id_.size) return {};
    spans = missing_spans(offset, std::min(id_.size, offset + length), max_request);
  }
  if (spans.empty()) return {};
  return fetch_spans(std::move(spans));
}

Result<std::pair<uint64_t, uint64_t>> RemoteFile::fetch_for_read(uint64_t offset) {
  if (offset >= id_.size)
    return make_error(ErrorCode::out_of_bounds, id_.label, offset, "read past the end of the file");
  bool head_done;
  {
    std::lock_guard lock(mutex_);
    head_done = head_done_;
  }
  if (!head_done && offset < kChunkBytes) AKV_TRY(ensure_head());
  std::vector<Span> spans;
  {
    std::lock_guard lock(mutex_);
    const uint64_t c = offset / kChunkBytes;
    if (!chunk_has(c)) {
      uint64_t begin = c * kChunkBytes, end;
      if (head_extent_ != 0 && offset < head_extent_) {
        end = head_extent_;   // the rest of the header in one request
      } else {
        // Reads in order widen the window; a jump starts it again small.
        window_chunks_ = last_chunk_ != ~uint64_t{0} && c >= last_chunk_ && c <= last_chunk_ + window_chunks_ + 1
                             ? std::min(kMaxWindowChunks, window_chunks_ * 2)
                             : 4;
        end = begin + window_chunks_ * kChunkBytes;
      }
      auto missing = missing_spans(
          begin, end, end - begin > kMaxRequestBytes && offset < head_extent_ ? ~uint64_t{0} : kMaxRequestBytes);
      // The first run of missing chunks from the one read: one request.
      if (!missing.empty()) spans.push_back(missing.front());
      last_chunk_ = c;
    }
  }
  if (!spans.empty()) AKV_TRY(fetch_spans(std::move(spans)));
  auto span = fetched_span(offset, kMaxRequestBytes);
  if (span.first == span.second) {
    std::string why = last_error();
    return make_error(ErrorCode::network, id_.label, offset, why.empty() ? "the bytes could not be fetched" : why);
  }
  return span;
}

}   // namespace akview::remote
