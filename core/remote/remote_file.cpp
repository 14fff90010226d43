// Remote bytes into the cache's stand-in files (see remote_file.hpp).
#include "core/remote/remote_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "core/remote/head_extent.hpp"
#include "core/remote/http.hpp"

namespace akview::remote {
namespace {

constexpr uint64_t kMaxRequestBytes = 16ull << 20;
constexpr uint64_t kMaxWholeRequestBytes = 256ull << 20;   // a file fetched whole: one request up to this
constexpr uint64_t kFirstWindowBytes = 1ull << 20;         // read-ahead starts at 1 MiB ...
constexpr uint64_t kMaxWindowBytes = 16ull << 20;          // ... and grows to 16 MiB while reads run in order
constexpr double kByteUrlSeconds = 600;                    // a CDN's signed URL is reused this long
// An estimated header's rest ends at a multiple of this: the slack estimates had when it was the
// cache's chunk (one that falls short costs a third request).
constexpr uint64_t kEstimateRoundBytes = 256 << 10;
// Version 2: 16 KiB chunks, kept as runs (version 1: a bitmap of 256 KiB chunks, not read).
constexpr const char* kSidecarMagic = "akview-remote 2";

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The record of a cache file's fetched chunks: its extended attribute kFetchedAttribute, one setxattr
// (atomic) a save. Where the file system has no user attributes or refuses one this long (ext4
// keeps a value in one 4 KiB block: ~250 runs), a hidden sidecar file beside it, written to a
// temporary and renamed over: two file creations and a rename a save, which for a 163-shard open
// were 164 of each (8-40 ms of the fetching thread while the last headers were parsed).
// AKVIEW_CACHE_RECORDS=sidecars keeps the records in sidecar files as a file system without
// attributes does.
bool records_in_attributes() {
  static const bool yes = [] {
    const char* v = std::getenv("AKVIEW_CACHE_RECORDS");
    return v == nullptr || std::strcmp(v, "sidecars") != 0;
  }();
  return yes;
}

std::string read_record_attribute(int fd) {
  std::string v(512, '\0');
  for (int tries = 0; tries < 3; ++tries) {
    const ssize_t n = fgetxattr(fd, kFetchedAttribute, v.data(), v.size());
    if (n >= 0) {
      v.resize(static_cast<size_t>(n));
      return v;
    }
    if (errno != ERANGE) return {};
    const ssize_t size = fgetxattr(fd, kFetchedAttribute, nullptr, 0);   // how long it is now
    if (size <= 0 || size > (1 << 20)) return {};
    v.resize(static_cast<size_t>(size));
  }
  return {};
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

Result<std::shared_ptr<RemoteFile>> RemoteFile::open(RemoteIdentity identity, std::string standin_path,
                                                     bool defer_create) {
  std::shared_ptr<RemoteFile> f(new RemoteFile());
  f->id_ = std::move(identity);
  f->path_ = std::move(standin_path);
  f->sidecar_ = sidecar_path(f->path_);
  const uint64_t chunks = (f->id_.size + kChunkBytes - 1) / kChunkBytes;
  f->bits_.assign((chunks + 63) / 64, 0);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(f->path_).parent_path(), ec);
  struct stat st {};
  if (defer_create && stat(f->path_.c_str(), &st) != 0 && errno == ENOENT) {
    f->creating_ = true;   // nothing fetched before: create_standin() makes it
    return f;
  }
  f->fd_ = ::open(f->path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (f->fd_ < 0)
    return make_error(ErrorCode::io, f->path_, kNoOffset,
                      fmt::format("cannot create the cache file: {}", std::strerror(errno)));
  // What an earlier run fetched, if it was fetched under the same identity: the record in the
  // file's attribute, else in its sidecar.
  std::string record = read_record_attribute(f->fd_);
  bool reuse = false;
  if (!record.empty()) {
    std::istringstream in(record);
    reuse = f->load_record(in);
  } else if (std::ifstream in(f->sidecar_, std::ios::binary); in) {
    f->sidecar_file_ = true;
    reuse = f->load_record(in);
  }
  if (!reuse || fstat(f->fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) != f->id_.size) {
    std::fill(f->bits_.begin(), f->bits_.end(), 0);
    f->validator_.clear();
    AKV_TRY(f->make_standin(f->fd_));
  }
  return f;
}

bool RemoteFile::load_record(std::istream& in) {
  const uint64_t chunks = (id_.size + kChunkBytes - 1) / kChunkBytes;
  std::string magic, url, validator, linked, size_text;
  if (!(std::getline(in, magic) && magic == kSidecarMagic && std::getline(in, url) && std::getline(in, size_text) &&
        std::getline(in, validator) && std::getline(in, linked)))
    return false;
  bool reuse = size_text == std::to_string(id_.size) && linked == id_.linked_etag;
  // The fetched chunks as runs, "FIRST COUNT" a line; one out of range voids the record.
  uint64_t first = 0, count = 0;
  while (reuse && in >> first >> count) {
    if (count == 0 || first >= chunks || count > chunks - first) reuse = false;
    else mark(first * kChunkBytes, (first + count) * kChunkBytes);
  }
  if (reuse && !in.eof()) reuse = false;   // not a number where a run was expected
  if (reuse) validator_ = validator;
  return reuse;
}

Status RemoteFile::make_standin(int& fd) const {
  if (fd < 0) fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error(ErrorCode::io, path_, kNoOffset,
                      fmt::format("cannot create the cache file: {}", std::strerror(errno)));
  // Old bytes are cut off first, but a new (empty) file is only sized: on ext4 a truncation to
  // zero marks the file for writeback when it is closed (auto_da_alloc, for programs that rewrite
  // a file in place), which made the exit of a 163-shard open write its 108 MB of headers to disk
  // (0.1-0.2 s of close() calls).
  struct stat st {};
  const bool empty = fstat(fd, &st) == 0 && st.st_size == 0;
  if ((!empty && ftruncate(fd, 0) != 0) || ftruncate(fd, static_cast<off_t>(id_.size)) != 0)
    return make_error(ErrorCode::io, path_, kNoOffset,
                      fmt::format("cannot size the cache file: {}", std::strerror(errno)));
  // An old record would claim chunks this file no longer holds; a new one is written with the first
  // fetch (a new file has no attribute).
  if (!empty) fremovexattr(fd, kFetchedAttribute);
  std::remove(sidecar_.c_str());
  return {};
}

Status RemoteFile::create_standin() {
  {
    std::lock_guard lock(mutex_);
    if (!creating_) return {};
  }
  // Made without the lock, which the fetch holds while it asks for this file's bytes; fd_ is set
  // under it (fd() and the requests' writes wait for creating_ to clear).
  int fd = -1;
  Status made = make_standin(fd);
  {
    std::lock_guard lock(mutex_);
    if (made.ok()) {
      fd_ = fd;
    } else {
      if (fd >= 0) ::close(fd);
      last_error_ = made.error().to_string();
      create_status_ = made;
    }
    creating_ = false;
  }
  created_cv_.notify_all();
  return made;
}

int RemoteFile::fd() const {
  std::unique_lock lock(mutex_);
  created_cv_.wait(lock, [&] { return !creating_; });
  return fd_;
}

RemoteFile::~RemoteFile() {
  if (fd_ >= 0) ::close(fd_);
}

HttpRequest RemoteFile::range_request(Span s, bool at_origin) const {
  HttpRequest r;
  r.url = !at_origin && !byte_url_.empty() && now_seconds() - byte_url_at_ < kByteUrlSeconds ? byte_url_ : id_.url;
  r.has_range = true;
  r.range_begin = s.begin;
  r.range_end = s.end;
  r.if_range = validator_;
  r.label = id_.label;
  // Straight into the stand-in (marked fetched only once whole), once it is made.
  if (!creating_ && fd_ >= 0) r.dest_fd = fd_;
  else r.dest_fd_later = [this] { return fd(); };   // -1 where it could not be made: the answer is refused
  return r;
}

void RemoteFile::save_record() {
  std::string record =
      fmt::format("{}\n{}\n{}\n{}\n{}\n", kSidecarMagic, id_.url, id_.size, validator_, id_.linked_etag);
  // A run starts at a set bit after a clear one and ends at the next clear bit, found a word at a
  // time (a 4 GB file has 2^18 chunks, a few of them fetched).
  const uint64_t words = bits_.size();
  auto next = [&](uint64_t from, bool set) {   // the first chunk >= from whose bit is `set`
    for (uint64_t w = from / 64; w < words; ++w) {
      uint64_t word = set ? bits_[w] : ~bits_[w];
      if (w == from / 64) word &= ~uint64_t{0} << (from % 64);
      if (word != 0) return w * 64 + static_cast<uint64_t>(__builtin_ctzll(word));
    }
    return words * 64;
  };
  for (uint64_t c = next(0, true); c < words * 64;) {
    const uint64_t e = next(c, false);
    fmt::format_to(std::back_inserter(record), "{} {}\n", c, e - c);
    c = next(e, true);
  }
  if (fd_ >= 0 && records_in_attributes() && fsetxattr(fd_, kFetchedAttribute, record.data(), record.size(), 0) == 0) {
    if (sidecar_file_) std::remove(sidecar_.c_str());   // an older record, which the attribute now outranks
    sidecar_file_ = false;
    return;
  }
  if (fd_ >= 0) fremovexattr(fd_, kFetchedAttribute);   // an older, shorter record would outrank the sidecar
  const std::string tmp = sidecar_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << record;
  }
  std::rename(tmp.c_str(), sidecar_.c_str());
  sidecar_file_ = true;
}

bool RemoteFile::chunk_has(uint64_t c) const { return (bits_[c / 64] >> (c % 64)) & 1; }

void RemoteFile::mark(uint64_t begin, uint64_t end) {
  for (uint64_t c = begin / kChunkBytes; c * kChunkBytes < end; ++c) bits_[c / 64] |= uint64_t{1} << (c % 64);
}

bool RemoteFile::has(uint64_t offset, uint64_t length) const { return missing_bytes(offset, length) == 0; }

uint64_t RemoteFile::chunks_fetched(uint64_t first, uint64_t end) const {
  uint64_t n = 0;
  while (first < end) {   // a word at a time: a tensor of a big model spans thousands of 16 KiB chunks
    const uint64_t w = first / 64, lo = first % 64, hi = std::min<uint64_t>(64, lo + (end - first));
    const uint64_t mask = (hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1) & (~uint64_t{0} << lo);
    n += static_cast<uint64_t>(__builtin_popcountll(bits_[w] & mask));
    first += hi - lo;
  }
  return n;
}

uint64_t RemoteFile::missing_bytes(uint64_t offset, uint64_t length) const {
  std::lock_guard lock(mutex_);
  if (length == 0 || offset >= id_.size) return 0;
  const uint64_t end = std::min(id_.size, offset + length);
  const uint64_t first = offset / kChunkBytes, last = (end - 1) / kChunkBytes;
  if (first == last) return chunk_has(first) ? 0 : end - offset;
  // The two end chunks in part, the ones between whole.
  uint64_t missing = (last - first - 1 - chunks_fetched(first + 1, last)) * kChunkBytes;
  if (!chunk_has(first)) missing += (first + 1) * kChunkBytes - offset;
  if (!chunk_has(last)) missing += end - last * kChunkBytes;
  return missing;
}

uint64_t RemoteFile::fetched_bytes() const {
  std::lock_guard lock(mutex_);
  return std::min(chunks_fetched(0, bits_.size() * 64) * kChunkBytes, id_.size);
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

Status RemoteFile::accept(Span s, const Result<HttpResponse>& r) {
  {
    std::lock_guard lock(mutex_);
    if (!create_status_.ok()) return create_status_;   // the answer had nowhere to go
  }
  if (!r) {
    set_error(r.error());
    return r.error();
  }
  const HttpResponse& resp = *r;
  if (resp.total_size != 0 && resp.total_size != id_.size) {
    Error e = make_error(ErrorCode::changed, id_.label, kNoOffset,
                         fmt::format("changed on the server since it was opened: it is {} bytes, it was {}; R reloads",
                                     resp.total_size, id_.size));
    set_error(e);
    return e;
  }
  const std::string linked = resp.first_headers.count("x-linked-etag") ? resp.first_headers.at("x-linked-etag") : "";
  if (!linked.empty() && !id_.linked_etag.empty()) {
    auto strip = [](std::string v) {
      if (v.starts_with("W/")) v.erase(0, 2);
      std::erase(v, '"');
      return v;
    };
    if (strip(linked) != strip(id_.linked_etag)) {
      Error e = make_error(ErrorCode::changed, id_.label, kNoOffset,
                           "changed on the server since it was listed (its content hash differs); R reloads");
      set_error(e);
      return e;
    }
  }
  std::lock_guard lock(mutex_);
  if (validator_.empty()) validator_ = validator_of(resp);
  if (resp.redirects > 0) {
    byte_url_ = resp.url;
    byte_url_at_ = now_seconds();
  }
  mark(s.begin, s.end);
  return {};
}

// One round of range requests over several files (the shards of a model), all at once. Each file's
// record is saved after it unless `save` is false (the caller saves them once after its last round).
Status RemoteFile::fetch_many(std::span<RemoteFile* const> files, std::span<const std::vector<Span>> spans, bool save) {
  std::vector<HttpRequest> requests;
  std::vector<std::pair<size_t, Span>> owners;
  for (size_t i = 0; i < files.size(); ++i) {
    RemoteFile& f = *files[i];
    std::lock_guard lock(f.mutex_);
    for (const Span& s : spans[i]) {
      requests.push_back(f.range_request(s, false));
      owners.emplace_back(i, s);
    }
  }
  if (requests.empty()) return {};
  auto results = http_client().run(requests);
  Status status;
  for (size_t k = 0; k < results.size(); ++k) {
    RemoteFile& f = *files[owners[k].first];
    auto& r = results[k];
    // A CDN's signed URL that expired (403) or went away: back to the origin once.
    if (!r && requests[k].url != f.id_.url && r.error().code == ErrorCode::network) {
      HttpRequest again = requests[k];
      again.url = f.id_.url;
      if (auto second = http_client().run_one(again)) r = std::move(second);
    }
    Status one = f.accept(owners[k].second, r);
    if (!one.ok() && status.ok()) status = one;
  }
  if (save)
    for (RemoteFile* f : files) {
      std::lock_guard lock(f->mutex_);
      f->save_record();
    }
  return status;
}

Status RemoteFile::fetch_spans(std::vector<Span> spans) {
  RemoteFile* self = this;
  std::vector<Span> copy = std::move(spans);
  return fetch_many(std::span<RemoteFile* const>(&self, 1), std::span<const std::vector<Span>>(&copy, 1));
}

uint64_t RemoteFile::head_extent_locked() {
  std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(id_.size, kHeadFirstBytes)));
  if (!head.empty() && pread(fd_, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) return head.size();
  // An estimate: a GGUF header walked past the bytes at hand.
  const HeadExtent e = estimate_head_extent(head, id_.size);
  return e.exact ? e.bytes
                 : std::min(id_.size, (e.bytes + kEstimateRoundBytes - 1) / kEstimateRoundBytes * kEstimateRoundBytes);
}

Status RemoteFile::ensure_heads(std::span<const std::shared_ptr<RemoteFile>> files,
                                std::span<const std::shared_ptr<RemoteFile>> whole) {
  for (const auto& list : {whole, files})
    for (const auto& f : list) (void)f->wait_pending();   // what a batch fetches is not asked again
  return fetch_heads(files, whole);
}

Status RemoteFile::fetch_heads(std::span<const std::shared_ptr<RemoteFile>> files,
                               std::span<const std::shared_ptr<RemoteFile>> whole) {
  // What each request is for: its file, its range, and where its failure ranks in the status
  // (`rank`: the first requests in the files' order, then the headers' rests in the files' order).
  struct Job {
    RemoteFile* file;
    Span span;
    size_t rank;
    bool head_first;   // a header's first chunk: its rest follows once it is in
    bool retried;      // asked again at the origin after the CDN's URL failed
  };
  std::vector<Job> jobs;
  std::vector<HttpRequest> requests;
  std::vector<RemoteFile*> touched;
  std::map<RemoteFile*, size_t> outstanding;   // requests of each file not ended yet
  const size_t n_first = whole.size() + files.size();
  std::map<RemoteFile*, size_t> position;   // a file's place in `files`, for its rest's rank
  for (size_t i = 0; i < files.size(); ++i) position.emplace(files[i].get(), i);
  auto request_for = [](RemoteFile& f, Span s, bool at_origin) {
    std::lock_guard lock(f.mutex_);
    return f.range_request(s, at_origin);
  };
  // The rest of a header past `from`: one request from its first missing chunk to its end, which
  // `extent` gives (0: judged from the first chunk, which is in).
  auto rest_of_head = [](RemoteFile& f, uint64_t from = 0, uint64_t extent = 0) -> std::optional<Span> {
    std::lock_guard lock(f.mutex_);
    if (extent != 0) f.head_extent_ = extent;
    else if (f.head_extent_ == 0) f.head_extent_ = f.head_extent_locked();
    f.head_done_ = true;
    auto missing = f.missing_spans(from, f.head_extent_, ~uint64_t{0});
    if (missing.empty()) return std::nullopt;
    return Span{missing.front().begin, missing.back().end};
  };
  // A header's rest as one more job of the run.
  auto ask_rest = [&](RemoteFile& f, Span rest, HttpRequest r) {
    jobs.push_back({&f, rest, n_first + position[&f], false, false});
    requests.push_back(std::move(r));
    ++outstanding[&f];
    return requests.back();
  };
  // A header whose length its first bytes say (SafeTensors: 8 bytes, then '{') has its rest asked as
  // soon as they are in, while its first range is still on its way, not a round trip after that
  // range has ended: of the 163-shard open's two round trips to the CDN, the second then overlaps
  // the first's transfer. The rest goes where the first range was answered from (the CDN's URL),
  // under the validator that answer gave.
  auto ask_rest_early = [&](HttpRequest& first, size_t k) {
    first.early_bytes = 9;
    first.on_early = [&, k](std::span<const uint8_t> head, const HttpResponse& so_far) -> std::vector<HttpRequest> {
      RemoteFile& f = *jobs[k].file;
      const uint64_t first_end = jobs[k].span.end;
      const HeadExtent e = estimate_head_extent(head, f.id_.size);
      if (!e.exact || e.bytes <= first_end) return {};
      const auto rest = rest_of_head(f, first_end, e.bytes);
      if (!rest) return {};
      HttpRequest r = request_for(f, *rest, false);
      if (r.if_range.empty()) r.if_range = validator_of(so_far);
      r.url = so_far.url;
      jobs[k].head_first = false;   // its rest is asked: not again when it ends
      return {ask_rest(f, *rest, std::move(r))};
    };
  };
  for (size_t i = 0; i < whole.size(); ++i) {
    RemoteFile& f = *whole[i];
    std::vector<Span> missing;
    {
      std::lock_guard lock(f.mutex_);
      missing = f.missing_spans(0, f.id_.size, kMaxWholeRequestBytes);
    }
    for (const Span& s : missing) {
      jobs.push_back({&f, s, i, false, false});
      requests.push_back(request_for(f, s, false));
      ++outstanding[&f];
    }
  }
  std::vector<std::pair<RemoteFile*, Span>> rests;   // headers whose first chunk is here already
  for (size_t i = 0; i < files.size(); ++i) {
    RemoteFile& f = *files[i];
    bool first_missing;
    {
      std::lock_guard lock(f.mutex_);
      if (f.id_.size == 0) continue;
      first_missing = !f.chunk_has(0);
    }
    if (first_missing) {
      const Span s{0, std::min(f.id_.size, kHeadFirstBytes)};
      jobs.push_back({&f, s, whole.size() + i, true, false});
      requests.push_back(request_for(f, s, false));
      ask_rest_early(requests.back(), jobs.size() - 1);
      ++outstanding[&f];
    } else if (auto rest = rest_of_head(f)) {
      ask_rest(f, *rest, request_for(f, *rest, false));
    }
  }
  // Files with nothing to fetch are not pending (a HeadFetch marked them all before it started).
  for (const auto& list : {whole, files})
    for (const auto& f : list)
      if (!outstanding.count(f.get())) f->set_pending(false);
  for (auto& [f, n] : outstanding) {
    f->set_pending(true);
    touched.push_back(f);
  }
  std::map<size_t, Error> failures;   // by rank
  std::map<RemoteFile*, Status> file_status;
  auto on_done = [&](size_t k, const Result<HttpResponse>& r) -> std::vector<HttpRequest> {
    const Job job = jobs[k];
    RemoteFile& f = *job.file;
    std::vector<HttpRequest> more;
    // A CDN's signed URL that expired (403) or went away: back to the origin once.
    if (!r && !job.retried && requests[k].url != f.id_.url && r.error().code == ErrorCode::network) {
      jobs.push_back({job.file, job.span, job.rank, job.head_first, true});
      requests.push_back(request_for(f, job.span, true));
      more.push_back(requests.back());
      return more;
    }
    Status one = f.accept(job.span, r);
    if (!one.ok()) {
      failures.emplace(job.rank, one.error());
      if (file_status[&f].ok()) file_status[&f] = one;
    } else if (job.head_first) {
      if (auto rest = rest_of_head(f)) more.push_back(ask_rest(f, *rest, request_for(f, *rest, false)));
    }
    if (--outstanding[&f] == 0) f.set_pending(false, file_status[&f]);
    return more;
  };
  if (!requests.empty()) {
    // `requests` grows while the run goes on; the run holds its own copy of the first ones.
    const std::vector<HttpRequest> first = requests;
    http_client().run(first, on_done);
  }
  // The records are saved once, after the last answer: saving each between the first chunk and the
  // rest put 164 saves (then sidecar files: file creations and renames, 50-130 ms on a shared host)
  // in the middle of a 163-shard open.
  std::sort(touched.begin(), touched.end());
  for (RemoteFile* f : touched) {
    std::lock_guard lock(f->mutex_);
    f->save_record();
  }
  return failures.empty() ? Status{} : Status{failures.begin()->second};
}

void RemoteFile::set_pending(bool pending, const Status& status) {
  {
    std::lock_guard lock(mutex_);
    pending_ = pending;
    pending_status_ = status;
  }
  if (!pending) pending_cv_.notify_all();
}

Status RemoteFile::wait_pending() {
  std::unique_lock lock(mutex_);
  pending_cv_.wait(lock, [&] { return !pending_; });
  return pending_status_;
}

void HeadFetch::start(std::vector<std::shared_ptr<RemoteFile>> files, std::vector<std::shared_ptr<RemoteFile>> whole) {
  (void)finish();   // the previous batch's status was for the open that waited on it
  for (const auto& list : {std::cref(whole), std::cref(files)})
    for (const auto& f : list.get()) f->set_pending(true);
  files_ = files;
  files_.insert(files_.end(), whole.begin(), whole.end());
  thread_ = std::thread(
      [this, files = std::move(files), whole = std::move(whole)] { status_ = RemoteFile::fetch_heads(files, whole); });
}

Status HeadFetch::finish() {
  if (thread_.joinable()) thread_.join();
  // The batch's failure was for the open that waited on it; later reads try again.
  for (const auto& f : files_) f->set_pending(false);
  files_.clear();
  return status_;
}

Status RemoteFile::ensure_whole(std::span<const std::shared_ptr<RemoteFile>> files) { return ensure_heads({}, files); }

Status RemoteFile::seed(std::span<const uint8_t> bytes, const std::string& validator) {
  std::unique_lock lock(mutex_);
  created_cv_.wait(lock, [&] { return !creating_; });
  if (fd_ < 0) return make_error(ErrorCode::io, path_, 0, "the cache file could not be made");
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
  save_record();
  return {};
}

Status RemoteFile::ensure_head() {
  (void)wait_pending();   // a batch's bytes are not asked for twice; a failure there is tried again
  std::shared_ptr<RemoteFile> self(std::shared_ptr<RemoteFile>{}, this);   // non-owning
  return ensure_heads(std::span<const std::shared_ptr<RemoteFile>>(&self, 1));
}

Status RemoteFile::ensure(uint64_t offset, uint64_t length, uint64_t max_request) {
  (void)wait_pending();   // a batch's bytes are not asked for twice; a failure there is tried again
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
  (void)wait_pending();   // a batch's bytes are not asked for twice; a failure there is tried again
  bool head_done;
  {
    std::lock_guard lock(mutex_);
    head_done = head_done_;
  }
  if (!head_done && offset < kHeadFirstBytes) AKV_TRY(ensure_head());
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
        const bool in_order =
            last_chunk_ != ~uint64_t{0} && c >= last_chunk_ && c <= last_chunk_ + window_bytes_ / kChunkBytes + 1;
        window_bytes_ = in_order ? std::min(kMaxWindowBytes, window_bytes_ * 2) : kFirstWindowBytes;
        end = begin + window_bytes_;
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
