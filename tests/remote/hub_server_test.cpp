// The remote test servers themselves (hub_server.hpp), checked with the curl command line: TLS with
// the fixture's CA only, HTTP/2, Range, the Hub's resolve redirect and its headers, the tree API's
// pages and Link header, the revision API, gating, the Ollama registry's manifests and blob redirects,
// every fault switch, and what the access logs record. Skipped when nginx or curl is missing.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/sha256.hpp"
#include "tests/remote/hub_server.hpp"
#include "tests/writers/ollama_writer.hpp"

namespace akview::testing {
namespace {

namespace fs = std::filesystem;

struct Answer {
  int exit_code = -1;
  int status = 0;
  std::string http_version;                     // "2", "1.1"
  std::map<std::string, std::string> headers;   // of the last response, names in lower case
  std::vector<int> statuses;                    // every response's status (redirects followed)
  std::string body;
  double seconds = 0;
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string bytes_of(const std::string& s, size_t from, size_t n) { return s.substr(from, n); }

class Scratch {
 public:
  Scratch() {
    std::string p = (fs::temp_directory_path() / "akview-remote-test-XXXXXX").string();
    if (mkdtemp(p.data())) dir_ = p;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& rel, const std::string& bytes) const {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

std::string pattern_bytes(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return s;
}

bool have_curl() { return std::system("curl --version >/dev/null 2>&1") == 0; }

// Runs the curl command line; `ca` empty: no --cacert (curl then uses the system's CAs or the
// environment's CURL_CA_BUNDLE).
Answer curl(const fs::path& scratch, const std::string& ca, std::vector<std::string> args,
            const std::vector<std::string>& env = {}) {
  static int n = 0;
  const fs::path headers = scratch / ("h" + std::to_string(n)), body = scratch / ("b" + std::to_string(n)),
                 out = scratch / ("o" + std::to_string(n));
  ++n;
  std::vector<std::string> argv = {
      "curl",           "-sS", "--max-time",  "20", "-D",
      headers.string(), "-o",  body.string(), "-w", "%{http_code} %{http_version} %{time_total}"};
  if (!ca.empty()) argv.insert(argv.end(), {"--cacert", ca});
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    unsetenv("CURL_CA_BUNDLE");
    unsetenv("SSL_CERT_FILE");
    for (const auto& kv : env) putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    execvp("curl", a.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Answer r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream w(slurp(out));
  w >> r.status >> r.http_version >> r.seconds;
  r.body = slurp(body);
  std::istringstream h(slurp(headers));
  for (std::string line; std::getline(h, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("HTTP/", 0) == 0) {
      r.headers.clear();
      r.statuses.push_back(std::atoi(line.substr(line.find(' ') + 1).c_str()));
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return r;
}

class HubServerTest : public ::testing::Test {
 protected:
  // Starts `s`, or skips the test with the reason.
  bool start(HubServer& s) {
    if (!have_curl()) {
      reason_ = "the curl command line is missing (Debian package curl)";
      return false;
    }
    if (!s.start()) {
      reason_ = s.reason();
      return false;
    }
    return true;
  }
  Answer get(const HubServer& s, std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    return curl(scratch_.dir(), s.ca_file().string(), std::move(args), env);
  }
  Scratch scratch_;
  std::string reason_;
};

#define START_OR_SKIP(s) \
  if (!start(s)) GTEST_SKIP() << reason_

TEST_F(HubServerTest, TlsVerifiesWithTheFixturesCaOnlyAndSpeaksHttp2) {
  HubServer s;
  const std::string bytes = pattern_bytes(1000, 1);
  s.add_file("/f.bin", scratch_.write("f.bin", bytes));
  START_OR_SKIP(s);
  const Answer ok = get(s, {s.url(Block::plain, "/f.bin")});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.http_version, "2");
  EXPECT_EQ(ok.body, bytes);
  // through the standard variable, and under the name localhost
  const Answer by_env =
      curl(scratch_.dir(), "", {s.url(Block::plain, "/f.bin")}, {"CURL_CA_BUNDLE=" + s.ca_file().string()});
  EXPECT_EQ(by_env.exit_code, 0);
  const Answer localhost = get(s, {"https://localhost:" + std::to_string(s.port(Block::plain)) + "/f.bin"});
  EXPECT_EQ(localhost.exit_code, 0);
  // plain HTTP on the plain block's second port
  const Answer http = curl(scratch_.dir(), "", {s.http_url("/f.bin")});
  EXPECT_EQ(http.status, 200);
  EXPECT_EQ(http.http_version, "1.1");
  EXPECT_EQ(http.body, bytes);
  // without the CA: certificate problem (60), and nothing served
  const Answer refused = curl(scratch_.dir(), "", {s.url(Block::plain, "/f.bin")});
  EXPECT_EQ(refused.exit_code, 60);
  EXPECT_EQ(s.access_log(Block::plain, 4).size(), 4u);
}

TEST_F(HubServerTest, RangeGives206WithContentRangeEtagAndLastModified) {
  HubServer s;
  const std::string bytes = pattern_bytes(100000, 2);
  s.add_file("/dir/model.gguf", scratch_.write("model.gguf", bytes));
  START_OR_SKIP(s);
  const Answer r = get(s, {"-r", "1000-1999", s.url(Block::plain, "/dir/model.gguf")});
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.header("content-range"), "bytes 1000-1999/100000");
  EXPECT_EQ(r.body, bytes_of(bytes, 1000, 1000));
  EXPECT_FALSE(r.header("etag").empty());
  EXPECT_FALSE(r.header("last-modified").empty());
  const auto log = s.access_log(Block::plain, 1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].range, "bytes=1000-1999");
  EXPECT_EQ(log[0].status, 206);
  EXPECT_EQ(log[0].body_bytes_sent, 1000u);
  EXPECT_GT(log[0].bytes_sent, 1000u);   // headers too
  EXPECT_EQ(log[0].protocol, "HTTP/2.0");
}

struct HubRepo {
  std::string weights = pattern_bytes(300000, 3), config = "{\"model_type\": \"llama\"}\n";
  std::string shard = pattern_bytes(5000, 4);
  void write(const Scratch& sc) const {
    sc.write("repo/model.safetensors", weights);
    sc.write("repo/config.json", config);
    sc.write("repo/sub/a.safetensors", shard);
    sc.write("repo/sub/deeper/b.safetensors", shard);
    sc.write("repo/sub/c.txt", "c");
  }
};
const std::string kSha = "0123456789abcdef0123456789abcdef01234567";

TEST_F(HubServerTest, ResolveRedirectsLargeFilesToTheCdnWithTheHubsHeaders) {
  HubServer::Options o;
  o.lfs_threshold = 1000;   // config.json and c.txt are served by the hub itself
  HubServer s(o);
  HubRepo repo;
  repo.write(scratch_);
  s.add_repo("org", "model", "main", kSha, scratch_.dir() / "repo");
  START_OR_SKIP(s);
  for (const std::string& rev : {std::string("main"), kSha}) {
    const Answer r = get(s, {s.url(Block::hub, s.resolve_path("org", "model", rev, "model.safetensors"))});
    EXPECT_EQ(r.status, 302) << rev;
    const std::string sha256 = sha256_hex({reinterpret_cast<const uint8_t*>(repo.weights.data()), repo.weights.size()});
    EXPECT_EQ(r.header("location"), s.url(Block::cdn, s.cdn_path("org", "model", rev, "model.safetensors")));
    EXPECT_EQ(r.header("x-repo-commit"), kSha);
    EXPECT_EQ(r.header("x-linked-etag"), "\"" + sha256 + "\"");
    EXPECT_EQ(r.header("x-linked-size"), "300000");
    EXPECT_EQ(r.header("etag"), "\"" + sha256 + "\"");
  }
  EXPECT_EQ(s.cdn_path("org", "model", "main", "model.safetensors"), "/repos/org/model/" + kSha + "/model.safetensors");
  // followed: the cdn answers the range
  const Answer followed =
      get(s, {"-L", "-r", "8-15", s.url(Block::hub, s.resolve_path("org", "model", "main", "model.safetensors"))});
  EXPECT_EQ(followed.statuses, (std::vector<int>{302, 206}));
  EXPECT_EQ(followed.body, bytes_of(repo.weights, 8, 8));
  EXPECT_EQ(followed.header("content-range"), "bytes 8-15/300000");
  // a small file: served by the hub, Range too
  const Answer small = get(s, {"-r", "1-5", s.url(Block::hub, s.resolve_path("org", "model", "main", "config.json"))});
  EXPECT_EQ(small.status, 206);
  EXPECT_EQ(small.body, bytes_of(repo.config, 1, 5));
  EXPECT_EQ(small.header("x-repo-commit"), kSha);
  EXPECT_FALSE(small.header("etag").empty());
  // raw: what git holds, the LFS pointer for a large file (a HEAD there is how @huggingface/hub
  // asks whether a file exists)
  const Answer raw = get(s, {s.url(Block::hub, "/org/model/raw/main/model.safetensors")});
  EXPECT_EQ(raw.status, 200);
  EXPECT_EQ(raw.body, "version https://git-lfs.github.com/spec/v1\noid sha256:" +
                          sha256_hex({reinterpret_cast<const uint8_t*>(repo.weights.data()), repo.weights.size()}) +
                          "\nsize 300000\n");
  EXPECT_EQ(get(s, {s.url(Block::hub, "/org/model/raw/main/config.json")}).body, repo.config);
  EXPECT_EQ(get(s, {"-I", s.url(Block::hub, "/org/model/raw/main/absent.json")}).status, 404);
  const Answer head =
      get(s, {"-I", s.url(Block::hub, s.resolve_path("org", "model", "main", "sub/deeper/b.safetensors"))});
  EXPECT_EQ(head.status, 302);
  EXPECT_EQ(head.header("x-linked-size"), "5000");
}

TEST_F(HubServerTest, ASymlinkInTheRepositoryIsServedUnderItsOwnName) {
  const std::string bytes = pattern_bytes(5000, 13);
  const fs::path elsewhere = scratch_.write("elsewhere/real-name.gguf", bytes);
  fs::create_directories(scratch_.dir() / "linked");
  fs::create_symlink(elsewhere, scratch_.dir() / "linked" / "model.gguf");
  HubServer s;
  s.add_repo("org", "linked", "main", kSha, scratch_.dir() / "linked");
  START_OR_SKIP(s);
  const Answer r = get(s, {"-L", s.url(Block::hub, s.resolve_path("org", "linked", "main", "model.gguf"))});
  EXPECT_EQ(r.statuses, (std::vector<int>{302, 200}));
  EXPECT_EQ(r.body, bytes);
  // nothing is placed outside the served folders, whatever a name holds
  s.add_file("/../../escape.bin", elsewhere);
  EXPECT_FALSE(fs::exists(s.dir() / "escape.bin"));
  EXPECT_FALSE(fs::exists(s.dir().parent_path() / "escape.bin"));
}

TEST_F(HubServerTest, UnknownRepositoryRevisionOrFileAnswerAsTheHubDoes) {
  HubServer s;
  HubRepo repo;
  repo.write(scratch_);
  s.add_repo("org", "model", "main", kSha, scratch_.dir() / "repo");
  START_OR_SKIP(s);
  const Answer rev = get(s, {s.url(Block::hub, "/org/model/resolve/v2/config.json")});
  EXPECT_EQ(rev.status, 404);
  EXPECT_EQ(rev.header("x-error-code"), "RevisionNotFound");
  EXPECT_EQ(nlohmann::json::parse(rev.body)["error"], "Invalid rev id: v2");
  const Answer entry = get(s, {s.url(Block::hub, "/org/model/resolve/main/nothing.bin")});
  EXPECT_EQ(entry.status, 404);
  EXPECT_EQ(entry.header("x-error-code"), "EntryNotFound");
  EXPECT_EQ(nlohmann::json::parse(entry.body)["error"], "Entry not found");
  const Answer other = get(s, {s.url(Block::hub, "/org/other/resolve/main/config.json")});
  EXPECT_EQ(other.status, 401);
  EXPECT_EQ(other.header("x-error-code"), "RepoNotFound");
  const Answer tree = get(s, {s.url(Block::hub, "/api/models/org/model/tree/v2")});
  EXPECT_EQ(tree.header("x-error-code"), "RevisionNotFound");
}

TEST_F(HubServerTest, TreeApiPagesFollowTheLinkHeader) {
  HubServer::Options o;
  o.page_size = 2;
  HubServer s(o);
  HubRepo repo;
  repo.write(scratch_);
  s.add_repo("org", "model", "main", kSha, scratch_.dir() / "repo");
  START_OR_SKIP(s);
  std::string next = s.url(Block::hub, "/api/models/org/model/tree/main?recursive=true");
  std::vector<nlohmann::json> entries;
  int pages = 0;
  while (!next.empty() && pages < 10) {
    const Answer page = get(s, {next});
    ASSERT_EQ(page.status, 200);
    const auto list = nlohmann::json::parse(page.body);
    EXPECT_LE(list.size(), 2u);
    for (const auto& e : list) entries.push_back(e);
    ++pages;
    next.clear();
    const std::string link = page.header("link");
    if (!link.empty()) {
      EXPECT_EQ(link.substr(link.size() - 12), "; rel=\"next\"");
      next = link.substr(1, link.find('>') - 1);
      EXPECT_EQ(next.rfind(s.hub_endpoint() + "/api/models/org/model/tree/main?", 0), 0u) << next;
    }
  }
  // 5 files and 2 folders (sub, sub/deeper): 4 pages of at most 2
  EXPECT_EQ(pages, 4);
  ASSERT_EQ(entries.size(), 7u);
  std::map<std::string, nlohmann::json> by_path;
  for (const auto& e : entries) by_path[e["path"]] = e;
  EXPECT_EQ(by_path["sub"]["type"], "directory");
  EXPECT_EQ(by_path["sub/deeper"]["type"], "directory");
  const auto& weights = by_path["model.safetensors"];
  EXPECT_EQ(weights["type"], "file");
  EXPECT_EQ(weights["size"], 300000);
  EXPECT_EQ(weights["oid"].get<std::string>().size(), 40u);
  EXPECT_EQ(weights["lfs"]["oid"],
            sha256_hex({reinterpret_cast<const uint8_t*>(repo.weights.data()), repo.weights.size()}));
  EXPECT_EQ(weights["lfs"]["size"], 300000);
  EXPECT_EQ(weights["lfs"]["pointerSize"], 131);   // the pointer file of a 6-digit size
  // one folder, not recursive: its direct entries
  const Answer sub = get(s, {s.url(Block::hub, "/api/models/org/model/tree/main/sub")});
  std::vector<std::string> paths;
  for (const auto& e : nlohmann::json::parse(sub.body)) paths.push_back(e["path"]);
  EXPECT_EQ(paths, (std::vector<std::string>{"sub/a.safetensors", "sub/c.txt"}));   // first page of 2
  EXPECT_NE(sub.header("link").find("cursor=1"), std::string::npos);
  EXPECT_EQ(sub.header("link").find("recursive"), std::string::npos);
}

TEST_F(HubServerTest, RevisionApiGivesTheCommit) {
  HubServer s;
  HubRepo repo;
  repo.write(scratch_);
  s.add_repo("org", "model", "main", kSha, scratch_.dir() / "repo");
  START_OR_SKIP(s);
  const Answer r = get(s, {s.url(Block::hub, "/api/models/org/model/revision/main")});
  ASSERT_EQ(r.status, 200);
  const auto info = nlohmann::json::parse(r.body);
  EXPECT_EQ(info["id"], "org/model");
  EXPECT_EQ(info["sha"], kSha);
  EXPECT_EQ(info["siblings"].size(), 5u);
}

TEST_F(HubServerTest, GatedRepositoryNeedsTheTokenWhichNeverReachesTheCdn) {
  HubServer s;
  HubRepo repo;
  repo.write(scratch_);
  s.add_repo("org", "gated", "main", kSha, scratch_.dir() / "repo");
  s.set_gated("org", "gated", "hf_secret");
  START_OR_SKIP(s);
  const std::string url = s.url(Block::hub, s.resolve_path("org", "gated", "main", "model.safetensors"));
  const Answer none = get(s, {url});
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.header("x-error-code"), "GatedRepo");
  const Answer wrong = get(s, {"-H", "Authorization: Bearer hf_wrong", url});
  EXPECT_EQ(wrong.status, 403);
  EXPECT_EQ(wrong.header("x-error-code"), "GatedRepo");
  const Answer tree = get(s, {s.url(Block::hub, "/api/models/org/gated/tree/main")});
  EXPECT_EQ(tree.status, 401);
  // curl drops Authorization on a redirect to another host (port): the cdn's log shows none
  const Answer ok = get(s, {"-L", "-r", "0-99", "-H", "Authorization: Bearer hf_secret", url});
  EXPECT_EQ(ok.statuses, (std::vector<int>{302, 206}));
  EXPECT_EQ(ok.body, bytes_of(repo.weights, 0, 100));
  const auto hub = s.access_log(Block::hub, 4);
  ASSERT_EQ(hub.size(), 4u);
  EXPECT_EQ(hub[0].authorization, "");
  EXPECT_EQ(hub[1].authorization, "Bearer hf_wrong");
  EXPECT_EQ(hub[3].authorization, "Bearer hf_secret");
  const auto cdn = s.access_log(Block::cdn, 1);
  ASSERT_EQ(cdn.size(), 1u);
  EXPECT_EQ(cdn[0].authorization, "");
  EXPECT_EQ(cdn[0].range, "bytes=0-99");
  // and when a client does send it there, the log shows it (the check above can fail)
  get(s, {"-H", "Authorization: Bearer hf_secret",
          s.url(Block::cdn, s.cdn_path("org", "gated", "main", "model.safetensors"))});
  const auto cdn2 = s.access_log(Block::cdn, 2);
  ASSERT_EQ(cdn2.size(), 2u);
  EXPECT_EQ(cdn2[1].authorization, "Bearer hf_secret");
}

TEST_F(HubServerTest, RegistryServesManifestsAndRedirectsBlobsToTheCdn) {
  OllamaStoreWriter store((scratch_.dir() / "ollama").string());
  const std::string model = pattern_bytes(20000, 5);
  const auto layer = store.put("application/vnd.ollama.image.model", std::vector<uint8_t>(model.begin(), model.end()));
  ASSERT_TRUE(store.write_manifest("tiny", "q4", {{"model_format", "gguf"}}, nlohmann::ordered_json::array({layer})));
  HubServer s;
  EXPECT_EQ(s.add_ollama_store(scratch_.dir() / "ollama"), 1);
  START_OR_SKIP(s);
  const Answer m = get(s, {s.url(Block::registry, "/v2/library/tiny/manifests/q4")});
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.header("content-type"), "application/vnd.docker.distribution.manifest.v2+json");
  EXPECT_EQ(m.body, slurp(scratch_.dir() / "ollama/manifests/registry.ollama.ai/library/tiny/q4"));
  EXPECT_EQ(m.header("docker-content-digest"),
            "sha256:" + sha256_hex({reinterpret_cast<const uint8_t*>(m.body.data()), m.body.size()}));
  const std::string digest = layer["digest"];
  const Answer blob = get(s, {s.url(Block::registry, "/v2/library/tiny/blobs/" + digest)});
  EXPECT_EQ(blob.status, 307);
  EXPECT_EQ(blob.header("location"), s.url(Block::cdn, HubServer::cdn_blob_path(digest)));
  const Answer bytes = get(s, {"-L", "-r", "100-199", s.url(Block::registry, "/v2/library/tiny/blobs/" + digest)});
  EXPECT_EQ(bytes.statuses, (std::vector<int>{307, 206}));
  EXPECT_EQ(bytes.body, bytes_of(model, 100, 100));
  const Answer missing = get(s, {s.url(Block::registry, "/v2/library/tiny/manifests/q8")});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(nlohmann::json::parse(missing.body)["errors"][0]["code"], "MANIFEST_UNKNOWN");
}

TEST_F(HubServerTest, IgnoredRangesGiveTheWholeBody) {
  HubServer s;
  const std::string bytes = pattern_bytes(50000, 6);
  s.add_file("/norange.bin", scratch_.write("a.bin", bytes));
  s.add_file("/ranged.bin", scratch_.write("a.bin", bytes));
  s.ignore_ranges(Block::plain, "/norange.bin");
  START_OR_SKIP(s);
  const Answer r = get(s, {"-r", "0-9", s.url(Block::plain, "/norange.bin")});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, bytes);
  EXPECT_EQ(get(s, {"-r", "0-9", s.url(Block::plain, "/ranged.bin")}).status, 206);
}

TEST_F(HubServerTest, StatusOnceAnswers429WithRetryAfterThenServes) {
  HubServer s;
  const std::string bytes = pattern_bytes(5000, 7);
  s.add_file("/busy.bin", scratch_.write("a.bin", bytes));
  s.status_once(Block::plain, "/busy.bin", 429, 1);
  START_OR_SKIP(s);
  const Answer first = get(s, {"-r", "0-9", s.url(Block::plain, "/busy.bin")});
  EXPECT_EQ(first.status, 429);
  EXPECT_EQ(first.header("retry-after"), "1");
  const Answer second = get(s, {"-r", "0-9", s.url(Block::plain, "/busy.bin")});
  EXPECT_EQ(second.status, 206);
  EXPECT_EQ(second.body, bytes_of(bytes, 0, 10));
  s.status_once(Block::plain, "/busy.bin", 503, 2);   // set after start: a restart takes it
  EXPECT_TRUE(s.available()) << s.reason();
  const Answer unavailable = get(s, {s.url(Block::plain, "/busy.bin")});
  EXPECT_EQ(unavailable.status, 503);
  EXPECT_EQ(unavailable.header("retry-after"), "2");
}

TEST_F(HubServerTest, DropMidBodyCutsTheFirstAnswerShort) {
  HubServer s;
  const std::string bytes = pattern_bytes(400000, 8);
  s.add_file("/cut.bin", scratch_.write("a.bin", bytes));
  s.drop_mid_body(Block::plain, "/cut.bin");
  START_OR_SKIP(s);
  const Answer cut = get(s, {"-r", "1000-200999", s.url(Block::plain, "/cut.bin")});
  EXPECT_NE(cut.exit_code, 0);   // 92 over HTTP/2 (stream reset), 18 over HTTP/1.1 (partial file)
  EXPECT_EQ(cut.header("content-length"), "200000");
  EXPECT_LT(cut.body.size(), 200000u);
  EXPECT_EQ(cut.body, bytes_of(bytes, 1000, cut.body.size()));
  const Answer h1 = get(s, {"--http1.1", "-r", "1000-200999", s.url(Block::plain, "/cut.bin")});
  EXPECT_EQ(h1.exit_code, 0);   // only the first request was cut
  EXPECT_EQ(h1.body, bytes_of(bytes, 1000, 200000));
  s.drop_mid_body(Block::plain, "/cut.bin");
  const Answer h1cut = get(s, {"--http1.1", s.url(Block::plain, "/cut.bin")});
  EXPECT_EQ(h1cut.exit_code, 18);
}

TEST_F(HubServerTest, OverlongAnswersMoreThanAsked) {
  HubServer s;
  const std::string bytes = pattern_bytes(100000, 12);
  s.add_file("/long.bin", scratch_.write("a.bin", bytes));
  s.overlong(Block::plain, "/long.bin", 1000);
  START_OR_SKIP(s);
  const Answer r = get(s, {"-r", "0-99", s.url(Block::plain, "/long.bin")});
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.header("content-range"), "bytes 0-1099/100000");
  EXPECT_EQ(r.body, bytes_of(bytes, 0, 1100));
  EXPECT_EQ(get(s, {"-r", "0-99", s.url(Block::plain, "/long.bin")}).body.size(), 100u);   // once
}

TEST_F(HubServerTest, RedirectLoopNeverEnds) {
  HubServer s;
  s.add_file("/loop.bin", scratch_.write("a.bin", "x"));
  s.redirect_loop(Block::plain, "/loop.bin");
  START_OR_SKIP(s);
  const Answer r = get(s, {"-L", "--max-redirs", "5", s.url(Block::plain, "/loop.bin")});
  EXPECT_EQ(r.exit_code, 47);   // too many redirects
  EXPECT_EQ(r.statuses.size(), 6u);
}

TEST_F(HubServerTest, SlowAndDelaySwitches) {
  HubServer s;
  const std::string bytes = pattern_bytes(300000, 9);
  s.add_file("/slow.bin", scratch_.write("a.bin", bytes));
  s.add_file("/fast.bin", scratch_.write("a.bin", bytes));
  s.slow(Block::plain, "/slow.bin", 20 * 1024);   // 300 kB: about 15 s
  START_OR_SKIP(s);
  // Behaviour, not speed: the slowed file cannot arrive in 2 s, the other does.
  EXPECT_EQ(get(s, {"--max-time", "2", s.url(Block::plain, "/slow.bin")}).exit_code, 28);
  EXPECT_EQ(get(s, {"--max-time", "10", s.url(Block::plain, "/fast.bin")}).exit_code, 0);
  s.set_delay_ms(Block::plain, 300);
  const Answer delayed = get(s, {s.url(Block::plain, "/fast.bin")});
  EXPECT_EQ(delayed.exit_code, 0);
  EXPECT_GE(delayed.seconds, 0.3);   // the server sleeps at least that long
}

TEST_F(HubServerTest, ReplacedFileGetsANewEtagAndTheOriginalStaysUntouched) {
  HubServer s;
  const std::string before = pattern_bytes(10000, 10), after = pattern_bytes(10000, 11);
  const fs::path original = scratch_.write("orig.bin", before);
  s.add_file("/m.bin", original);
  START_OR_SKIP(s);
  const Answer a = get(s, {"-r", "0-99", s.url(Block::plain, "/m.bin")});
  s.replace_file(Block::plain, "/m.bin", scratch_.write("new.bin", after));   // same size
  const Answer b = get(s, {"-r", "0-99", s.url(Block::plain, "/m.bin")});
  EXPECT_EQ(a.body, bytes_of(before, 0, 100));
  EXPECT_EQ(b.body, bytes_of(after, 0, 100));
  EXPECT_NE(a.header("etag"), b.header("etag"));
  EXPECT_NE(a.header("last-modified"), b.header("last-modified"));
  // a conditional range on the old validator gets the whole new file, as a client must notice
  const Answer c = get(s, {"-r", "0-99", "-H", "If-Range: " + a.header("etag"), s.url(Block::plain, "/m.bin")});
  EXPECT_EQ(c.status, 200);
  EXPECT_EQ(slurp(original), before);
}

TEST_F(HubServerTest, ContentAddedAfterStartIsServed) {
  HubServer s;
  START_OR_SKIP(s);
  s.add_file("/later.bin", scratch_.write("later.bin", "later"));
  ASSERT_TRUE(s.available()) << s.reason();
  EXPECT_EQ(get(s, {s.url(Block::plain, "/later.bin")}).body, "later");
}

TEST_F(HubServerTest, MissingNginxIsReportedNotHidden) {
  HubServer::Options o;
  o.nginx = "/nonexistent/nginx";
  HubServer s(o);
  EXPECT_FALSE(s.start());
  EXPECT_FALSE(s.available());
  EXPECT_NE(s.reason().find("/nonexistent/nginx"), std::string::npos);
}

}   // namespace
}   // namespace akview::testing
