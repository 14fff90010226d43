// The libcurl multi loop behind HttpClient (see http.hpp): one easy handle per hop, redirects and
// retries scheduled by hand, every answer checked against its request as it arrives.
#include "core/remote/http.hpp"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <curl/curl.h>
#include <fmt/format.h>

namespace akview::remote {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxRedirects = 10;
constexpr int kMaxAttempts = 5;   // tries of one hop: the first and four retries
constexpr long kMaxRetryAfterSeconds = 60;
constexpr uint64_t kErrorBodyBytes = 16 << 10;
constexpr long kMaxHostConnections = 6;
constexpr size_t kMaxActive = 256;   // transfers at once (HTTP/2 streams share connections)

long env_seconds(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return end && *end == 0 && n > 0 ? n : fallback;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return std::string(s);
}

std::string ca_bundle() {
  for (const char* name : {"CURL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"})
    if (const char* v = std::getenv(name); v && *v) return v;
  return {};
}

// HF_TOKEN, else $HF_HOME/token (default ~/.cache/huggingface/token), as huggingface_hub reads it.
std::string hub_token() {
  if (const char* t = std::getenv("HF_TOKEN"); t && *t) return trim(t);
  std::string home_dir;
  if (const char* h = std::getenv("HF_HOME"); h && *h) home_dir = h;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) home_dir = std::string(x) + "/huggingface";
  else if (const char* home = std::getenv("HOME"); home && *home) home_dir = std::string(home) + "/.cache/huggingface";
  if (home_dir.empty()) return {};
  std::ifstream in(home_dir + "/token");
  std::string token;
  std::getline(in, token);
  return trim(token);
}

std::atomic<uint64_t> g_requests{0}, g_bytes{0}, g_in_flight{0};
std::mutex g_busy_mutex;
double g_busy_seconds = 0;
Clock::time_point g_busy_since;

void note_start() {
  std::lock_guard lock(g_busy_mutex);
  if (g_in_flight.fetch_add(1) == 0) g_busy_since = Clock::now();
  g_requests.fetch_add(1);
}
void note_end() {
  std::lock_guard lock(g_busy_mutex);
  if (g_in_flight.fetch_sub(1) == 1)
    g_busy_seconds += std::chrono::duration<double>(Clock::now() - g_busy_since).count();
}

// One request's life: hops (redirects) and attempts (retries), and what came back so far.
struct Transfer {
  const HttpRequest* req = nullptr;
  size_t index = 0;
  std::string url;
  int attempt = 0;
  Clock::time_point not_before{};
  CURL* easy = nullptr;
  curl_slist* headers_out = nullptr;
  long status = 0;
  bool headers_done = false;
  std::map<std::string, std::string> headers;
  HttpResponse resp;
  uint64_t written = 0;
  uint64_t expected = 0;   // body bytes the 206's Content-Range announced
  bool empty = false;      // the file is empty (its first range had nothing to give)
  std::string refused;     // set by a callback that stopped the transfer, with the reason
  bool counted = false;
  int fd = -1;              // where the body goes: dest_fd, or dest_fd_later's answer once asked
  std::vector<char> held;   // body bytes not written to fd yet (kHoldBytes at most)
  std::vector<std::vector<char>>* spare = nullptr;   // the run's buffers that no transfer holds
  std::string early;                                 // the body's first bytes, for on_early
  bool early_done = false;                           // on_early was called (never again, retries too)
  std::vector<HttpRequest>* early_added = nullptr;   // what on_early returned, for the run to add
};

// Seconds since the client started, for AKVIEW_HTTP_TRACE.
double trace_clock() {
  static const Clock::time_point start = Clock::now();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool is_redirect(long s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }
bool is_retryable_status(long s) { return s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }
bool is_retryable_curl(CURLcode c) {
  switch (c) {
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

std::string range_text(const HttpRequest& r) { return fmt::format("bytes {}-{}", r.range_begin, r.range_end - 1); }

// "bytes A-B/T" -> A, B, T (T may be '*').
bool parse_content_range(const std::string& v, uint64_t& a, uint64_t& b, uint64_t& total) {
  unsigned long long x = 0, y = 0, t = 0;
  if (std::sscanf(v.c_str(), "bytes %llu-%llu/%llu", &x, &y, &t) == 3) {
    a = x, b = y, total = t;
    return true;
  }
  if (std::sscanf(v.c_str(), "bytes %llu-%llu/*", &x, &y) == 2) {
    a = x, b = y, total = 0;
    return true;
  }
  return false;
}

}   // namespace

std::string HttpResponse::header(const std::string& name) const {
  if (auto it = headers.find(name); it != headers.end()) return it->second;
  if (auto it = first_headers.find(name); it != first_headers.end()) return it->second;
  return {};
}

std::string url_origin(const std::string& url) {
  CURLU* u = curl_url();
  std::string out;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    char *scheme = nullptr, *host = nullptr, *port = nullptr;
    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    if (scheme && host && (std::strcmp(scheme, "http") == 0 || std::strcmp(scheme, "https") == 0))
      out = lower(fmt::format("{}://{}:{}", scheme, host, port ? port : ""));
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
  }
  curl_url_cleanup(u);
  return out;
}

std::string hub_endpoint() {
  std::string e = "https://huggingface.co";
  if (const char* v = std::getenv("HF_ENDPOINT"); v && *v) e = v;
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

// A range's body goes to its cache file in writes of up to this many bytes, held in a buffer until
// then: servers send a body in frames of 8-16 KiB (nginx's HTTP/2 DATA frames, TLS records), and a
// write each made the 163-shard open's 110 MB of headers 9,500 pwrite calls (13 % of its samples);
// in 64 KiB writes, 1,900, and the open 25-40 ms faster (remote_open_bench, interleaved). Every
// stream of a run is under way at once (164 for that open), so a buffer each is 10 MB of new memory:
// 256 KiB (41 MB) made the open slower than 64 KiB, and 32 KiB was slower too (~20 ms, one run).
constexpr size_t kHoldBytes = 64 << 10;

struct HttpClient::Impl {
  CURLSH* share = nullptr;
  std::mutex share_locks[CURL_LOCK_DATA_LAST];
  std::atomic<uint64_t> cancel_generation{0};
  std::string ca;
  std::string token;
  std::string hub_origin;
  bool trace = false;   // AKVIEW_HTTP_TRACE: every answer on stderr
  long connect_timeout = 15;
  long low_speed_time = 30;
  long retry_base_ms = 250;   // retry n waits retry_base_ms << n (n = 1..4), unless Retry-After says

  static void lock_cb(CURL*, curl_lock_data data, curl_lock_access, void* p) {
    static_cast<Impl*>(p)->share_locks[data].lock();
  }
  static void unlock_cb(CURL*, curl_lock_data data, void* p) { static_cast<Impl*>(p)->share_locks[data].unlock(); }

  static size_t on_header(char* data, size_t size, size_t n, void* p) {
    auto* t = static_cast<Transfer*>(p);
    const size_t len = size * n;
    std::string_view line(data, len);
    if (line.starts_with("HTTP/")) {   // a status line: a new answer (after 1xx) starts
      t->headers.clear();
      t->headers_done = false;
      auto sp = line.find(' ');
      t->status =
          sp == std::string_view::npos ? 0 : std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
      return len;
    }
    if (trim(line).empty()) {
      if (t->status >= 100 && t->status < 200) return len;
      t->headers_done = true;
      const HttpRequest& r = *t->req;
      // An empty file has no byte to ask for: a server answers a first range with an empty 200 or a 416.
      const bool empty_file = r.allow_short && ((t->status == 200 && t->headers["content-length"] == "0") ||
                                                (t->status == 416 && t->headers["content-range"] == "bytes */0"));
      if (empty_file) {
        t->status = 206;
        t->expected = 0;
        t->empty = true;
        return len;
      }
      if (r.has_range && t->status == 200) {
        const std::string etag = t->headers.count("etag") ? t->headers["etag"] : "";
        if (!r.if_range.empty() && etag != r.if_range && t->headers["last-modified"] != r.if_range)
          t->refused = "changed";
        else t->refused = "the server ignored the Range request and began sending the whole file (200): stopped";
        return 0;
      }
      if (r.has_range && t->status == 206) {
        uint64_t a = 0, b = 0, total = 0;
        auto it = t->headers.find("content-range");
        const bool parsed = it != t->headers.end() && parse_content_range(it->second, a, b, total);
        const bool short_end = r.allow_short && total != 0 && b + 1 == total && b + 1 < r.range_end;
        if (!parsed || a != r.range_begin || (b + 1 != r.range_end && !short_end)) {
          t->refused = fmt::format("asked for {}, the server answered {}", range_text(r),
                                   it == t->headers.end() ? "206 without Content-Range" : it->second);
          return 0;
        }
        t->expected = b + 1 - a;
      }
      return len;
    }
    auto colon = line.find(':');
    if (colon != std::string_view::npos && t->headers.size() < 200)
      t->headers[lower(std::string(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    return len;
  }

  // A transfer's hold buffer, one its run had left over if there is one.
  static void take_hold_buffer(Transfer& t) {
    if (!t.spare->empty()) {
      t.held = std::move(t.spare->back());
      t.spare->pop_back();
    }
    t.held.reserve(kHoldBytes);
  }
  static void give_hold_buffer(Transfer& t) {
    if (t.held.capacity() == 0) return;
    t.held.clear();
    t.spare->push_back(std::move(t.held));
    t.held = {};
  }

  // Body bytes into the cache file at `at`; false, with the reason in t.refused, when it fails.
  static bool write_at(Transfer& t, const char* data, size_t len, uint64_t at) {
    for (size_t done = 0; done < len;) {
      const ssize_t n = pwrite(t.fd, data + done, len - done, static_cast<off_t>(at + done));
      if (n <= 0) {
        t.refused = fmt::format("cannot write the cache file: {}", std::strerror(errno));
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // The held bytes end where the body written so far ends.
  static bool flush(Transfer& t) {
    if (t.held.empty()) return true;
    const bool ok = write_at(t, t.held.data(), t.held.size(), t.req->range_begin + t.written - t.held.size());
    t.held.clear();
    return ok;
  }

  static size_t on_body(char* data, size_t size, size_t n, void* p) {
    auto* t = static_cast<Transfer*>(p);
    const size_t len = size * n;
    const HttpRequest& r = *t->req;
    g_bytes.fetch_add(len, std::memory_order_relaxed);
    if (is_redirect(t->status) || t->status >= 300 || t->status < 200) {   // an error page: keep its start
      if (t->resp.body.size() < kErrorBodyBytes)
        t->resp.body.append(data, std::min<size_t>(len, kErrorBodyBytes - t->resp.body.size()));
      return len;
    }
    if (r.has_range) {
      const uint64_t want = t->expected || t->empty ? t->expected : r.range_end - r.range_begin;
      if (t->written + len > want) {
        t->refused = fmt::format("the server sent more than the {} bytes asked for", want);
        return 0;
      }
      if (t->fd < 0 && r.dest_fd >= 0) t->fd = r.dest_fd;
      if (t->fd < 0 && r.dest_fd_later) {
        t->fd = r.dest_fd_later();
        if (t->fd < 0) {
          t->refused = "the cache file could not be made";
          return 0;
        }
      }
      if (t->fd >= 0) {
        if (t->held.capacity() == 0) take_hold_buffer(*t);
        if (t->held.size() + len > kHoldBytes && !flush(*t)) return 0;
        if (len >= kHoldBytes) {
          if (!write_at(*t, data, len, r.range_begin + t->written)) return 0;
        } else {
          t->held.insert(t->held.end(), data, data + len);
        }
      } else if (r.dest != nullptr) {
        std::memcpy(r.dest + t->written, data, len);
      } else {
        t->refused = "a range with nowhere to go";
        return 0;
      }
      t->written += len;
      if (r.on_early && !t->early_done && t->status == 206) {
        t->early.append(data, std::min(len, r.early_bytes - std::min(r.early_bytes, t->early.size())));
        if (t->early.size() >= r.early_bytes || t->written == want) {
          t->early_done = true;
          HttpResponse so_far;
          so_far.status = t->status;
          so_far.url = t->url;
          so_far.headers = t->headers;
          for (HttpRequest& more :
               r.on_early(std::span(reinterpret_cast<const uint8_t*>(t->early.data()), t->early.size()), so_far))
            t->early_added->push_back(std::move(more));
          t->early = {};
        }
      }
      return len;
    }
    if (t->resp.body.size() + len > r.max_body) {
      t->refused = fmt::format("the answer is longer than {} bytes", r.max_body);
      return 0;
    }
    t->resp.body.append(data, len);
    t->written += len;
    return len;
  }

  struct ProgressContext {
    Impl* impl;
    uint64_t generation;
  };

  static int on_progress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* c = static_cast<ProgressContext*>(p);
    return c->impl->cancel_generation.load(std::memory_order_relaxed) != c->generation ? 1 : 0;
  }

  CURL* make_easy(Transfer& t, ProgressContext* progress) {
    CURL* e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, t.url.c_str());
    curl_easy_setopt(e, CURLOPT_SHARE, share);
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &Impl::on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, progress);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);   // redirects by hand: the token policy
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!ca.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, ca.c_str());
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, connect_timeout);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, low_speed_time);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, nullptr);   // bytes as stored: ranges are of the file
    curl_easy_setopt(e, CURLOPT_USERAGENT, "akview");
    curl_slist* h = nullptr;
    const HttpRequest& r = *t.req;
    if (r.has_range) {
      h = curl_slist_append(h, fmt::format("Range: bytes={}-{}", r.range_begin, r.range_end - 1).c_str());
      if (!r.if_range.empty()) h = curl_slist_append(h, fmt::format("If-Range: {}", r.if_range).c_str());
    }
    if (!r.accept.empty()) h = curl_slist_append(h, fmt::format("Accept: {}", r.accept).c_str());
    // The token goes to the Hub's own host only: never to a CDN a redirect points at.
    if (!token.empty() && url_origin(t.url) == hub_origin)
      h = curl_slist_append(h, fmt::format("Authorization: Bearer {}", token).c_str());
    t.headers_out = h;
    if (h) curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    return e;
  }

  static void reset_hop(Transfer& t) {
    t.status = 0;
    t.headers_done = false;
    t.headers.clear();
    t.written = 0;
    t.held.clear();
    t.early.clear();
    t.expected = 0;
    t.empty = false;
    t.refused.clear();
    t.resp.body.clear();
  }

  static std::string resolve_location(const std::string& base, const std::string& location) {
    CURLU* u = curl_url();
    std::string out;
    if (curl_url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_URL, location.c_str(), 0) == CURLUE_OK) {
      char* s = nullptr;
      if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK && s) out = s;
      curl_free(s);
    }
    curl_url_cleanup(u);
    return out;
  }

  // What an answer that is not a success means for the user.
  static Error status_error(const Transfer& t) {
    const HttpRequest& r = *t.req;
    const std::string what = r.label.empty() ? t.url : r.label;
    std::string detail;
    if (auto it = t.headers.find("x-error-message"); it != t.headers.end()) detail = it->second;
    std::string hint;
    switch (t.status) {
      case 401:
        hint =
            "authentication needed: set HF_TOKEN (or log in with `huggingface-cli login`) for a private or gated "
            "repository";
        break;
      case 403:
        hint =
            "access refused: the token lacks access (a gated repository: accept its conditions on the Hub's page "
            "first)";
        break;
      case 404: hint = "not found: check the repository, the revision and the path"; break;
      case 416: hint = "the server refused the byte range (the file may have changed)"; break;
      default: hint = fmt::format("the server answered HTTP {}", t.status); break;
    }
    // The Hub says which thing is missing (X-Error-Code); a private repository also answers "not found".
    static const std::pair<const char*, const char*> kHubCodes[] = {
        {"RepoNotFound", "repository not found (or private: set HF_TOKEN to a token that can read it)"},
        {"RepositoryNotFound", "repository not found (or private: set HF_TOKEN to a token that can read it)"},
        {"RevisionNotFound", "revision not found: check the branch, tag or commit after '@'"},
        {"EntryNotFound", "file not found at that revision: check the path"},
        {"GatedRepo", "a gated repository: accept its conditions on the Hub's page, and set HF_TOKEN"},
    };
    if (auto code = t.headers.find("x-error-code"); code != t.headers.end())
      for (const auto& [name, text] : kHubCodes)
        if (code->second == name) hint = text;
    if (t.status == 401 || t.status == 403 || t.status == 404) hint = fmt::format("HTTP {}, {}", t.status, hint);
    return make_error(ErrorCode::network, what, kNoOffset,
                      detail.empty() ? hint : fmt::format("{} ({})", hint, detail));
  }
};

HttpClient::HttpClient() : impl_(std::make_unique<Impl>()) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  impl_->share = curl_share_init();
  curl_share_setopt(impl_->share, CURLSHOPT_LOCKFUNC, &Impl::lock_cb);
  curl_share_setopt(impl_->share, CURLSHOPT_UNLOCKFUNC, &Impl::unlock_cb);
  curl_share_setopt(impl_->share, CURLSHOPT_USERDATA, impl_.get());
  curl_share_setopt(impl_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_share_setopt(impl_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(impl_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  impl_->ca = ca_bundle();
  impl_->token = hub_token();
  impl_->hub_origin = url_origin(hub_endpoint());
  impl_->connect_timeout = env_seconds("AKVIEW_HTTP_CONNECT_TIMEOUT", 15);
  impl_->trace = std::getenv("AKVIEW_HTTP_TRACE") != nullptr;
  impl_->low_speed_time = env_seconds("AKVIEW_HTTP_STALL_TIMEOUT", 30);
  impl_->retry_base_ms = std::min(env_seconds("AKVIEW_HTTP_RETRY_MS", 250), 60'000L);
}

HttpClient::~HttpClient() { curl_share_cleanup(impl_->share); }

void HttpClient::cancel() { impl_->cancel_generation.fetch_add(1); }

Result<HttpResponse> HttpClient::run_one(const HttpRequest& request) {
  auto all = run(std::span<const HttpRequest>(&request, 1));
  return std::move(all.front());
}

std::vector<Result<HttpResponse>> HttpClient::run(std::span<const HttpRequest> requests, const OnDone& on_done) {
  Impl& im = *impl_;
  std::vector<std::optional<Result<HttpResponse>>> results(requests.size());
  std::vector<std::vector<char>> spare;   // hold buffers of transfers that ended (on_body)
  std::vector<HttpRequest> early_added;   // what requests' on_early returned during a perform
  std::deque<Transfer> transfers(requests.size());
  std::deque<HttpRequest> added;   // what on_done added (a deque: transfers point into it)
  Impl::ProgressContext progress{&im, im.cancel_generation.load()};
  std::deque<Transfer*> waiting;
  for (size_t i = 0; i < requests.size(); ++i) {
    transfers[i].req = &requests[i];
    transfers[i].index = i;
    transfers[i].url = requests[i].url;
    transfers[i].spare = &spare;
    transfers[i].early_added = &early_added;
    waiting.push_back(&transfers[i]);
  }
  if (im.trace) std::fprintf(stderr, "akview http: %.3f run of %zu requests\n", trace_clock(), requests.size());
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, kMaxHostConnections);
  size_t active = 0, finished = 0;

  auto add = [&](HttpRequest&& more) {   // a request that joins the run, with the next index
    added.push_back(std::move(more));
    Transfer& n = transfers.emplace_back();
    n.req = &added.back();
    n.index = results.size();
    n.url = n.req->url;
    n.spare = &spare;
    n.early_added = &early_added;
    results.emplace_back();
    waiting.push_back(&n);
  };
  auto finish = [&](Transfer& t, Result<HttpResponse> r) {
    results[t.index] = std::move(r);
    ++finished;
    if (!on_done) return;
    for (HttpRequest& more : on_done(t.index, *results[t.index])) add(std::move(more));
  };
  auto retry_later = [&](Transfer& t, long after_seconds) {
    ++t.attempt;
    const long backoff_ms = after_seconds > 0 ? after_seconds * 1000 : im.retry_base_ms << std::min(t.attempt, 6);
    t.not_before = Clock::now() + std::chrono::milliseconds(backoff_ms);
    waiting.push_back(&t);
  };

  while (finished < results.size()) {
    const auto now = Clock::now();
    const bool cancelled = im.cancel_generation.load() != progress.generation;
    // Start what may start.
    for (size_t k = waiting.size(); k > 0 && active < kMaxActive; --k) {
      Transfer* t = waiting.front();
      waiting.pop_front();
      if (cancelled) {
        finish(*t,
               make_error(ErrorCode::network, t->req->label.empty() ? t->url : t->req->label, kNoOffset, "cancelled"));
        continue;
      }
      if (t->not_before > now) {
        waiting.push_back(t);
        continue;
      }
      Impl::reset_hop(*t);
      t->easy = im.make_easy(*t, &progress);
      curl_multi_add_handle(multi, t->easy);
      note_start();
      t->counted = true;
      ++active;
    }
    if (finished == results.size()) break;
    int running = 0;
    curl_multi_perform(multi, &running);
    for (HttpRequest& more : early_added) add(std::move(more));   // in the order on_early made them
    early_added.clear();
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* e = msg->easy_handle;
      const CURLcode code = msg->data.result;
      Transfer* tp = nullptr;
      curl_easy_getinfo(e, CURLINFO_PRIVATE, reinterpret_cast<char**>(&tp));
      Transfer& t = *tp;
      curl_multi_remove_handle(multi, e);
      curl_easy_cleanup(e);
      curl_slist_free_all(t.headers_out);
      t.easy = nullptr;
      t.headers_out = nullptr;
      --active;
      if (t.counted) note_end();
      t.counted = false;
      const HttpRequest& r = *t.req;
      const std::string what = r.label.empty() ? t.url : r.label;
      if (im.trace && (code != CURLE_OK || t.status < 200 || t.status >= 300))
        std::fprintf(stderr, "akview http: %.3f %ld %s: %s%s\n", trace_clock(), t.status, t.url.c_str(),
                     curl_easy_strerror(code), t.refused.empty() ? "" : (" / " + t.refused).c_str());
      if (!t.refused.empty()) {
        if (t.refused == "changed")
          finish(t, make_error(ErrorCode::changed, what, r.range_begin,
                               "changed on the server since it was opened; R reloads"));
        else finish(t, make_error(ErrorCode::network, what, r.has_range ? r.range_begin : kNoOffset, t.refused));
        continue;
      }
      if (code == CURLE_ABORTED_BY_CALLBACK) {
        finish(t, make_error(ErrorCode::network, what, kNoOffset, "cancelled"));
        continue;
      }
      if (code != CURLE_OK) {
        if (is_retryable_curl(code) && t.attempt + 1 < kMaxAttempts) {
          retry_later(t, 0);
          continue;
        }
        finish(t, make_error(ErrorCode::network, what, kNoOffset,
                             fmt::format("{} ({})", curl_easy_strerror(code), url_origin(t.url))));
        continue;
      }
      if (is_redirect(t.status)) {
        auto loc = t.headers.find("location");
        if (loc == t.headers.end()) {
          finish(t, make_error(ErrorCode::network, what, kNoOffset,
                               fmt::format("redirect {} without a Location", t.status)));
          continue;
        }
        if (++t.resp.redirects > kMaxRedirects) {
          finish(t, make_error(ErrorCode::network, what, kNoOffset,
                               fmt::format("more than {} redirects (a redirect loop?)", kMaxRedirects)));
          continue;
        }
        if (t.resp.redirects == 1) t.resp.first_headers = t.headers;
        std::string next = Impl::resolve_location(t.url, loc->second);
        if (next.empty() || url_origin(next).empty()) {
          finish(t, make_error(ErrorCode::network, what, kNoOffset,
                               fmt::format("redirect to '{}', which is no http(s) URL", loc->second)));
          continue;
        }
        t.url = next;
        t.attempt = 0;
        t.not_before = {};
        waiting.push_back(&t);
        continue;
      }
      if (is_retryable_status(t.status) && t.attempt + 1 < kMaxAttempts) {
        long after = 0;
        if (auto ra = t.headers.find("retry-after"); ra != t.headers.end())
          after = std::clamp(std::strtol(ra->second.c_str(), nullptr, 10), 0L, kMaxRetryAfterSeconds);
        retry_later(t, after);
        continue;
      }
      if (t.status < 200 || t.status >= 300) {
        finish(t, Impl::status_error(t));
        continue;
      }
      if (r.has_range && t.fd >= 0 && !Impl::flush(t)) {   // the held end of the body
        finish(t, make_error(ErrorCode::network, what, r.range_begin, t.refused));
        continue;
      }
      Impl::give_hold_buffer(t);
      if (r.has_range) {
        if (t.status != 206 || t.written != (t.expected || t.empty ? t.expected : r.range_end - r.range_begin)) {
          if (t.attempt + 1 < kMaxAttempts) {   // the connection closed early: try again
            retry_later(t, 0);
            continue;
          }
          finish(t, make_error(ErrorCode::network, what, r.range_begin,
                               fmt::format("the server sent {} of the {} bytes asked for", t.written,
                                           r.range_end - r.range_begin)));
          continue;
        }
      }
      if (im.trace)
        std::fprintf(stderr, "akview http: %.3f %ld %s %s%s (%llu bytes, attempt %d)\n", trace_clock(), t.status,
                     t.url.c_str(), r.has_range ? "range " : "",
                     r.has_range ? fmt::format("{}-{}", r.range_begin, r.range_end - 1).c_str() : "",
                     static_cast<unsigned long long>(t.written), t.attempt + 1);
      t.resp.status = t.status;
      t.resp.url = t.url;
      t.resp.headers = std::move(t.headers);
      t.resp.body_bytes = t.written;
      if (auto cr = t.resp.headers.find("content-range"); cr != t.resp.headers.end()) {
        uint64_t a = 0, b = 0, total = 0;
        if (parse_content_range(cr->second, a, b, total)) t.resp.total_size = total;
      } else if (auto cl = t.resp.headers.find("content-length"); cl != t.resp.headers.end()) {
        t.resp.total_size = std::strtoull(cl->second.c_str(), nullptr, 10);
      }
      finish(t, std::move(t.resp));
    }
    if (finished == results.size()) break;
    int timeout_ms = 100;
    if (active == 0 && !waiting.empty()) {
      auto soonest = std::min_element(waiting.begin(), waiting.end(),
                                      [](auto* a, auto* b) { return a->not_before < b->not_before; });
      auto wait = std::chrono::duration_cast<std::chrono::milliseconds>((*soonest)->not_before - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(wait, 0, 100));
      if (timeout_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
      continue;
    }
    curl_multi_poll(multi, nullptr, 0, timeout_ms, nullptr);
  }
  for (Transfer& t : transfers)
    if (t.easy) {
      curl_multi_remove_handle(multi, t.easy);
      curl_easy_cleanup(t.easy);
      curl_slist_free_all(t.headers_out);
      if (t.counted) note_end();
    }
  curl_multi_cleanup(multi);
  std::vector<Result<HttpResponse>> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

void trace_phase(const std::string& what) {
  static const bool on = std::getenv("AKVIEW_HTTP_TRACE") != nullptr;
  if (on) std::fprintf(stderr, "akview http: %.3f -- %s\n", trace_clock(), what.c_str());
}

HttpClient& http_client() {
  static HttpClient client;
  return client;
}

TransferStats transfer_stats() {
  TransferStats s;
  s.requests = g_requests.load();
  s.bytes = g_bytes.load();
  s.in_flight = g_in_flight.load();
  std::lock_guard lock(g_busy_mutex);
  s.busy_seconds = g_busy_seconds;
  if (s.in_flight > 0) s.busy_seconds += std::chrono::duration<double>(Clock::now() - g_busy_since).count();
  return s;
}

}   // namespace akview::remote
