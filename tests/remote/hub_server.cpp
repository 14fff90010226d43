// The remote test servers (hub_server.hpp): the CA and certificate made with the openssl command line,
// nginx.conf and routes.lua generated from what the test added, nginx run as a child of the test
// (master + one worker, daemon off, everything in a temporary folder), reloaded with SIGHUP when
// something changes after start().
#include "tests/remote/hub_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/sha256.hpp"
#include "tests/remote/hub_server_lua.hpp"

namespace akview::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kBlockNames[kBlockCount] = {"hub", "cdn", "registry", "plain"};
constexpr const char* kManifestType = "application/vnd.docker.distribution.manifest.v2+json";

// One JSON object a line; strings escaped by nginx (escape=json), numbers bare.
constexpr const char* kLogFormat =
    R"('{"msec":$msec,"method":"$request_method","uri":"$request_uri","protocol":"$server_protocol",')"
    R"( '"status":$status,"range":"$http_range","if_range":"$http_if_range",')"
    R"( '"authorization":"$http_authorization","user_agent":"$http_user_agent",')"
    R"( '"request_length":$request_length,"bytes_sent":$bytes_sent,"body_bytes_sent":$body_bytes_sent,')"
    R"( '"connection":$connection}')";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write_text(const fs::path& p, std::string_view text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(out);
}

// Runs argv with stdout and stderr into `log`; the exit status, 127 when it could not run.
int run_command(const std::vector<std::string>& argv, const fs::path& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

bool on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((d + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

// A Lua string literal for any bytes.
std::string lua_quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += {'\\', static_cast<char>(c)};
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\{:03d}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

// An nginx string argument in double quotes.
std::string conf_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Percent-encodes a path for a Location header ('/' kept).
std::string url_encode_path(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string file_sha256(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  Sha256 h;
  std::vector<uint8_t> buf(1 << 20);
  while (in) {
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    h.update({buf.data(), static_cast<size_t>(in.gcount())});
  }
  const auto d = h.finish();
  return to_hex(d);
}

std::string text_sha256(std::string_view s) {
  return sha256_hex({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

// The git-lfs pointer file that stands for a file in git.
std::string lfs_pointer(const std::string& oid, uint64_t size) {
  return fmt::format("version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize {}\n", oid, size);
}

bool port_accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

}   // namespace

const char* block_name(Block b) { return kBlockNames[static_cast<int>(b)]; }

std::string HubServer::default_nginx() {
  const char* nginx = std::getenv("AKVIEW_NGINX");
  return nginx && *nginx ? nginx : "/usr/sbin/nginx";
}

HubServer::HubServer() : HubServer(Options{}) {}

HubServer::HubServer(Options options) : options_(std::move(options)) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/akview-hub-XXXXXX";
  if (mkdtemp(pattern.data())) dir_ = pattern;
  std::error_code ec;
  for (const char* sub : {"logs", "tmp"}) fs::create_directories(dir_ / sub, ec);
  for (int b = 0; b < kBlockCount; ++b) fs::create_directories(www(static_cast<Block>(b)), ec);
}

HubServer::~HubServer() {
  stop();
  if (std::getenv("AKVIEW_KEEP_HUB_SERVER")) {
    std::fprintf(stderr, "hub server folder kept: %s\n", dir_.c_str());
    return;
  }
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);   // removes the symlinks, never what they point at
}

std::string HubServer::base_url(Block b) const { return fmt::format("https://127.0.0.1:{}", port(b)); }
std::string HubServer::http_url(const std::string& path) const {
  return fmt::format("http://127.0.0.1:{}{}", ports_[kBlockCount], path);
}

std::string HubServer::registry_host() const { return fmt::format("127.0.0.1:{}", port(Block::registry)); }

std::string HubServer::resolve_path(const std::string& org, const std::string& repo, const std::string& rev,
                                    const std::string& file) const {
  return fmt::format("/{}/{}/resolve/{}/{}", org, repo, rev, file);
}

std::string HubServer::cdn_path(const std::string& org, const std::string& repo, const std::string& rev,
                                const std::string& file) const {
  const auto r = repos_.find(org + "/" + repo);
  if (r == repos_.end()) return {};
  auto name = r->second.names.find(rev);
  const std::string commit = name != r->second.names.end() ? name->second : rev;
  const auto c = r->second.commits.find(commit);
  if (c == r->second.commits.end()) return {};
  for (const auto& f : c->second.files)
    if (f.path == file) return fmt::format("/repos/{}/{}/{}/{}", org, repo, commit, file);
  return {};
}

std::string HubServer::cdn_blob_path(const std::string& digest) {
  const std::string hex = digest.substr(digest.find_first_of(":-") + 1);
  return fmt::format("/v2blobs/sha256/{}/{}/data", hex.substr(0, 2), hex);
}

std::vector<std::string> HubServer::client_env() const {
  const std::string ca = ca_file().string();
  return {"CURL_CA_BUNDLE=" + ca, "SSL_CERT_FILE=" + ca, "NODE_EXTRA_CA_CERTS=" + ca, "HF_ENDPOINT=" + hub_endpoint()};
}

void HubServer::export_client_env() const {
  for (const auto& kv : client_env()) {
    const auto eq = kv.find('=');
    setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
}

fs::path HubServer::access_log_path(Block b) const {
  return dir_ / "logs" / (std::string(block_name(b)) + ".access.log");
}

std::vector<AccessEntry> HubServer::access_log(Block b, size_t at_least, int timeout_ms) const {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<AccessEntry> entries;
  for (;;) {
    entries.clear();
    std::istringstream lines(read_text(access_log_path(b)));
    for (std::string line; std::getline(lines, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      AccessEntry e;
      e.method = j.value("method", "");
      e.uri = j.value("uri", "");
      e.protocol = j.value("protocol", "");
      e.range = j.value("range", "");
      e.if_range = j.value("if_range", "");
      e.authorization = j.value("authorization", "");
      e.user_agent = j.value("user_agent", "");
      e.status = j.value("status", 0);
      e.request_length = j.value("request_length", uint64_t{0});
      e.bytes_sent = j.value("bytes_sent", uint64_t{0});
      e.body_bytes_sent = j.value("body_bytes_sent", uint64_t{0});
      e.connection = j.value("connection", uint64_t{0});
      e.msec = j.value("msec", 0.0);
      entries.push_back(std::move(e));
    }
    if (entries.size() >= at_least || Clock::now() >= deadline) return entries;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void HubServer::clear_access_logs() const {
  // nginx appends (O_APPEND), so truncating in place is safe while it runs.
  for (int b = 0; b < kBlockCount; ++b) truncate(access_log_path(static_cast<Block>(b)).c_str(), 0);
}

void HubServer::link_file(const fs::path& target, const fs::path& link) const {
  // Only inside the served folders: a name with ".." never places (or removes) anything elsewhere.
  const std::string inside = (dir_ / "www").string() + "/";
  if (link.lexically_normal().string().rfind(inside, 0) != 0) {
    std::fprintf(stderr, "hub server: %s is outside %s, not served\n", link.c_str(), inside.c_str());
    return;
  }
  std::error_code ec;
  fs::create_directories(link.parent_path(), ec);
  fs::remove(link, ec);
  fs::create_symlink(fs::absolute(target), link, ec);
}

// ---------------------------------------------------------------- content

void HubServer::add_repo(const std::string& org, const std::string& repo, const std::string& revision,
                         std::string commit_sha, const fs::path& local_dir) {
  if (commit_sha.empty()) commit_sha = text_sha256(org + "/" + repo + "@" + revision).substr(0, 40);
  Revision rev;
  rev.commit = commit_sha;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(local_dir, fs::directory_options::follow_directory_symlink, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    HubFile f;
    f.local = it->path();
    f.path = it->path().lexically_relative(local_dir).generic_string();   // symlinks kept as named
    f.size = it->file_size();
    if (f.size <= options_.content_hash_limit) {
      f.sha256 = file_sha256(f.local);
    } else {
      // Too large to hash at every start (the bench's sparse fixtures): a digest of the file's
      // identity instead, stable while the file is unchanged.
      struct stat st {};
      stat(f.local.c_str(), &st);
      f.sha256 = text_sha256(fmt::format("identity {} {} {} {}", fs::absolute(f.local).string(), f.size,
                                         st.st_mtim.tv_sec, st.st_mtim.tv_nsec));
    }
    f.git_oid = text_sha256(fmt::format("blob {}", f.sha256)).substr(0, 40);
    rev.files.push_back(std::move(f));
  }
  std::sort(rev.files.begin(), rev.files.end(), [](const HubFile& a, const HubFile& b) { return a.path < b.path; });
  Repo& r = repos_[org + "/" + repo];
  r.names[revision] = commit_sha;
  r.commits[commit_sha] = std::move(rev);
  hub_stale_ = true;   // laid out by the next write_config: once for a Batch of repositories
  changed();
}

void HubServer::set_gated(const std::string& org, const std::string& repo, const std::string& token) {
  repos_[org + "/" + repo].token = token;
  changed();
}

void HubServer::lay_out_hub() const {
  std::error_code ec;
  fs::remove_all(www(Block::hub), ec);
  fs::create_directories(www(Block::hub), ec);
  for (const auto& repo_entry : repos_) {
    // Named, not bound: lambdas below use them (clang 14 cannot capture structured bindings).
    const std::string& name = repo_entry.first;
    const auto& repo = repo_entry.second;
    auto serve = [&](const std::string& rev, const Revision& files) {
      for (const auto& f : files.files) {
        if (f.size >= options_.lfs_threshold)
          link_file(f.local, www(Block::cdn) / "repos" / name / files.commit / f.path);
        else
          for (const char* kind : {"resolve", "raw"}) link_file(f.local, www(Block::hub) / name / kind / rev / f.path);
      }
    };
    for (const auto& [commit, files] : repo.commits) serve(commit, files);
    for (const auto& [rev, commit] : repo.names) serve(rev, repo.commits.at(commit));
  }
}

int HubServer::add_ollama_store(const fs::path& store_dir, const std::string& host) {
  int found = 0;
  std::error_code ec;
  const fs::path root = store_dir / "manifests" / host;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const fs::path rel = it->path().lexically_relative(root);
    std::vector<std::string> parts;
    for (const auto& p : rel) parts.push_back(p.string());
    if (parts.size() != 3) continue;   // NS/MODEL/TAG
    const std::string text = read_text(it->path());
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) continue;
    Manifest m;
    m.digest = "sha256:" + text_sha256(text);
    const std::string repo = fmt::format("/v2/{}/{}", parts[0], parts[1]);
    m.path = repo + "/manifests/" + parts[2];
    if (j.contains("config") && j["config"].contains("digest"))
      m.blobs.push_back(j["config"]["digest"].get<std::string>());
    for (const auto& layer : j.value("layers", nlohmann::json::array()))
      if (layer.contains("digest")) m.blobs.push_back(layer["digest"].get<std::string>());
    link_file(it->path(), www(Block::registry) / m.path.substr(1));
    link_file(it->path(), www(Block::registry) / (repo.substr(1) + "/manifests/" + m.digest));
    for (const auto& digest : m.blobs) {
      std::string file = digest;
      std::replace(file.begin(), file.end(), ':', '-');
      link_file(store_dir / "blobs" / file, www(Block::cdn) / cdn_blob_path(digest).substr(1));
    }
    manifests_.push_back(std::move(m));
    ++found;
  }
  changed();
  return found;
}

void HubServer::add_file(const std::string& url_path, const fs::path& local_path) {
  link_file(local_path, www(Block::plain) / url_path.substr(url_path.find_first_not_of('/')));
  changed();   // plain files need no route; a reload is harmless and keeps the rule simple
}

// ---------------------------------------------------------------- faults

void HubServer::set_delay_ms(Block b, int ms) {
  blocks_[static_cast<int>(b)].delay_ms = ms;
  changed();
}

void HubServer::set_delay_ms_all(int ms) {
  for (auto& b : blocks_) b.delay_ms = ms;
  changed();
}

void HubServer::ignore_ranges(Block b, const std::string& path) {
  if (path.empty()) blocks_[static_cast<int>(b)].ignore_ranges = true;
  else blocks_[static_cast<int>(b)].switches[path].ignore_ranges = true;
  changed();
}

void HubServer::slow(Block b, const std::string& path, int bytes_per_second) {
  blocks_[static_cast<int>(b)].switches[path].limit_rate = bytes_per_second;
  changed();
}

void HubServer::status_once(Block b, const std::string& path, int code, int retry_after_s, int times) {
  blocks_[static_cast<int>(b)].faults[path] = Fault{"status", code, retry_after_s, times, next_fault_id_++};
  changed();
}

void HubServer::fail_ranges_from(Block b, const std::string& path, uint64_t from, int code) {
  blocks_[static_cast<int>(b)].faults[path] = Fault{"ranges_from", code, 0, 0, next_fault_id_++, from};
  changed();
}

void HubServer::drop_mid_body(Block b, const std::string& path, int times) {
  blocks_[static_cast<int>(b)].faults[path] = Fault{"drop", 0, 0, times, next_fault_id_++};
  changed();
}

void HubServer::overlong(Block b, const std::string& path, int extra_bytes, int times) {
  blocks_[static_cast<int>(b)].faults[path] = Fault{"long", extra_bytes, 0, times, next_fault_id_++};
  changed();
}

void HubServer::redirect_loop(Block b, const std::string& path) {
  blocks_[static_cast<int>(b)].faults[path] = Fault{"loop", 0, 0, 0, next_fault_id_++};
  changed();
}

void HubServer::replace_file(Block b, const std::string& path, const fs::path& new_content) {
  const fs::path served = (www(b) / path.substr(path.find_first_not_of('/'))).lexically_normal();
  if (served.string().rfind(www(b).string() + "/", 0) != 0) return;   // ".." out of the block
  struct stat old {};
  const bool had = stat(served.c_str(), &old) == 0;
  const fs::path next = served.parent_path() / (".replacing-" + served.filename().string());
  std::error_code ec;
  fs::create_directories(served.parent_path(), ec);
  fs::copy_file(new_content, next, fs::copy_options::overwrite_existing, ec);
  // nginx's ETag is "mtime-size": a later mtime (whole seconds) makes it differ even at the same size.
  const time_t now = time(nullptr);
  const time_t mtime = had ? std::max(now, old.st_mtim.tv_sec + 1) : now;
  const timespec times[2] = {{mtime, 0}, {mtime, 0}};
  utimensat(AT_FDCWD, next.c_str(), times, 0);
  fs::rename(next, served, ec);   // replaces the symlink itself, never the file it pointed at
}

// ---------------------------------------------------------------- configuration

std::string HubServer::routes_lua() const {
  std::string out = fmt::format("return {{\n generation = {},\n ready_file = {},\n blocks = {{\n", generation_,
                                lua_quote((dir_ / "ready").string()));
  for (int i = 0; i < kBlockCount; ++i) {
    const BlockState& b = blocks_[i];
    out += fmt::format("  {} = {{ delay = {}, base = {}, faults = {{\n", kBlockNames[i], b.delay_ms / 1000.0,
                       lua_quote(base_url(static_cast<Block>(i))));
    for (const auto& [path, f] : b.faults)
      out += fmt::format("   [{}] = {{ kind = {}, code = {}, retry_after = {}, times = {}, id = {}, from = {} }},\n",
                         lua_quote(path), lua_quote(f.kind), f.code, f.retry_after_s, f.times, f.id, f.from);
    out += "  } },\n";
  }
  out += " },\n repos = {\n";
  for (const auto& [name, repo] : repos_) {
    out += fmt::format("  [{}] = {{ token = {}, revs = {{", lua_quote(name),
                       repo.token.empty() ? "nil" : lua_quote(repo.token));
    for (const auto& [rev, commit] : repo.names) out += fmt::format(" [{}] = true,", lua_quote(rev));
    for (const auto& [commit, files] : repo.commits) out += fmt::format(" [{}] = true,", lua_quote(commit));
    out += " } },\n";
  }
  out += " },\n routes = {\n  hub = {\n";

  const std::string hub = base_url(Block::hub), cdn = base_url(Block::cdn);
  for (const auto& repo_entry : repos_) {
    // Named, not bound: lambdas below use them (clang 14 cannot capture structured bindings).
    const std::string& name = repo_entry.first;
    const auto& repo = repo_entry.second;
    auto routes_of = [&](const std::string& rev, const Revision& r, bool default_rev) {
      // resolve: LFS files redirect to the cdn, the others are served here; raw: what git holds
      // (an LFS file's pointer)
      for (const auto& f : r.files) {
        const std::string uri = fmt::format("/{}/resolve/{}/{}", name, rev, f.path);
        const std::string raw = fmt::format("/{}/raw/{}/{}", name, rev, f.path);
        if (f.size >= options_.lfs_threshold)
          out += fmt::format(
              "   [{}] = {{ kind = \"body\", body = {}, headers = {{ [\"Content-Type\"] = \"text/plain; "
              "charset=utf-8\", "
              "[\"X-Repo-Commit\"] = {} }} }},\n",
              lua_quote(raw), lua_quote(lfs_pointer(f.sha256, f.size)), lua_quote(r.commit));
        else
          out += fmt::format("   [{}] = {{ kind = \"file\", headers = {{ [\"X-Repo-Commit\"] = {} }} }},\n",
                             lua_quote(raw), lua_quote(r.commit));
        if (f.size >= options_.lfs_threshold) {
          out += fmt::format(
              "   [{}] = {{ kind = \"redirect\", status = 302, location = {}, headers = {{ [\"X-Repo-Commit\"] = {}, "
              "[\"X-Linked-Etag\"] = {}, [\"X-Linked-Size\"] = \"{}\", [\"ETag\"] = {} }} }},\n",
              lua_quote(uri), lua_quote(cdn + url_encode_path(fmt::format("/repos/{}/{}/{}", name, r.commit, f.path))),
              lua_quote(r.commit), lua_quote("\"" + f.sha256 + "\""), f.size, lua_quote("\"" + f.sha256 + "\""));
        } else {
          out += fmt::format("   [{}] = {{ kind = \"file\", headers = {{ [\"X-Repo-Commit\"] = {} }} }},\n",
                             lua_quote(uri), lua_quote(r.commit));
        }
      }
      // revision info
      nlohmann::ordered_json info = {
          {"_id", r.commit.substr(0, 24)},
          {"id", name},
          {"modelId", name},
          {"author", name.substr(0, name.find('/'))},
          {"sha", r.commit},
          {"private", false},
          {"disabled", false},
          {"gated", repo.token.empty() ? nlohmann::ordered_json(false) : nlohmann::ordered_json("manual")},
          {"tags", nlohmann::json::array()}};
      nlohmann::ordered_json siblings = nlohmann::json::array();
      for (const auto& f : r.files) siblings.push_back({{"rfilename", f.path}});
      info["siblings"] = siblings;
      const std::string info_text = info.dump();
      out += fmt::format(
          "   [{}] = {{ kind = \"body\", body = {}, headers = {{ [\"Content-Type\"] = \"application/json; "
          "charset=utf-8\" }} }},\n",
          lua_quote(fmt::format("/api/models/{}/revision/{}", name, rev)), lua_quote(info_text));
      if (default_rev)
        out += fmt::format(
            "   [{}] = {{ kind = \"body\", body = {}, headers = {{ [\"Content-Type\"] = \"application/json; "
            "charset=utf-8\" }} }},\n",
            lua_quote(fmt::format("/api/models/{}", name)), lua_quote(info_text));
      // tree: every folder, recursive and not, in pages
      std::set<std::string> dirs{""};
      for (const auto& f : r.files)
        for (size_t s = f.path.find('/'); s != std::string::npos; s = f.path.find('/', s + 1))
          dirs.insert(f.path.substr(0, s));
      auto entry_of_dir = [&](const std::string& d) {
        return nlohmann::ordered_json{{"type", "directory"},
                                      {"oid", text_sha256("tree " + r.commit + d).substr(0, 40)},
                                      {"size", 0},
                                      {"path", d}};
      };
      auto entry_of_file = [&](const HubFile& f) {
        nlohmann::ordered_json e{{"type", "file"}, {"oid", f.git_oid}, {"size", f.size}, {"path", f.path}};
        if (f.size >= options_.lfs_threshold)
          e["lfs"] = {{"oid", f.sha256}, {"size", f.size}, {"pointerSize", lfs_pointer(f.sha256, f.size).size()}};
        return e;
      };
      for (const auto& d : dirs) {
        const std::string prefix = d.empty() ? "" : d + "/";
        std::vector<std::pair<std::string, nlohmann::ordered_json>> all, flat;
        for (const auto& sub : dirs) {
          if (sub.empty() || sub.compare(0, prefix.size(), prefix) != 0 || sub == d) continue;
          all.emplace_back(sub, entry_of_dir(sub));
          if (sub.find('/', prefix.size()) == std::string::npos) flat.emplace_back(sub, entry_of_dir(sub));
        }
        for (const auto& f : r.files) {
          if (f.path.compare(0, prefix.size(), prefix) != 0) continue;
          all.emplace_back(f.path, entry_of_file(f));
          if (f.path.find('/', prefix.size()) == std::string::npos) flat.emplace_back(f.path, entry_of_file(f));
        }
        auto pages = [&](std::vector<std::pair<std::string, nlohmann::ordered_json>>& entries) {
          std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
          std::string list = "{";
          const size_t per = static_cast<size_t>(std::max(1, options_.page_size));
          for (size_t i = 0; i == 0 || i < entries.size(); i += per) {
            nlohmann::ordered_json page = nlohmann::json::array();
            for (size_t k = i; k < std::min(entries.size(), i + per); ++k) page.push_back(entries[k].second);
            list += lua_quote(page.dump());   // (not " " + ...: GCC 12 warns -Wrestrict there, wrongly)
            list += ", ";
          }
          return list + " }";
        };
        const std::string uri = fmt::format("/api/models/{}/tree/{}{}", name, rev, d.empty() ? "" : "/" + d);
        out += fmt::format("   [{}] = {{ kind = \"tree\", base = {}, recursive = {}, flat = {} }},\n", lua_quote(uri),
                           lua_quote(hub + url_encode_path(uri)), pages(all), pages(flat));
      }
    };
    const std::string default_name = repo.names.count("main") ? "main"
                                     : repo.names.empty()     ? ""
                                                              : repo.names.begin()->first;
    for (const auto& [commit, r] : repo.commits) routes_of(commit, r, false);
    for (const auto& [rev, commit] : repo.names) routes_of(rev, repo.commits.at(commit), rev == default_name);
  }
  out += "  },\n  registry = {\n";
  for (const auto& m : manifests_) {
    const std::string headers = fmt::format(
        "[\"Content-Type\"] = {}, [\"Docker-Content-Digest\"] = {}, "
        "[\"Docker-Distribution-Api-Version\"] = \"registry/2.0\"",
        lua_quote(kManifestType), lua_quote(m.digest));
    const std::string repo = m.path.substr(0, m.path.find("/manifests/"));
    out += fmt::format("   [{}] = {{ kind = \"file\", headers = {{ {} }} }},\n", lua_quote(m.path), headers);
    out += fmt::format("   [{}] = {{ kind = \"file\", headers = {{ {} }} }},\n",
                       lua_quote(repo + "/manifests/" + m.digest), headers);
    for (const auto& digest : m.blobs)
      out += fmt::format(
          "   [{}] = {{ kind = \"redirect\", status = 307, location = {}, headers = {{ [\"Docker-Content-Digest\"] = "
          "{} }} }},\n",
          lua_quote(repo + "/blobs/" + digest), lua_quote(cdn + cdn_blob_path(digest)), lua_quote(digest));
  }
  out += "  },\n },\n}\n";
  return out;
}

std::string HubServer::nginx_conf() const {
  const std::string d = dir_.string();
  std::string out = fmt::format(
      "# generated by akview's remote test fixture (tests/remote/hub_server.cpp)\n"
      "load_module {0}/ndk_http_module.so;\n"
      "load_module {0}/ngx_http_lua_module.so;\n"
      "{3}"
      "worker_processes 1;\n"
      "pid {1}/nginx.pid;\n"
      "error_log {1}/logs/error.log notice;\n"
      "events {{ worker_connections 4096; }}\n"
      "http {{\n"
      "  default_type application/octet-stream;\n"
      "  sendfile on;\n"
      "  keepalive_requests 100000;\n"
      "  http2_max_concurrent_streams 512;\n"
      "  client_body_temp_path {1}/tmp/body;\n  proxy_temp_path {1}/tmp/proxy;\n  fastcgi_temp_path {1}/tmp/fastcgi;\n"
      "  uwsgi_temp_path {1}/tmp/uwsgi;\n  scgi_temp_path {1}/tmp/scgi;\n"
      "  ssl_certificate {1}/server.pem;\n  ssl_certificate_key {1}/server.key;\n"
      "  ssl_protocols TLSv1.2 TLSv1.3;\n"
      "  lua_shared_dict akview_fixture 1m;\n"
      "  init_by_lua_block {{ akview_fixture = dofile(\"{1}/fixture.lua\"); akview_fixture.load(\"{1}/routes.lua\") "
      "}}\n"
      "  init_worker_by_lua_block {{ akview_fixture.ready() }}\n"
      "  log_format akview escape=json {2};\n",
      options_.module_dir, d, kLogFormat,
      // nginx started by root runs its workers as nobody, who could not read the test's files: keep root
      geteuid() == 0 ? "user root root;\n" : "");
  for (int i = 0; i < kBlockCount; ++i) {
    const BlockState& b = blocks_[i];
    out += fmt::format(
        "  server {{\n"
        "    listen 127.0.0.1:{0} ssl http2;\n{3}"
        "    server_name {1};\n"
        "    root {2}/www/{1};\n"
        "    access_log {2}/logs/{1}.access.log akview;\n"
        "    access_by_lua_block {{ akview_fixture.access(\"{1}\") }}\n",
        ports_[i], kBlockNames[i], d,
        static_cast<Block>(i) == Block::plain ? fmt::format("    listen 127.0.0.1:{};\n", ports_[kBlockCount]) : "");
    if (b.ignore_ranges) out += "    max_ranges 0;\n";
    out += "    location / { }\n";
    for (const auto& [path, sw] : b.switches) {
      if (path.empty()) {
        if (sw.limit_rate) out += fmt::format("    limit_rate {};\n", sw.limit_rate);
        continue;
      }
      out += fmt::format("    location = {} {{", conf_quote(path));
      if (sw.ignore_ranges) out += " max_ranges 0;";
      if (sw.limit_rate) out += fmt::format(" limit_rate {};", sw.limit_rate);
      out += " }\n";
    }
    out += "  }\n";
  }
  return out + "}\n";
}

bool HubServer::write_config() {
  if (hub_stale_) lay_out_hub();
  hub_stale_ = false;
  return write_text(dir_ / "fixture.lua", kHubServerLua) && write_text(dir_ / "routes.lua", routes_lua()) &&
         write_text(dir_ / "nginx.conf", nginx_conf());
}

// ---------------------------------------------------------------- lifecycle

bool HubServer::make_certificates() {
  // One CA and certificate per process (openssl takes ~0.1 s a run): later servers copy them.
  static std::mutex mutex;
  static std::map<std::string, std::string> made;   // file name -> PEM text
  static const char* kFiles[] = {"ca.pem", "server.pem", "server.key"};
  const std::lock_guard lock(mutex);
  if (!made.empty()) {
    for (const char* f : kFiles)
      if (!write_text(dir_ / f, made[f])) return reason_ = "cannot write " + (dir_ / f).string(), false;
    return true;
  }
  const fs::path log = dir_ / "logs" / "openssl.log";
  const std::string d = dir_.string();
  const std::string& o = options_.openssl;
  if (!write_text(dir_ / "server.ext",
                  "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                  "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"))
    return false;
  // P-256 keys: made in milliseconds, where RSA would cost a good part of the start.
  const std::vector<std::vector<std::string>> steps = {
      {o,
       "req",
       "-x509",
       "-newkey",
       "ec",
       "-pkeyopt",
       "ec_paramgen_curve:prime256v1",
       "-nodes",
       "-keyout",
       d + "/ca.key",
       "-out",
       d + "/ca.pem",
       "-days",
       "2",
       "-subj",
       "/CN=akview test CA",
       "-addext",
       "basicConstraints=critical,CA:TRUE",
       "-addext",
       "keyUsage=critical,keyCertSign,cRLSign"},
      {o, "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
       d + "/server.key", "-out", d + "/server.csr", "-subj", "/CN=localhost"},
      {o, "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key", "-CAcreateserial",
       "-out", d + "/server.pem", "-days", "2", "-extfile", d + "/server.ext"},
  };
  for (const auto& step : steps)
    if (run_command(step, log) != 0) {
      reason_ = "openssl failed to make the test certificate: " + read_text(log);
      return false;
    }
  for (const char* f : kFiles) made[f] = read_text(dir_ / f);
  return true;
}

bool HubServer::pick_ports() {
  // Bound to port 0 to learn free ports, all held at once so they differ, then released for nginx
  // (another process could take one in between: start() retries).
  int fds[kBlockCount + 1];
  bool ok = true;
  for (int i = 0; i <= kBlockCount; ++i) {
    fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fds[i] < 0 || bind(fds[i], reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fds[i], reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ok = false;
    else ports_[i] = ntohs(a.sin_port);
  }
  for (int fd : fds)
    if (fd >= 0) close(fd);
  return ok;
}

bool HubServer::launch() {
  const std::string prefix = dir_.string() + "/";
  const std::string conf = (dir_ / "nginx.conf").string(), err = error_log_path().string();
  const std::string out = (dir_ / "logs" / "nginx.out").string();
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) return false;
  if (pid_ == 0) {
    // nginx goes when the test does, even if the test dies without its destructor.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    setpgid(0, 0);   // its own group: stop() ends master and workers at once
    const int null = open("/dev/null", O_RDONLY);
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (null >= 0) dup2(null, 0);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execl(options_.nginx.c_str(), "nginx", "-e", err.c_str(), "-p", prefix.c_str(), "-c", conf.c_str(), "-g",
          "daemon off;", static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid_, pid_);   // as the child does: whichever runs first, stop() finds the group
  return true;
}

bool HubServer::wait_ready(int generation, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    if (read_text(dir_ / "ready") == std::to_string(generation)) {
      bool all = true;
      for (int p : ports_) all = all && port_accepts(p);
      if (all) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

std::string HubServer::error_log_tail() const {
  std::istringstream lines(read_text(error_log_path()) + read_text(dir_ / "logs" / "nginx.out"));
  std::string last;
  for (std::string line; std::getline(lines, line);)
    if (line.find("[emerg]") != std::string::npos || line.find("[alert]") != std::string::npos ||
        line.find("[error]") != std::string::npos || line.find("nginx:") != std::string::npos)
      last = line;
  return last.empty() ? "no message in " + error_log_path().string() : last;
}

bool HubServer::start() {
  if (running_) return true;
  if (dir_.empty()) return reason_ = "cannot make a temporary folder", false;
  if (access(options_.nginx.c_str(), X_OK) != 0)
    return reason_ = options_.nginx + " not found (Debian package nginx-light)", false;
  for (const char* m : {"ndk_http_module.so", "ngx_http_lua_module.so"})
    if (!fs::exists(fs::path(options_.module_dir) / m))
      return reason_ = fmt::format("{}/{} not found (Debian package libnginx-mod-http-lua)", options_.module_dir, m),
             false;
  if (!on_path(options_.openssl)) return reason_ = "openssl not found (Debian package openssl)", false;
  if (!make_certificates()) return false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (!pick_ports()) return reason_ = "cannot find free ports on 127.0.0.1", false;
    ++generation_;
    std::error_code ec;
    fs::remove(dir_ / "ready", ec);
    truncate(error_log_path().c_str(), 0);
    if (!write_config()) return reason_ = "cannot write the nginx configuration in " + dir_.string(), false;
    if (!launch()) return reason_ = "cannot start nginx", false;
    if (wait_ready(generation_, 5000)) {
      running_ = true;
      reason_.clear();
      return true;
    }
    reason_ = "nginx failed to start: " + error_log_tail();
    stop();
    if (reason_.find("Address already in use") == std::string::npos) break;   // another port may be free
  }
  return false;
}

void HubServer::changed() {
  if (!running_) return;
  if (batch_depth_ > 0) {
    batch_pending_ = true;
    return;
  }
  batch_pending_ = false;
  ++generation_;
  // A fresh nginx on the same ports rather than a reload: the Lua data of a reload could stay the
  // old one, and old workers could take one more request; a restart takes ~0.1 s.
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  if (!write_config() || !launch() || !wait_ready(generation_, 5000)) {
    reason_ = "nginx failed to restart: " + error_log_tail();
    running_ = false;
  }
}

void HubServer::stop() {
  running_ = false;
  if (pid_ <= 0) return;
  // A test server has nothing to finish: the whole group at once (nginx's own fast shutdown waits
  // 50 ms and more for its workers).
  kill(-pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}   // namespace akview::testing
