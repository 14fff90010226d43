// HTTP(S) by libcurl for remote models: GET and Range requests, many at once on one multi handle
// (HTTP/2 streams share a connection where the server has it; connections are reused between
// batches), redirects followed by hand so the token goes to the Hub's host only, retries with
// backoff on 429 / 5xx / dropped connections (Retry-After honoured), and every answer checked
// against what was asked: a Range request answered with 200 (the whole file) or with more bytes
// than asked is stopped on its first bytes and refused. TLS verification is always on; the CA file
// comes from CURL_CA_BUNDLE, SSL_CERT_FILE or REQUESTS_CA_BUNDLE when set.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace akview::remote {

struct HttpResponse;

struct HttpRequest {
  std::string url;
  bool has_range = false;
  uint64_t range_begin = 0;   // [begin, end) in bytes
  uint64_t range_end = 0;
  std::string if_range;                 // a validator (strong ETag or HTTP date) the bytes must still have
  bool allow_short = false;             // the range may end early at the file's end (the size is not known yet)
  uint8_t* dest = nullptr;              // Range requests write here (range_end - range_begin bytes) ...
  int dest_fd = -1;                     // ... or into this file at their own offsets (pwrite), when it is set,
  std::function<int()> dest_fd_later;   // ... or into the file this gives on the first bytes (it may wait
                                        // while the file is made; < 0: it could not be made)
  uint64_t max_body = 64ull << 20;      // other requests: the largest body kept (longer is refused)
  std::string accept;                   // Accept header, when the server needs one (registry manifests)
  std::string label;                    // what the request is for, in messages ("model.safetensors")
  // Called once, when the first `early_bytes` bytes of a range's 206 body are in, on the thread that
  // runs the requests, with those bytes and the answer as it stands (its URL after redirects, its
  // headers): the requests it returns join the run at once (a header's rest, asked while its first
  // range is still on its way). run()'s on_done sees them as it sees its own additions.
  size_t early_bytes = 0;
  std::function<std::vector<HttpRequest>(std::span<const uint8_t> first, const HttpResponse& so_far)> on_early;
};

struct HttpResponse {
  long status = 0;
  std::string url;    // the URL that answered last (after redirects)
  std::string body;   // for requests without dest
  uint64_t body_bytes = 0;
  uint64_t total_size = 0;   // from Content-Range (the file's size), or Content-Length of a 200
  // Lower-case header names of the last answer; the first redirect's headers are kept apart
  // (the Hub puts X-Repo-Commit / X-Linked-Etag on its resolve answer, not on the CDN's).
  std::map<std::string, std::string> headers;
  std::map<std::string, std::string> first_headers;
  int redirects = 0;
  std::string header(const std::string& name) const;   // last answer, else the first
};

// What the client has done since it started (the TUI's title bar and progress line).
struct TransferStats {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t in_flight = 0;
  double busy_seconds = 0;   // wall time with at least one transfer running
};

class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Called on the running thread as each request ends (in the order they end), with its index and
  // result; the requests it returns join the same run (their indexes follow all before them), so a
  // request that depends on another's answer starts as soon as that answer is in, not a round later.
  using OnDone = std::function<std::vector<HttpRequest>(size_t index, const Result<HttpResponse>& result)>;

  // Runs every request to completion (parallel, bounded connections); one result per request
  // (followed by those of the requests `on_done` added).
  std::vector<Result<HttpResponse>> run(std::span<const HttpRequest> requests, const OnDone& on_done = {});
  Result<HttpResponse> run_one(const HttpRequest& request);

  // Stops every transfer that is running now: they fail with "cancelled" (later runs go ahead).
  void cancel();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process's client (one connection pool, one token policy).
HttpClient& http_client();
TransferStats transfer_stats();
// The Hub's address (HF_ENDPOINT, else https://huggingface.co), without a trailing slash.
std::string hub_endpoint();
// With AKVIEW_HTTP_TRACE set: `what` on stderr with the seconds since the client started (the open's
// phases between the answers the client prints).
void trace_phase(const std::string& what);
// scheme://host[:port] of a URL, lower-case ("" when it is not an http(s) URL).
std::string url_origin(const std::string& url);

}   // namespace akview::remote
