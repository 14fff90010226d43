// Test servers for remote models: Debian's nginx (with its Lua module) started on 127.0.0.1 over
// HTTPS + HTTP/2, with a certificate signed by a CA made here with the openssl command line, imitating
// four hosts a client meets: the Hugging Face Hub ("hub": resolve redirects, the tree and revision
// APIs, gated repositories), the CDN the Hub redirects large files to ("cdn"), an Ollama registry
// ("registry": v2 manifests, blobs redirected to the cdn) and any web server ("plain"). Each block has
// its own port (another port is another host to a client), its own JSON-lines access log, and fault
// switches (ranges ignored, slow, a delay on every request, 429/503 once, a body cut short, more
// bytes than asked, a redirect loop, a file replaced between two requests).
//
// No GoogleTest in here: tests call start() and skip with reason() when it returns false (nginx,
// its Lua module or openssl missing, or nginx failing to start); a test never passes without servers.
// Everything lives in one temporary folder, removed with the servers in the destructor.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace akview::testing {

enum class Block { hub, cdn, registry, plain };
inline constexpr int kBlockCount = 4;
const char* block_name(Block b);

// One line of a block's access log (log_format in hub_server.cpp).
struct AccessEntry {
  std::string method, uri, protocol, range, authorization, if_range, user_agent;
  int status = 0;
  uint64_t request_length = 0;   // request line + headers (+ body), as nginx counts it
  uint64_t bytes_sent = 0;       // everything sent for the request (headers + body)
  uint64_t body_bytes_sent = 0;
  uint64_t connection = 0;   // nginx's connection serial number: equal numbers = one connection
  double msec = 0;           // time the request ended (seconds since the epoch)
};

class HubServer {
 public:
  struct Options {
    std::string nginx = default_nginx();   // $AKVIEW_NGINX, else /usr/sbin/nginx
    std::string openssl = "openssl";
    std::string module_dir = "/usr/lib/nginx/modules";
    uint64_t lfs_threshold = 1;                         // hub files of at least this many bytes redirect to the cdn
    int page_size = 50;                                 // tree API entries per page
    uint64_t content_hash_limit = uint64_t{64} << 20;   // larger files get an identity digest, not their SHA-256
  };

  static std::string default_nginx();

  HubServer();
  explicit HubServer(Options options);
  ~HubServer();
  HubServer(const HubServer&) = delete;
  HubServer& operator=(const HubServer&) = delete;

  // Makes the CA and certificate, writes the configuration and starts nginx; returns available().
  // Waits until every block accepts requests (about 0.1 s).
  bool start();
  bool available() const { return running_; }
  const std::string& reason() const { return reason_; }   // why not available

  // --- content (before or after start(); after it, nginx reloads and the call returns once the
  //     new configuration answers) ---

  // The Hub repository ORG/REPO at `revision` (a branch name) = commit `commit_sha` (40 hex; empty:
  // one is derived from the names) holding the files under `local_dir` (served through symlinks,
  // never written). /ORG/REPO/resolve/REV/PATH answers for REV = the name and the commit. Calling it
  // again for another revision adds that revision (or moves the branch).
  void add_repo(const std::string& org, const std::string& repo, const std::string& revision, std::string commit_sha,
                const std::filesystem::path& local_dir);
  // Gated: without `Authorization: Bearer TOKEN` 401, with another token 403 (X-Error-Code GatedRepo).
  void set_gated(const std::string& org, const std::string& repo, const std::string& token);
  // Every manifest under STORE/manifests/HOST/ (NS/MODEL/TAG), as an Ollama registry serves it.
  // Returns the number of manifests found.
  int add_ollama_store(const std::filesystem::path& store_dir, const std::string& host = "registry.ollama.ai");
  // A file at `url_path` (starting with '/') of the plain block.
  void add_file(const std::string& url_path, const std::filesystem::path& local_path);

  // While one lives, changes after start() wait: nginx restarts once, when the last one ends (each
  // restart takes 0.1-0.3 s; a fixture that adds ten things would otherwise restart ten times).
  class Batch {
   public:
    explicit Batch(HubServer& server) : server_(server) { ++server_.batch_depth_; }
    ~Batch() {
      if (--server_.batch_depth_ == 0 && server_.batch_pending_) server_.changed();
    }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    HubServer& server_;
  };

  // --- faults (path "" = every path of the block; paths are URL paths without the query) ---
  void set_delay_ms(Block b, int ms);   // nginx sleeps this long before every request
  void set_delay_ms_all(int ms);
  void ignore_ranges(Block b, const std::string& path = {});   // max_ranges 0: 200 with the whole body
  void slow(Block b, const std::string& path, int bytes_per_second = 20 * 1024);   // limit_rate
  // The first `times` requests answer `code` (429, 503, ...) with Retry-After; later ones as usual.
  void status_once(Block b, const std::string& path, int code, int retry_after_s = 1, int times = 1);
  // Every ranged request that starts at or past byte `from` answers `code` (no Retry-After); earlier
  // ranges are served: a file whose first bytes come and whose later bytes never do.
  void fail_ranges_from(Block b, const std::string& path, uint64_t from, int code = 503);
  // The first `times` requests get their headers and half their body, then the connection is cut.
  void drop_mid_body(Block b, const std::string& path, int times = 1);
  // The first `times` ranged requests get `extra_bytes` more than they asked for (206, with a
  // Content-Range that says so): a response longer than asked.
  void overlong(Block b, const std::string& path, int extra_bytes = 65536, int times = 1);
  // Every request answers 302 to the same URL.
  void redirect_loop(Block b, const std::string& path);
  // Serves the bytes of `new_content` (copied) at `path` from now on, with a later Last-Modified and
  // so another ETag. The hub's records (X-Linked-Etag, the tree) are not changed: as when the object
  // behind a URL changes.
  void replace_file(Block b, const std::string& path, const std::filesystem::path& new_content);

  // --- addresses ---
  int port(Block b) const { return ports_[static_cast<int>(b)]; }
  std::string base_url(Block b) const;   // https://127.0.0.1:PORT
  std::string url(Block b, const std::string& path) const { return base_url(b) + path; }
  // The plain block over HTTP (no TLS, HTTP/1.1) on a port of its own: http://127.0.0.1:PORT/PATH.
  std::string http_url(const std::string& path) const;
  std::string hub_endpoint() const { return base_url(Block::hub); }   // what HF_ENDPOINT is set to
  std::string registry_host() const;   // 127.0.0.1:PORT (ollama://127.0.0.1:PORT/NS/MODEL:TAG)
  std::string resolve_path(const std::string& org, const std::string& repo, const std::string& rev,
                           const std::string& file) const;   // /ORG/REPO/resolve/REV/FILE
  // Where the hub's resolve redirects a file: /repos/ORG/REPO/COMMIT/FILE on the cdn block
  // (empty when the repository, revision or file is unknown).
  std::string cdn_path(const std::string& org, const std::string& repo, const std::string& rev,
                       const std::string& file) const;
  // /v2blobs/sha256/XX/HEX/data on the cdn block: where the registry redirects blob `digest`.
  static std::string cdn_blob_path(const std::string& digest);

  // --- for clients ---
  std::filesystem::path ca_file() const { return dir_ / "ca.pem"; }
  // CURL_CA_BUNDLE, SSL_CERT_FILE, NODE_EXTRA_CA_CERTS = ca_file(); HF_ENDPOINT = hub_endpoint().
  std::vector<std::string> client_env() const;
  void export_client_env() const;   // setenv() of the same in this process

  // --- what the servers saw ---
  std::filesystem::path access_log_path(Block b) const;
  std::filesystem::path error_log_path() const { return dir_ / "logs" / "error.log"; }
  // The block's access log; waits up to `timeout_ms` for at least `at_least` lines (nginx writes a
  // line just after the response's last byte, so a client may finish a moment before it).
  std::vector<AccessEntry> access_log(Block b, size_t at_least = 0, int timeout_ms = 2000) const;
  void clear_access_logs() const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  struct HubFile {
    std::string path;   // in the repository, '/'-separated
    std::filesystem::path local;
    uint64_t size = 0;
    std::string sha256;    // LFS oid (or identity digest past content_hash_limit)
    std::string git_oid;   // 40 hex
  };
  struct Revision {
    std::string commit;
    std::vector<HubFile> files;   // sorted by path
  };
  struct Repo {
    std::map<std::string, std::string> names;   // revision name -> commit
    std::map<std::string, Revision> commits;    // commit -> files
    std::string token;                          // gated when not empty
  };
  struct PathSwitch {
    bool ignore_ranges = false;
    int limit_rate = 0;
  };
  struct Fault {
    std::string kind;                             // status, drop, long, loop, ranges_from
    int code = 0, retry_after_s = 0, times = 0;   // code: the status, or long's extra bytes
    int id = 0;                                   // counter key in the shared dict
    uint64_t from = 0;                            // ranges_from: the first byte that fails
  };
  struct BlockState {
    int delay_ms = 0;
    bool ignore_ranges = false;
    std::map<std::string, PathSwitch> switches;
    std::map<std::string, Fault> faults;   // by path ("" = every path)
  };

  bool make_certificates();
  bool pick_ports();
  std::string nginx_conf() const;
  std::string routes_lua() const;
  void lay_out_hub() const;
  bool write_config();
  bool launch();
  bool wait_ready(int generation, int timeout_ms);
  void changed();   // after start: rewrite and restart on the same ports
  void stop();
  std::string error_log_tail() const;
  std::filesystem::path www(Block b) const { return dir_ / "www" / block_name(b); }
  void link_file(const std::filesystem::path& target, const std::filesystem::path& link) const;

  Options options_;
  std::filesystem::path dir_;
  int ports_[kBlockCount + 1] = {0, 0, 0, 0, 0};   // the blocks', then plain HTTP's
  bool running_ = false;
  int batch_depth_ = 0;          // Batch guards alive
  bool batch_pending_ = false;   // a change waits for the last Batch to end
  bool hub_stale_ = false;       // repositories added since the hub's folder was laid out
  std::string reason_ = "not started";
  pid_t pid_ = -1;
  int generation_ = 0;
  int next_fault_id_ = 1;
  std::map<std::string, Repo> repos_;   // "ORG/REPO"
  struct Manifest {
    std::string path;                 // /v2/NS/MODEL/manifests/TAG
    std::string digest;               // sha256:HEX of the manifest
    std::vector<std::string> blobs;   // digests
  };
  std::vector<Manifest> manifests_;
  BlockState blocks_[kBlockCount];
};

}   // namespace akview::testing
