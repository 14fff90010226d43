// One file of a remote model, read by HTTP Range into the on-disk cache.
//
// The cache holds each remote file as a sparse local file of the remote size (the "stand-in", laid
// out where the model's folder lies in the cache, so the format openers find shards, configs and
// blobs beside each other as on disk) and a record of which 16 KiB chunks hold fetched bytes and the
// validators the bytes were fetched under: the stand-in's extended attribute user.akview.fetched,
// or, where the file system refuses it, a hidden sidecar file beside it. Bytes are fetched in
// whole chunks:
//  * the header: a first speculative range of 256 KiB, then, when the format's header is longer
//    (head_extent.hpp), the rest of it in one more request, which ends within a chunk of an exact
//    header and at the next 256 KiB past an estimated one;
//  * data: the chunks a read touches, growing a read-ahead window (1 MiB to 16 MiB) while reads run
//    in order.
// Every range after the first is conditional on the validator of the server that serves the bytes
// (If-Range: its strong ETag, else Last-Modified), so a file that changes on the server is an
// ErrorCode::changed error, never a mix of two versions.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/result.hpp"

namespace akview::remote {

// The extended attribute of a cache file that records its fetched chunks (remote_file.cpp).
inline constexpr char kFetchedAttribute[] = "user.akview.fetched";

struct HttpRequest;
struct HttpResponse;

// The cache's unit: what the record marks fetched and what a mapping installs. Small, so that a
// header's rest ends close to the header (a 163-shard model's 61.7 MiB of headers came as 81.5 MiB
// in 256 KiB chunks, as 63.6 MiB in these).
inline constexpr uint64_t kChunkBytes = 16 << 10;
// The first speculative range of a header (whole chunks): most headers fit in it.
inline constexpr uint64_t kHeadFirstBytes = 256 << 10;
static_assert(kHeadFirstBytes % kChunkBytes == 0);

// Who the file is on the server, as recorded when it was first listed or fetched.
struct RemoteIdentity {
  std::string url;     // where a range is asked for (the Hub's resolve URL, a registry blob, a URL)
  std::string label;   // how messages name it ("hf://org/repo/model.safetensors")
  uint64_t size = 0;
  std::string commit;        // the Hub's commit the revision resolved to ("" elsewhere)
  std::string linked_etag;   // what the listing says the content is (the Hub's LFS sha256, a blob digest)
};

class RemoteFile {
 public:
  // Opens (or creates) the stand-in at `standin_path` for `identity`. With `defer_create`, a stand-in
  // that is not there yet is made by create_standin() instead, so that an open's first requests go
  // out before its files are made (a model of 164 files took 30-100 ms to lay out); until then fd()
  // and the writes of this file's requests wait for it.
  static Result<std::shared_ptr<RemoteFile>> open(RemoteIdentity identity, std::string standin_path,
                                                  bool defer_create = false);
  ~RemoteFile();
  // Makes a deferred stand-in (else nothing); a failure is every later read's.
  Status create_standin();

  const RemoteIdentity& identity() const { return id_; }
  const std::string& standin_path() const { return path_; }
  uint64_t size() const { return id_.size; }
  int fd() const;   // -1 when the stand-in could not be made

  // The header: the first chunk, then the rest of the header the format declares, in ≤ 2 requests.
  Status ensure_head();
  // Every byte of [offset, offset + length) fetched (missing runs in requests of ≤ `max_request`
  // bytes, all at once).
  Status ensure(uint64_t offset, uint64_t length, uint64_t max_request = 16ull << 20);
  // For a read that touched `offset` with nothing fetched there: the chunks the read-ahead policy
  // picks (the header's rest, or a window that grows while reads run in order); returns the fetched
  // byte span [begin, end) that holds `offset`.
  Result<std::pair<uint64_t, uint64_t>> fetch_for_read(uint64_t offset);
  // Fetched bytes around `offset`: the largest run of fetched chunks holding it, capped at `cap` bytes.
  std::pair<uint64_t, uint64_t> fetched_span(uint64_t offset, uint64_t cap) const;
  bool has(uint64_t offset, uint64_t length) const;
  uint64_t missing_bytes(uint64_t offset, uint64_t length) const;
  uint64_t fetched_bytes() const;

  // The last failure, for the message of a read that could not be served.
  std::string last_error() const;

  // Fetches the first chunk of many files at once, then the rest of each header in one more
  // request, asked as soon as that file's first chunk is in (not after every file's); the files of
  // `whole` (configs, an index) come whole beside the first chunks. The status is the first failure
  // of the first requests (in the files' order, `whole` first), else of the headers' rests.
  static Status ensure_heads(std::span<const std::shared_ptr<RemoteFile>> files,
                             std::span<const std::shared_ptr<RemoteFile>> whole = {});
  // While a batch of ensure_heads (HeadFetch) is fetching this file: waits until its bytes are in,
  // and says whether they came (else the batch's failure, until HeadFetch::finish). Every fetch
  // (ensure, ensure_head, fetch_for_read) waits first, so the batch's requests are never asked twice.
  Status wait_pending();
  // Every byte of each file, all at once, one request a file up to 256 MiB (small text files:
  // configs, indexes, manifests' layers).
  static Status ensure_whole(std::span<const std::shared_ptr<RemoteFile>> files);
  // Bytes fetched by someone else (the first range of a URL, asked before its size was known):
  // [0, bytes.size()) must end on a chunk boundary or at the end of the file.
  Status seed(std::span<const uint8_t> bytes, const std::string& validator);

 private:
  RemoteFile() = default;
  struct Span {
    uint64_t begin, end;
  };
  friend class HeadFetch;
  Status fetch_spans(std::vector<Span> spans);   // caller holds no lock
  // A range request for `s` into the stand-in (mutex_ held); `at_origin` skips a CDN's URL.
  HttpRequest range_request(Span s, bool at_origin) const;
  Status make_standin(int& fd) const;   // creates (fd < 0) and sizes the stand-in; mutex_ not needed
  // One answer for [s.begin, s.end): checked against what the file was, and its chunks marked.
  Status accept(Span s, const Result<HttpResponse>& r);
  void set_pending(bool pending, const Status& status = {});
  // ensure_heads without waiting for a batch first (HeadFetch's thread is that batch).
  static Status fetch_heads(std::span<const std::shared_ptr<RemoteFile>> files,
                            std::span<const std::shared_ptr<RemoteFile>> whole);
  static Status fetch_many(std::span<RemoteFile* const> files, std::span<const std::vector<Span>> spans,
                           bool save = true);
  void mark(uint64_t begin, uint64_t end);
  bool chunk_has(uint64_t chunk) const;
  uint64_t chunks_fetched(uint64_t first, uint64_t end) const;   // set bits among chunks [first, end)
  std::vector<Span> missing_spans(uint64_t begin, uint64_t end, uint64_t max_span) const;
  uint64_t head_extent_locked();
  void save_record();                   // the record of the fetched chunks (mutex_ held)
  bool load_record(std::istream& in);   // an earlier record, if it is of this identity (chunks marked)
  void set_error(const Error& e);

  RemoteIdentity id_;
  std::string path_;
  std::string sidecar_;         // where the record goes when the attribute cannot take it
  bool sidecar_file_ = false;   // a sidecar file was read or written (the attribute could not be)
  int fd_ = -1;
  mutable std::mutex mutex_;
  std::vector<uint64_t> bits_;   // one bit per chunk
  std::string validator_;        // If-Range value of the byte server
  std::string byte_url_;         // where the last redirect led (a CDN), reused for later ranges
  double byte_url_at_ = 0;
  uint64_t head_extent_ = 0;   // 0: not known yet
  uint64_t last_chunk_ = ~uint64_t{0};
  uint64_t window_bytes_ = 0;   // the read-ahead window (0: not started)
  std::string last_error_;
  bool head_done_ = false;
  bool pending_ = false;    // a batch of ensure_heads is fetching this file
  Status pending_status_;   // how the last batch ended for it
  std::condition_variable pending_cv_;
  bool creating_ = false;                        // deferred: create_standin() has not run yet
  Status create_status_;                         // how a deferred create_standin() ended
  mutable std::condition_variable created_cv_;   // create_standin() ran
};

// ensure_heads on a thread of its own, so an open parses each header while the others are still on
// the way: start() marks every file pending (their readers wait for their own bytes, see
// wait_pending) and returns at once; finish() joins and returns ensure_heads' status.
class HeadFetch {
 public:
  HeadFetch() = default;
  ~HeadFetch() { (void)finish(); }
  HeadFetch(const HeadFetch&) = delete;
  HeadFetch& operator=(const HeadFetch&) = delete;
  void start(std::vector<std::shared_ptr<RemoteFile>> files, std::vector<std::shared_ptr<RemoteFile>> whole);
  Status finish();

 private:
  std::thread thread_;
  std::vector<std::shared_ptr<RemoteFile>> files_;
  Status status_;
};

}   // namespace akview::remote
