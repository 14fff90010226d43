// Remote models through the real binary against the test servers (hub_server.hpp): every demo model
// opened from the Hub, an Ollama registry and plain URLs gives the answers it gives on disk, and the
// faults a real network brings (ranges ignored, a file replaced, a connection cut, 429, 401, 404, a
// redirect loop, more bytes than asked) end as the README says. Skipped when nginx cannot start.
#include <gtest/gtest.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_process.hpp"
#include "tests/common/sanitizer.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/remote/hub_server.hpp"
#include "tests/screens/harness.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"

namespace fs = std::filesystem;

namespace akview::testing {
namespace {

const fs::path kDemo = fs::path(AKVIEW_DEMO_DIR) / "demo";

// Keys whose values differ between a local and a remote open by design: paths and timings.
bool is_volatile_key(const std::string& k) {
  static const char* kKeys[] = {"path",           "file",      "files_dir",   "seconds", "min_seconds",
                                "median_seconds", "gbps_best", "gbps_median", "gbps",    "time",
                                "elapsed",        "open_path", "where"};
  for (const char* key : kKeys)
    if (k == key) return true;
  return k.find("seconds") != std::string::npos || k.find("gbps") != std::string::npos;
}

void scrub(nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (is_volatile_key(it.key())) it.value() = "-";
      else scrub(it.value());
    }
  } else if (j.is_array()) {
    for (auto& e : j) scrub(e);
  }
}

// JSON lines or one document, scrubbed.
nlohmann::json parse_scrubbed(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    nlohmann::json lines = nlohmann::json::array();
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) lines.push_back(nlohmann::json::parse(line, nullptr, false));
    j = lines;
  }
  scrub(j);
  return j;
}

class RemoteOpen : public ::testing::Test {
 protected:
  void SetUp() override {
    // Everything is added before the start: nginx starts once (a restart costs 0.1-0.5 s).
    // A path that redirects to itself for ever.
    server_.add_file("/loop.gguf", kDemo / "llama-demo-q4km.gguf");
    server_.redirect_loop(Block::plain, "/loop.gguf");
    // The GGUF alone in a folder of its own (a repository of one model).
    fs::create_directories(gguf_dir_.path() + "/g");
    fs::copy_file(kDemo / "llama-demo-q4km.gguf", gguf_dir_.path() + "/g/llama-demo-q4km.gguf");
    server_.add_repo("akview", "demo-q4km", "main", "", gguf_dir_.path() + "/g");
    server_.add_repo("akview", "demo-bf16", "main", "", kDemo / "llama-demo-bf16");
    server_.add_repo("akview", "demo-mlx", "main", "", kDemo / "llama-demo-mlx-4bit");
    server_.add_repo("akview", "demo-all", "main", "", kDemo);
    server_.add_ollama_store(kDemo / "ollama");
    // Three shards whose headers (~0.4 MB each) are longer than the first range: two requests a shard.
    std::vector<std::vector<StTensor>> shards(3);
    for (int s = 0; s < 3; ++s)
      for (int i = 0; i < 3000; ++i)
        shards[s].emplace_back(
            "model.layers." + std::to_string(s) + ".block_sparse_moe.experts." + std::to_string(i) + ".w1.weight",
            "F32", std::vector<int64_t>{1}, le_bytes(std::vector<float>{float(i)}));
    // ... and 1 MiB of data each after them, so that what a rest fetches past its header shows.
    for (int s = 0; s < 3; ++s)
      shards[s].emplace_back("model.layers." + std::to_string(s) + ".wide.weight", "F32", std::vector<int64_t>{1 << 18},
                             le_bytes(std::vector<float>(1 << 18, 0.5f)));
    write_sharded_safetensors(wide_dir_.path(), shards);
    server_.add_repo("akview", "wide", "main", "", wide_dir_.path());
    server_.add_file("/files/llama-demo-q4km.gguf", kDemo / "llama-demo-q4km.gguf");
    for (const char* f : {"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                          "model.safetensors.index.json"})
      server_.add_file(std::string("/bf16/") + f, kDemo / "llama-demo-bf16" / f);
    if (!server_.start()) GTEST_SKIP() << "test servers unavailable: " << server_.reason();
  }

  std::vector<std::string> env(const std::string& extra = {}) const {
    std::vector<std::string> e = server_.client_env();
    e.push_back("AKVIEW_CACHE_DIR=" + cache_.path());
    e.push_back("HF_TOKEN=");
    e.push_back("HF_HOME=" + cache_.path() + "/no-hf-home");
    e.push_back("AKVIEW_HTTP_CONNECT_TIMEOUT=5");
    e.push_back("AKVIEW_HTTP_RETRY_MS=4");   // retries wait 8-64 ms, not 0.5-4 s (Retry-After still honoured)
    if (!extra.empty()) e.push_back(extra);
    return e;
  }

  // The same environment for the view on a pty.
  EnvOverrides terminal_env() const {
    EnvOverrides out;
    for (const std::string& kv : env()) {
      const auto eq = kv.find('=');
      out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return out;
  }

  ProcessResult akview(const std::vector<std::string>& args, const std::string& extra_env = {}) const {
    return without_userfaultfd_ ? run_akview_without_userfaultfd(args, env(extra_env))
                                : run_akview(args, env(extra_env));
  }

  // akview as in a container whose seccomp profile refuses userfaultfd (EPERM, as Docker's default
  // profile does): its output in files, read when it ends.
  ProcessResult run_akview_without_userfaultfd(const std::vector<std::string>& args,
                                               const std::vector<std::string>& env) const {
    TempDir out;
    const std::string out_path = out.file("out"), err_path = out.file("err");
    std::string bin = AKVIEW_BINARY;
    std::vector<char*> argv{bin.data()};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(offsetof(seccomp_data, nr))),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
    const pid_t pid = fork();
    if (pid == 0) {
      const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in = open("/dev/null", O_RDONLY);
      dup2(o, 1);
      dup2(e, 2);
      dup2(in, 0);
      for (const auto& kv : env) putenv(const_cast<char*>(kv.c_str()));
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
        _exit(126);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ProcessResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    auto slurp = [](const std::string& p) {
      std::ifstream in(p, std::ios::binary);
      std::ostringstream s;
      s << in.rdbuf();
      return s.str();
    };
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
  }

  // `info` of the wide model again gives `first_out` and asks the CDN for nothing.
  void expect_wide_opened_from_the_cache(const std::string& first_out) {
    server_.clear_access_logs();
    auto again = akview({"info", hf("wide"), "--json"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(parse_scrubbed(first_out), parse_scrubbed(again.out));
    EXPECT_TRUE(server_.access_log(Block::cdn).empty()) << "the headers were asked again";
  }

  // The same command on disk and remotely: equal JSON but for paths and timings.
  void expect_same(const std::vector<std::string>& command, const std::string& local, const std::string& remote) {
    std::vector<std::string> a = command, b = command;
    for (auto& s : a)
      if (s == "@") s = local;
    for (auto& s : b)
      if (s == "@") s = remote;
    a.push_back("--json");
    b.push_back("--json");
    auto l = akview(a);
    auto r = akview(b);
    ASSERT_EQ(l.exit_code, 0) << l.err;
    ASSERT_EQ(r.exit_code, 0) << "remote " << remote << ": " << r.err;
    EXPECT_EQ(parse_scrubbed(l.out), parse_scrubbed(r.out)) << command.front() << " " << remote;
  }

  std::string hf(const std::string& repo_and_path) const { return "hf://akview/" + repo_and_path; }

  HubServer server_;
  TempDir cache_, gguf_dir_, wide_dir_;
  bool without_userfaultfd_ = false;   // akview() runs under a seccomp filter that refuses userfaultfd
};

TEST_F(RemoteOpen, EveryDemoModelAnswersAsOnDisk) {
  const std::string gguf = (kDemo / "llama-demo-q4km.gguf").string();
  const std::string bf16 = (kDemo / "llama-demo-bf16").string();
  const std::string mlx = (kDemo / "llama-demo-mlx-4bit").string();
  const std::string ollama_q4 = (kDemo / "ollama/manifests/registry.ollama.ai/library/llama-demo/q4_k_m").string();
  const std::string ollama_int4 = (kDemo / "ollama/manifests/registry.ollama.ai/library/llama-demo/int4").string();
  struct Case {
    std::string local, remote, tensor;
  };
  const std::string reg = server_.registry_host();
  const std::vector<Case> cases = {
      {gguf, hf("demo-q4km"), "blk.0.attn_q.weight"},
      {gguf, hf("demo-all/llama-demo-q4km.gguf"), "blk.1.ffn_down.weight"},
      {gguf, server_.url(Block::plain, "/files/llama-demo-q4km.gguf"), "blk.0.attn_v.weight"},
      {bf16, hf("demo-bf16"), "model.layers.0.self_attn.q_proj.weight"},
      {bf16, server_.url(Block::plain, "/bf16/model.safetensors.index.json"), "model.layers.1.mlp.down_proj.weight"},
      {bf16, server_.hub_endpoint() + "/akview/demo-all/tree/main/llama-demo-bf16", "lm_head.weight"},
      {mlx, hf("demo-mlx"), "model.layers.0.self_attn.q_proj.weight"},
      {ollama_q4, "ollama://" + reg + "/library/llama-demo:q4_k_m", "blk.0.attn_q.weight"},
      {ollama_int4, "ollama://" + reg + "/library/llama-demo:int4", "model.layers.0.self_attn.q_proj.weight"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.remote);
    expect_same({"info", "@"}, c.local, c.remote);
    expect_same({"tensors", "@"}, c.local, c.remote);
    expect_same({"meta", "@"}, c.local, c.remote);
    expect_same({"map", "@"}, c.local, c.remote);
    expect_same({"dump", "@", c.tensor, "--rows", "0:2"}, c.local, c.remote);
    expect_same({"explain", "@", c.tensor, "1", "3"}, c.local, c.remote);
    expect_same({"layout", "@", c.tensor}, c.local, c.remote);
    expect_same({"run", "@", c.tensor, "--backend", "cpu"}, c.local, c.remote);
  }
}

// Every oracle model, served as a repository (folders) or a URL (files), answers as on disk; the
// malformed ones fail remotely with the same rule as on disk.
TEST_F(RemoteOpen, EveryOracleModelAnswersAsOnDisk) {
  const fs::path oracles = AKVIEW_ORACLES_DIR;
  if (!fs::exists(oracles / "gguf")) GTEST_SKIP() << "no oracles at " << oracles;
  struct Case {
    std::string local, remote;
  };
  std::vector<Case> cases, malformed;
  int repos = 0;
  {
    const HubServer::Batch batch(server_);   // one restart for every oracle, when the block ends
    for (const char* dir : {"st", "gguf", "pytorch", "malformed"}) {
      for (const auto& e : fs::directory_iterator(oracles / dir)) {
        const std::string name = e.path().filename().string();
        if (name == "ref" || name.ends_with(".json")) continue;
        if (e.is_directory()) {
          const std::string repo = "oracle-" + std::to_string(repos++);
          server_.add_repo("akview", repo, "main", "", e.path());
          cases.push_back({e.path().string(), hf(repo)});
        } else {
          const std::string url_path = std::string("/oracles/") + dir + "/" + name;
          server_.add_file(url_path, e.path());
          (std::string(dir) == "malformed" ? malformed : cases)
              .push_back({e.path().string(), server_.url(Block::plain, url_path)});
        }
      }
    }
    for (const char* store : {"ollama", "ollama_st"})
      for (const auto& m : fs::recursive_directory_iterator(oracles / store / "manifests")) {
        if (!m.is_regular_file()) continue;
        // manifests/HOST/NS/MODEL/TAG
        const fs::path rel = fs::relative(m.path(), oracles / store / "manifests");
        auto it = rel.begin();
        const std::string host = (it++)->string(), ns = (it++)->string(), model = (it++)->string(),
                          tag = (it++)->string();
        server_.add_ollama_store(oracles / store, host);
        cases.push_back(
            {m.path().string(), "ollama://" + server_.registry_host() + "/" + ns + "/" + model + ":" + tag});
      }
  }
  ASSERT_GT(cases.size(), 30u);
  // Under AddressSanitizer every process costs ~0.2 s: there one model in three, and the first of
  // each kind of address (repository, URL, registry), runs through every command (the remote code
  // each reaches is the same; the release build compares all of them).
  std::set<std::string> kinds_seen;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string kind = c.remote.substr(0, c.remote.find(':'));
    if (kAddressSanitizer && !kinds_seen.insert(kind).second && i % 3 != 0) continue;
    SCOPED_TRACE(c.remote);
    auto local = akview({"tensors", c.local, "--json"});
    if (local.exit_code != 0) {   // refused on disk (a pickle that runs code): refused remotely too
      auto remote = akview({"tensors", c.remote, "--json"});
      EXPECT_EQ(remote.exit_code, local.exit_code) << remote.err;
      continue;
    }
    expect_same({"info", "@"}, c.local, c.remote);
    expect_same({"tensors", "@"}, c.local, c.remote);
    expect_same({"meta", "@"}, c.local, c.remote);
    auto rows = nlohmann::json::parse(local.out, nullptr, false);
    if (rows.is_array() && !rows.empty()) {
      const std::string first = rows.front().value("name", std::string());
      expect_same({"dump", "@", first, "--rows", "0:1"}, c.local, c.remote);
      expect_same({"layout", "@", first}, c.local, c.remote);
    }
  }
  for (const Case& c : malformed) {
    SCOPED_TRACE(c.remote);
    auto l = akview({"info", c.local});
    auto r = akview({"info", c.remote});
    EXPECT_EQ(l.exit_code, r.exit_code);
    // The same rule broken: the slug at the end of the line.
    auto slug = [](const std::string& err) {
      return err.substr(err.rfind('(') == std::string::npos ? 0 : err.rfind('('));
    };
    EXPECT_EQ(slug(l.err), slug(r.err)) << l.err << " | " << r.err;
  }
}

TEST_F(RemoteOpen, AFileHeaderTakesAtMostTwoRequests) {
  server_.clear_access_logs();
  auto r = akview({"info", hf("demo-bf16"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Per weight file on the cdn: ≤ 2 ranged requests, ≤ header + 256 KiB.
  std::map<std::string, std::pair<int, uint64_t>> per_file;
  for (const AccessEntry& e : server_.access_log(Block::cdn)) {
    if (!e.uri.ends_with(".safetensors")) continue;
    if (std::getenv("AKVIEW_TEST_VERBOSE"))
      std::fprintf(stderr, "cdn %s %s %d %llu\n", e.uri.c_str(), e.range.c_str(), e.status,
                   (unsigned long long)e.body_bytes_sent);
    per_file[e.uri].first++;
    per_file[e.uri].second += e.body_bytes_sent;
  }
  ASSERT_EQ(per_file.size(), 2u);
  for (const auto& [uri, n] : per_file) {
    EXPECT_LE(n.first, 2) << uri;
    EXPECT_LE(n.second, 300u << 10) << uri;   // the demo's headers are small: one chunk
  }
}

TEST_F(RemoteOpen, AnEstimatedGgufHeaderIsAskedWithRoomToSpare) {
  // A GGUF's header has no length: where the first range ends inside its tensor infos, the rest is
  // guessed at 72 bytes an info. Here they take 130 (90-character names), so the guess falls
  // ~40 KiB short; asked up to the next 256 KiB, the rest still holds them: two requests, not three.
  GgufWriter w;
  for (int i = 0; i < 3000; ++i) {
    std::string name = "blk." + std::to_string(i) + ".";
    name += std::string(90 - name.size(), 'w');
    w.add_tensor(GgufTensorSpec(name, 0, {4}));
  }
  w.add_tensor(GgufTensorSpec("big", 0, {1 << 18}));   // 1 MiB of data after the header
  const std::string path = gguf_dir_.path() + "/long-infos.gguf";
  ASSERT_TRUE(w.write(path));
  ASSERT_GT(w.infos_end(), uint64_t{256} << 10);
  ASSERT_LT(w.infos_end(), uint64_t{512} << 10);
  server_.add_file("/files/long-infos.gguf", path);
  server_.clear_access_logs();
  expect_same({"info", "@"}, path, server_.url(Block::plain, "/files/long-infos.gguf"));
  int ranges = 0;
  for (const AccessEntry& e : server_.access_log(Block::plain)) ranges += e.uri == "/files/long-infos.gguf";
  EXPECT_EQ(ranges, 2);
}

// The requests of one run of the client, from AKVIEW_HTTP_TRACE's "run of N requests" lines.
std::vector<int> request_rounds(const std::string& trace) {
  std::vector<int> rounds;
  std::istringstream in(trace);
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find(" run of ");
    if (at != std::string::npos) rounds.push_back(std::atoi(line.c_str() + at + 8));
  }
  return rounds;
}

TEST_F(RemoteOpen, AShardedModelOpensInTwoRoundsOfRequests) {
  // The revision and the listing together; then the configs, the index and every shard's first
  // range together (the shards named by the listing, not by the index, which would be a round of
  // its own first). The demo's headers fit in the first range: no third round.
  auto r = akview({"info", hf("demo-bf16"), "--json"}, "AKVIEW_HTTP_TRACE=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rounds = request_rounds(r.err);
  ASSERT_EQ(rounds.size(), 2u) << r.err;
  EXPECT_EQ(rounds[0], 2) << r.err;
  EXPECT_GE(rounds[1], 4) << r.err;   // config.json, the index, two shards (and any other small text)
}

// The lines of AKVIEW_HTTP_TRACE's output, and where the first one holding `what` is (npos: none).
size_t trace_line_of(const std::string& trace, const std::string& what) {
  std::istringstream in(trace);
  std::string line;
  for (size_t n = 0; std::getline(in, line); ++n)
    if (line.find(what) != std::string::npos) return n;
  return std::string::npos;
}

// AKVIEW_HTTP_TRACE's output has a line holding `first`, then later one holding `then`.
void expect_traced_before(const std::string& trace, const std::string& first, const std::string& then) {
  const size_t a = trace_line_of(trace, first), b = trace_line_of(trace, then);
  ASSERT_NE(a, std::string::npos) << first << "\n" << trace;
  ASSERT_NE(b, std::string::npos) << then << "\n" << trace;
  EXPECT_LT(a, b) << trace;
}

TEST_F(RemoteOpen, AHeadersRestIsAskedAsSoonAsItsFirstRangeIsIn) {
  // Each shard's header is longer than its first range: the rest is asked in the same run of the
  // client as the first ranges (as each first range lands), not in a round after the slowest one.
  expect_same({"tensors", "@"}, wide_dir_.path(), hf("wide"));
  fs::remove_all(cache_.path());   // cold: every header asked again
  server_.clear_access_logs();
  auto r = akview({"info", hf("wide"), "--json"}, "AKVIEW_HTTP_TRACE=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rounds = request_rounds(r.err);
  ASSERT_EQ(rounds.size(), 2u) << r.err;
  std::map<std::string, std::pair<int, uint64_t>> per_shard;   // requests, body bytes
  for (const AccessEntry& e : server_.access_log(Block::cdn))
    if (e.uri.ends_with(".safetensors")) {
      per_shard[e.uri].first++;
      per_shard[e.uri].second += e.body_bytes_sent;
    }
  ASSERT_EQ(per_shard.size(), 3u);
  for (const auto& [uri, n] : per_shard) {
    EXPECT_EQ(n.first, 2) << uri;
    // The rest ends within one cache chunk (16 KiB) past the header: 8 bytes of length, then the JSON.
    const std::string name = uri.substr(uri.rfind('/') + 1);
    std::ifstream shard(wide_dir_.path() + "/" + name, std::ios::binary);
    uint64_t json_bytes = 0;
    shard.read(reinterpret_cast<char*>(&json_bytes), 8);
    ASSERT_GT(json_bytes, 256u << 10) << name;   // longer than the first range
    EXPECT_GE(n.second, 8 + json_bytes) << uri;
    EXPECT_LE(n.second, 8 + json_bytes + (16u << 10)) << uri;
  }
}

TEST_F(RemoteOpen, AHeadersRestIsAskedWhileItsFirstRangeIsOnItsWay) {
  // A SafeTensors file says its header's length in its first 8 bytes: the rest is asked as soon as
  // they are in, not a round trip after the first range has ended. Here the CDN sends shard 2 at
  // 256 KiB/s: its first range takes ~1 s, its rest (~100 KiB, at the same rate) lands before it.
  // Still two requests for the shard, the rest straight from the CDN (no second redirect) and
  // conditional on the first answer's validator.
  const std::string shard = server_.cdn_path("akview", "wide", "main", "model-00002-of-00003.safetensors");
  server_.slow(Block::cdn, shard, 256 << 10);
  auto r = akview({"info", hf("wide"), "--json"}, "AKVIEW_HTTP_TRACE=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_traced_before(r.err, "model-00002-of-00003.safetensors range 262144-",
                       "model-00002-of-00003.safetensors range 0-262143");
  int asked = 0, redirected = 0;
  for (const AccessEntry& e : server_.access_log(Block::cdn)) {
    if (!e.uri.ends_with("model-00002-of-00003.safetensors")) continue;
    ++asked;
    if (e.range.starts_with("bytes=262144-")) {
      EXPECT_FALSE(e.if_range.empty()) << e.range;
    }
  }
  for (const AccessEntry& e : server_.access_log(Block::hub))
    redirected += e.uri.ends_with("model-00002-of-00003.safetensors");
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(redirected, 1);
  expect_same({"info", "@"}, wide_dir_.path(), hf("wide"));
}

TEST_F(RemoteOpen, TheHeadersAreAskedBeforeTheCacheFilesAreMade) {
  // Each remote file's cache file is a file creation (0.16 ms on an ext4 without a journal, up to
  // 0.6 ms there after many deletions; 164 for a 163-shard model): the headers' requests go out
  // first, and the files are made while the answers are a round trip away. The model is the same.
  auto r = akview({"info", hf("wide"), "--json"}, "AKVIEW_HTTP_TRACE=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_traced_before(r.err, "-- fetch 3 headers", "-- stand-ins made");
  expect_same({"info", "@"}, wide_dir_.path(), hf("wide"));
  // A cache file that cannot be made then (here: a link to a folder that is not there, in place of
  // the second shard's) is that open's one-line error, not a hang.
  std::string shard;
  for (const auto& e : fs::recursive_directory_iterator(cache_.path()))
    if (e.path().filename() == "model-00002-of-00003.safetensors") shard = e.path().string();
  ASSERT_FALSE(shard.empty());
  fs::remove(shard);
  fs::remove(fs::path(shard).parent_path() / ".model-00002-of-00003.safetensors.akview");
  fs::create_symlink(cache_.path() + "/not-there/shard", shard);
  auto broken = akview({"info", hf("wide"), "--json"});
  EXPECT_EQ(broken.exit_code, 1) << broken.err;
  EXPECT_NE(broken.err.find("model-00002-of-00003.safetensors"), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("cannot create the cache file"), std::string::npos) << broken.err;
  EXPECT_EQ(std::count(broken.err.begin(), broken.err.end(), '\n'), 1) << broken.err;
}

TEST_F(RemoteOpen, ASecondOpenReadsWhatTheFirstFetchedFromTheCache) {
  // The cache's records say which chunks were fetched: an open again asks the server for none of
  // them, and a read past them (a tensor's data after the header) is fetched, not read as zeros.
  auto first = akview({"info", hf("wide"), "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  expect_wide_opened_from_the_cache(first.out);
  const std::string last = "model.layers.2.block_sparse_moe.experts.2999.w1.weight";
  expect_same({"dump", "@", last}, wide_dir_.path(), hf("wide"));
  bool fetched = false;
  for (const AccessEntry& e : server_.access_log(Block::cdn)) fetched = fetched || e.uri.ends_with(".safetensors");
  EXPECT_TRUE(fetched) << "the tensor's data was read from the cache before it was fetched";
  server_.clear_access_logs();
  expect_same({"dump", "@", last}, wide_dir_.path(), hf("wide"));
  EXPECT_TRUE(server_.access_log(Block::cdn).empty()) << "the tensor's data was asked again";
}

// The cache's files (regular, not hidden) whose path holds `part`, and the bytes they take on disk.
std::vector<fs::path> cached_files(const std::string& root, const std::string& part, uint64_t* bytes = nullptr) {
  std::vector<fs::path> out;
  if (bytes) *bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.starts_with(".") || e.path().string().find(part) == std::string::npos) continue;
    out.push_back(e.path());
    struct stat st {};
    if (bytes && stat(e.path().c_str(), &st) == 0) *bytes += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  return out;
}

std::string fetched_attribute(const fs::path& p) {
  std::string v(4096, '\0');
  const ssize_t n = getxattr(p.c_str(), "user.akview.fetched", v.data(), v.size());
  return n < 0 ? std::string() : v.substr(0, static_cast<size_t>(n));
}

bool sidecar_beside(const fs::path& p) {
  return fs::exists(p.parent_path() / ("." + p.filename().string() + ".akview"));
}

// Whether files in `dir` take user attributes (tmpfs before Linux 6.6 and some others do not).
bool takes_user_attributes(const std::string& dir) {
  const std::string probe = dir + "/.attribute-probe";
  std::ofstream(probe) << "x";
  const bool ok = setxattr(probe.c_str(), "user.akview.probe", "1", 1, 0) == 0;
  fs::remove(probe);
  return ok;
}

TEST_F(RemoteOpen, EachCacheFileRecordsItsFetchedChunksInAnAttribute) {
  // One setxattr a file instead of a sidecar file made and renamed (two file creations each: 164
  // of them for a 163-shard model).
  fs::create_directories(cache_.path());
  if (!takes_user_attributes(cache_.path())) GTEST_SKIP() << "the cache's file system takes no user attributes";
  auto first = akview({"info", hf("wide"), "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto shards = cached_files(cache_.path(), "-of-00003.safetensors");
  ASSERT_EQ(shards.size(), 3u);
  for (const auto& shard : shards) {
    const std::string record = fetched_attribute(shard);
    EXPECT_TRUE(record.starts_with("akview-remote 2\n")) << shard << ": " << record;
    EXPECT_NE(record.find("\n0 "), std::string::npos) << shard << ": the header's chunks from 0: " << record;
    EXPECT_FALSE(sidecar_beside(shard)) << shard;
  }
}

TEST_F(RemoteOpen, WhereNoAttributeCanBeWrittenSidecarFilesRecordTheChunks) {
  // AKVIEW_CACHE_RECORDS=sidecars: as on a file system without user attributes.
  auto first = akview({"info", hf("wide"), "--json"}, "AKVIEW_CACHE_RECORDS=sidecars");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto shards = cached_files(cache_.path(), "-of-00003.safetensors");
  ASSERT_EQ(shards.size(), 3u);
  for (const auto& shard : shards) {
    EXPECT_TRUE(sidecar_beside(shard)) << shard;
    EXPECT_TRUE(fetched_attribute(shard).empty()) << shard;
  }
  // An akview that writes attributes reads those sidecars: nothing is asked again ...
  expect_wide_opened_from_the_cache(first.out);
  // ... and its next record of a file (a tensor's data fetched) is the attribute, the sidecar gone.
  const std::string last = "model.layers.2.block_sparse_moe.experts.2999.w1.weight";
  expect_same({"dump", "@", last}, wide_dir_.path(), hf("wide"));
  if (takes_user_attributes(cache_.path())) {
    const auto third = cached_files(cache_.path(), "model-00003-of-00003");
    ASSERT_EQ(third.size(), 1u);
    EXPECT_FALSE(fetched_attribute(third[0]).empty());
    EXPECT_FALSE(sidecar_beside(third[0]));
  }
  server_.clear_access_logs();
  expect_same({"dump", "@", last}, wide_dir_.path(), hf("wide"));
  EXPECT_TRUE(server_.access_log(Block::cdn).empty()) << "the tensor's data was asked again";
}

TEST_F(RemoteOpen, TheCacheKeepsToItsCapDroppingTheFilesUsedLeastRecently) {
  // AKVIEW_CACHE_MAX: after an open, the files whose chunks were last fetched longest ago go first
  // until the cache fits, never one of the model being opened. With records in attributes (the
  // file's change time) and in sidecars (the sidecar's time) alike.
  for (const std::string records : {"", "AKVIEW_CACHE_RECORDS=sidecars"}) {
    SCOPED_TRACE(records.empty() ? "attributes" : records);
    fs::remove_all(cache_.path());
    for (const char* repo : {"wide", "demo-q4km", "demo-bf16"}) {   // used in this order
      auto r = akview({"info", hf(repo), "--json"}, records);
      ASSERT_EQ(r.exit_code, 0) << repo << ": " << r.err;
    }
    uint64_t wide = 0, q4km = 0, bf16 = 0;
    ASSERT_GE(cached_files(cache_.path(), "/wide/", &wide).size(), 4u);   // 3 shards and the index
    ASSERT_FALSE(cached_files(cache_.path(), "/demo-q4km/", &q4km).empty());
    ASSERT_FALSE(cached_files(cache_.path(), "/demo-bf16/", &bf16).empty());
    ASSERT_GT(wide, bf16);   // so that dropping bf16 first would not be enough
    // Opening q4km again (its files open, so kept) with room for all but the wide model: the
    // wide model, used longest ago, goes; bf16, used after it, stays.
    const std::string cap = "AKVIEW_CACHE_MAX=" + std::to_string(q4km + bf16);
    auto r = run_akview({"info", hf("demo-q4km"), "--json"}, [&] {
      auto e = env(records);
      e.push_back(cap);
      return e;
    }());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(cached_files(cache_.path(), "/wide/").empty());
    EXPECT_FALSE(cached_files(cache_.path(), "/demo-bf16/").empty());
    EXPECT_FALSE(cached_files(cache_.path(), "/demo-q4km/").empty());
    for (const auto& e : fs::recursive_directory_iterator(cache_.path()))   // no sidecar left of it either
      EXPECT_FALSE(e.path().string().find("/wide/") != std::string::npos &&
                   e.path().filename().string().ends_with(".akview"))
          << e.path();
  }
}

TEST_F(RemoteOpen, ShardsAreParsedWhileTheIndexIsOnItsWay) {
  // The index comes slowly (~0.7 s): the shards' headers, in long before it, are mapped (and
  // parsed) meanwhile, not after it. The model is the same.
  const std::string index = server_.cdn_path("akview", "wide", "main", "model.safetensors.index.json");
  ASSERT_GT(fs::file_size(wide_dir_.path() + "/model.safetensors.index.json"), 500000u);
  server_.slow(Block::cdn, index, 700 << 10);
  expect_same({"info", "@"}, wide_dir_.path(), hf("wide"));
  fs::remove_all(cache_.path());
  auto r = akview({"info", hf("wide"), "--json"}, "AKVIEW_HTTP_TRACE=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_traced_before(r.err, "-- remote mappings:", "model.safetensors.index.json range");
}

TEST_F(RemoteOpen, AShardsHeaderThatCannotBeFetchedIsTheOpensErrorNotASignal) {
  // The shards' headers come on a thread of their own while the open parses: the rest of shard 2's
  // header never comes (503 from 256 KiB on, all tries). The open ends with that one-line error,
  // as when it waited for every header before parsing; nothing reads a page that never came.
  const std::string shard = server_.cdn_path("akview", "wide", "main", "model-00002-of-00003.safetensors");
  server_.fail_ranges_from(Block::cdn, shard, 256 << 10);
  auto info = akview({"info", hf("wide")});
  EXPECT_EQ(info.exit_code, 1) << info.err;
  EXPECT_NE(info.err.find("503"), std::string::npos) << info.err;
  EXPECT_NE(info.err.find("model-00002-of-00003.safetensors"), std::string::npos) << info.err;
  const std::string own = info.err.substr(0, info.err.find("\n-----"));
  EXPECT_EQ(std::count(own.begin(), own.end(), '\n') + (own.size() < info.err.size() ? 1 : 0), 1) << info.err;
}

TEST_F(RemoteOpen, PathsShownAreAddressesNotTheCache) {
  // Reports name a remote model's files by their addresses ...
  auto info = akview({"info", hf("demo-bf16"), "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  auto j = nlohmann::json::parse(info.out, nullptr, false);
  ASSERT_TRUE(j.contains("files")) << info.out;
  ASSERT_EQ(j["files"].size(), 3u) << info.out;
  for (const auto& f : j["files"]) EXPECT_TRUE(f["path"].get<std::string>().starts_with(hf("demo-bf16/"))) << f.dump();
  for (const char* command : {"tensors", "meta", "layout"}) {
    auto r = akview({command, hf("demo-bf16"), "--json"});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_EQ(r.out.find(cache_.path()), std::string::npos) << command << ": " << r.out.substr(0, 2000);
  }
  // ... so does the model list of a repository (the files of each row) ...
  auto list = akview({hf("demo-all"), "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto rows = nlohmann::json::parse(list.out, nullptr, false);
  ASSERT_FALSE(rows.is_discarded()) << list.out;
  const std::string text = rows.dump();
  EXPECT_NE(text.find(hf("demo-all/llama-demo-q4km.gguf")), std::string::npos) << text;
  std::function<void(const nlohmann::json&)> no_cache_files = [&](const nlohmann::json& v) {
    if (v.is_object()) {
      if (v.contains("files") && v["files"].is_array()) {
        for (const auto& f : v["files"]) EXPECT_EQ(f.dump().find(cache_.path()), std::string::npos) << f.dump();
      }
      for (const auto& [k, e] : v.items()) no_cache_files(e);
    } else if (v.is_array()) {
      for (const auto& e : v) no_cache_files(e);
    }
  };
  no_cache_files(rows);
  // ... and an error: a shard the index names that the repository lacks.
  fs::create_directories(gguf_dir_.path() + "/broken");
  for (const char* f : {"model.safetensors.index.json", "model-00001-of-00002.safetensors"})
    fs::copy_file(kDemo / "llama-demo-bf16" / f, gguf_dir_.path() + "/broken/" + f);
  server_.add_repo("akview", "broken", "main", "", gguf_dir_.path() + "/broken");
  auto broken = akview({"info", hf("broken")});
  EXPECT_EQ(broken.exit_code, 1) << broken.err;
  EXPECT_EQ(broken.err.find(cache_.path()), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find(hf("broken/model-00002-of-00002.safetensors")), std::string::npos) << broken.err;
}

TEST_F(RemoteOpen, ARepositoryOfSeveralModelsIsAList) {
  auto r = akview({hf("demo-all"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  std::string text = j.dump();
  EXPECT_NE(text.find("llama-demo-q4km.gguf"), std::string::npos) << text;
  EXPECT_NE(text.find("llama-demo-bf16"), std::string::npos) << text;
  // A command on the repository itself names its models, as for a local folder.
  auto info = akview({"info", hf("demo-all")});
  EXPECT_NE(info.exit_code, 0) << info.err;   // as for a local folder of several models
  EXPECT_NE(info.err.find("holds"), std::string::npos) << info.err;
}

TEST_F(RemoteOpen, RangesIgnoredAreStoppedNotDownloaded) {
  // 64 MiB: more than the loopback's socket buffers hold, so what nginx logs as sent is what crossed.
  const std::string big = cache_.path() + "/big.gguf";
  {
    std::ifstream in(kDemo / "llama-demo-q4km.gguf", std::ios::binary);
    std::ofstream out(big, std::ios::binary);
    out << in.rdbuf();
  }
  fs::resize_file(big, uint64_t{64} << 20);
  server_.add_file("/files/big.gguf", big);
  server_.ignore_ranges(Block::plain, "/files/big.gguf");
  server_.clear_access_logs();
  auto r = akview({"info", server_.url(Block::plain, "/files/big.gguf")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("ignored the Range"), std::string::npos) << r.err;
  // Stopped on the first bytes: far less than the file crossed.
  uint64_t sent = 0;
  for (const AccessEntry& e : server_.access_log(Block::plain, 1)) sent += e.body_bytes_sent;
  EXPECT_LT(sent, uint64_t{32} << 20);
}

TEST_F(RemoteOpen, AFileReplacedOnTheServerIsAnErrorNotAMix) {
  const std::string url = server_.url(Block::plain, "/files/llama-demo-q4km.gguf");
  // A first run fetches the header (and records the validator) ...
  ASSERT_EQ(akview({"info", hf("demo-q4km")}).exit_code, 0);
  // ... the CDN's bytes change under the same URL; the tensor data of that first open is asked for.
  fs::path other = cache_.path() + "/other.gguf";
  {
    std::ifstream in(kDemo / "llama-demo-q4km.gguf", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes[bytes.size() - 100] ^= 0x55;
    std::ofstream(other, std::ios::binary) << bytes;
  }
  server_.replace_file(Block::cdn, server_.cdn_path("akview", "demo-q4km", "main", "llama-demo-q4km.gguf"), other);
  auto r = akview({"dump", hf("demo-q4km"), "output.weight", "--rows", "0:1"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("changed on the server"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(changed)"), std::string::npos) << r.err;
  (void)url;
}

TEST_F(RemoteOpen, ADroppedConnectionAndA429AreRetried) {
  const std::string cdn = server_.cdn_path("akview", "demo-q4km", "main", "llama-demo-q4km.gguf");
  server_.drop_mid_body(Block::cdn, cdn, 1);
  server_.status_once(Block::hub, "/api/models/akview/demo-q4km/revision/main", 429, 1, 1);
  server_.clear_access_logs();
  expect_same({"info", "@"}, (kDemo / "llama-demo-q4km.gguf").string(), hf("demo-q4km/llama-demo-q4km.gguf"));
  bool saw_429 = false;
  for (const AccessEntry& e : server_.access_log(Block::hub)) saw_429 = saw_429 || e.status == 429;
  EXPECT_TRUE(saw_429);
}

TEST_F(RemoteOpen, AHeaderThatCannotBeFetchedIsAnErrorNotASignal) {
  // A GGUF header of 2.3 MB whose first 256 KiB hold short strings: the size estimated from them
  // falls short, so the parse itself reads pages no prefetch fetched, and every range from 512 KiB
  // on fails (503, all five tries). The parse reads the mapping unguarded: without the open's
  // FetchFailureScope the failed fetch is a SIGBUS.
  GgufWriter w;
  std::vector<GgufValue> strings;
  for (int i = 0; i < 30000; ++i) strings.push_back(gguf_string("a"));
  for (int i = 0; i < 2000; ++i) strings.push_back(gguf_string(std::string(1000, 'b')));
  w.set("test.strings", gguf_array(kGgufString, strings));
  w.add_tensor(GgufTensorSpec("t", 0, {4}));
  const std::string path = gguf_dir_.path() + "/long-header.gguf";
  ASSERT_TRUE(w.write(path));
  ASSERT_GT(w.infos_end(), uint64_t{2} << 20);
  server_.add_file("/files/long-header.gguf", path);
  server_.fail_ranges_from(Block::plain, "/files/long-header.gguf", 512 << 10);
  auto info = akview({"info", server_.url(Block::plain, "/files/long-header.gguf")});
  EXPECT_EQ(info.exit_code, 1) << info.err;
  EXPECT_NE(info.err.find("503"), std::string::npos) << info.err;
  // One line of akview's (a sanitizer build adds LeakSanitizer's table of suppressions after it).
  const std::string own = info.err.substr(0, info.err.find("\n-----"));
  EXPECT_EQ(std::count(own.begin(), own.end(), '\n') + (own.size() < info.err.size() ? 1 : 0), 1) << info.err;

  // A repository's listing: a model whose header cannot be fetched is a row that says why; the
  // other models list (the prefetch of the listing's headers failing is not the listing's error).
  const std::string cdn = server_.cdn_path("akview", "demo-all", "main", "llama-demo-q4km.gguf");
  server_.status_once(Block::cdn, cdn, 503, 0, 1000);
  auto list = akview({hf("demo-all"), "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("503"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("llama-demo-bf16"), std::string::npos) << list.out;
}

TEST_F(RemoteOpen, AKVIEW_REMOTE_FAULTSChoosesHowFaultsAreServed) {
  // Signals serve the same answers as userfaultfd (the suite runs again with them:
  // remote.faults_by_signals); the trace says which mechanism serves.
  const std::string gguf = (kDemo / "llama-demo-q4km.gguf").string();
  const std::string url = server_.url(Block::plain, "/files/llama-demo-q4km.gguf");
  std::vector<std::string> e = env("AKVIEW_REMOTE_FAULTS=signals");
  e.push_back("AKVIEW_HTTP_TRACE=1");
  auto signals = run_akview({"dump", url, "blk.0.attn_q.weight", "--json"}, e);
  ASSERT_EQ(signals.exit_code, 0) << signals.err;
  EXPECT_NE(signals.err.find("remote mappings: signals (AKVIEW_REMOTE_FAULTS=signals)"), std::string::npos)
      << signals.err;
  auto local = akview({"dump", gguf, "blk.0.attn_q.weight", "--json"});
  EXPECT_EQ(parse_scrubbed(local.out), parse_scrubbed(signals.out));
  auto unknown = akview({"info", url}, "AKVIEW_REMOTE_FAULTS=pigeons");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("AKVIEW_REMOTE_FAULTS must be auto, userfaultfd or signals"), std::string::npos)
      << unknown.err;
}

TEST_F(RemoteOpen, WhereUserfaultfdIsRefusedSignalsGiveTheSameAnswers) {
  // A container's seccomp profile: userfaultfd fails with EPERM, and the default (auto) falls back.
  without_userfaultfd_ = true;
  std::vector<std::string> e = env("AKVIEW_REMOTE_FAULTS=auto");
  e.push_back("AKVIEW_HTTP_TRACE=1");
  auto traced = run_akview_without_userfaultfd({"info", hf("demo-bf16")}, e);
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_NE(traced.err.find("remote mappings: signals (userfaultfd is not available here (Operation not permitted))"),
            std::string::npos)
      << traced.err;
  auto refused = akview({"info", hf("demo-bf16")}, "AKVIEW_REMOTE_FAULTS=userfaultfd");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("userfaultfd is not available here"), std::string::npos) << refused.err;

  const std::string gguf = (kDemo / "llama-demo-q4km.gguf").string();
  const std::string bf16 = (kDemo / "llama-demo-bf16").string();
  for (const auto& [local, remote, tensor] :
       {std::tuple<std::string, std::string, std::string>{gguf, hf("demo-q4km"), "blk.0.attn_q.weight"},
        {bf16, hf("demo-bf16"), "model.layers.0.self_attn.q_proj.weight"}}) {
    SCOPED_TRACE(remote);
    expect_same({"info", "@"}, local, remote);
    expect_same({"meta", "@"}, local, remote);
    expect_same({"dump", "@", tensor, "--rows", "0:2"}, local, remote);
    expect_same({"explain", "@", tensor, "1", "3"}, local, remote);
    expect_same({"run", "@", tensor, "--backend", "cpu"}, local, remote);
    // diff copies rows out of the mapping with process_vm_readv, which cannot wait for a fetch: the
    // rows nothing has read yet are decoded from the mapping instead, with the same sums.
    auto l = akview({"diff", local, local, "--json"});
    auto r = akview({"diff", remote, local, "--json", "--fetch-all"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto lj = parse_scrubbed(l.out), rj = parse_scrubbed(r.out);
    lj["a"] = rj["a"] = "-";   // the model's path, or its address
    EXPECT_TRUE(lj == rj) << "diff " << remote << ": " << r.out.substr(0, 2000);
  }
}

TEST_F(RemoteOpen, UnauthorizedNotFoundAndLoopsSayWhatToDo) {
  server_.set_gated("akview", "demo-bf16", "secret-token");
  auto no_token = akview({"info", hf("demo-bf16")});
  EXPECT_EQ(no_token.exit_code, 1);
  EXPECT_NE(no_token.err.find("HF_TOKEN"), std::string::npos) << no_token.err;
  auto wrong = akview({"info", hf("demo-bf16")}, "HF_TOKEN=wrong");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("403"), std::string::npos) << wrong.err;
  auto missing = akview({"info", hf("no-such-repo")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
  auto bad_revision = akview({"info", hf("demo-q4km@no-such-branch")});
  EXPECT_EQ(bad_revision.exit_code, 1);
  EXPECT_NE(bad_revision.err.find("404"), std::string::npos) << bad_revision.err;
  auto bad_path = akview({"info", hf("demo-q4km/nothing-here.gguf")});
  EXPECT_EQ(bad_path.exit_code, 1);
  EXPECT_NE(bad_path.err.find("not"), std::string::npos) << bad_path.err;
  auto loop = akview({"info", server_.url(Block::plain, "/loop.gguf")});
  EXPECT_EQ(loop.exit_code, 1);
  EXPECT_NE(loop.err.find("redirects"), std::string::npos) << "[" << loop.err << "]";
}

TEST_F(RemoteOpen, TheTokenGoesToTheHubOnlyNeverToTheCdn) {
  server_.set_gated("akview", "demo-bf16", "secret-token");
  server_.clear_access_logs();
  auto r = akview({"dump", hf("demo-bf16"), "lm_head.weight", "--rows", "0:1", "--json"}, "HF_TOKEN=secret-token");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int hub_with_token = 0;
  for (const AccessEntry& e : server_.access_log(Block::hub))
    hub_with_token += e.authorization == "Bearer secret-token";
  EXPECT_GT(hub_with_token, 0);
  const auto cdn = server_.access_log(Block::cdn, 1);
  EXPECT_FALSE(cdn.empty());
  for (const AccessEntry& e : cdn)
    EXPECT_TRUE(e.authorization.empty() || e.authorization == "-") << e.uri << " " << e.authorization;
}

TEST_F(RemoteOpen, MoreBytesThanAskedAreRefused) {
  server_.overlong(Block::plain, "/files/llama-demo-q4km.gguf", 65536, 10);
  auto r = akview({"info", server_.url(Block::plain, "/files/llama-demo-q4km.gguf")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("network"), std::string::npos) << r.err;
}

TEST_F(RemoteOpen, WholeModelCommandsSayWhatTheyFetch) {
  auto stats = akview({"stats", hf("demo-q4km")});
  EXPECT_EQ(stats.exit_code, 1);
  EXPECT_NE(stats.err.find("--fetch-all"), std::string::npos) << stats.err;
  EXPECT_NE(stats.err.find("bytes"), std::string::npos) << stats.err;
  auto diff = akview({"diff", hf("demo-q4km"), (kDemo / "llama-demo-bf16").string()});
  EXPECT_EQ(diff.exit_code, 1);
  auto all = akview({"stats", hf("demo-q4km"), "--fetch-all", "--json"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  auto local = akview({"stats", (kDemo / "llama-demo-q4km.gguf").string(), "--json"});
  EXPECT_EQ(parse_scrubbed(all.out), parse_scrubbed(local.out));
  // Fetched now: the same command needs no flag.
  EXPECT_EQ(akview({"stats", hf("demo-q4km")}).exit_code, 0);
}

TEST_F(RemoteOpen, ASlowTransferIsCancelledWithEscInTheView) {
  // 4 KiB/s: the first 256 KiB of the GGUF would take a minute.
  server_.slow(Block::cdn, server_.cdn_path("akview", "demo-q4km", "main", "llama-demo-q4km.gguf"), 4096);
  Terminal term;
  const EnvOverrides env = terminal_env();
  term.start({AKVIEW_BINARY, hf("demo-q4km")}, {100, 24}, env);
  // The view is up and drawing while the header is on its way: the transfer line says so.
  ASSERT_TRUE(term.wait_for_text("fetching", std::chrono::seconds(10))) << ::testing::PrintToString(term.screen_text());
  term.send_key("Esc");
  ASSERT_TRUE(term.wait_for_text("cancelled", std::chrono::seconds(5))) << ::testing::PrintToString(term.screen_text());
  // The transfer itself stopped (the status line shows no transfer running), not only the view's job.
  EXPECT_TRUE(term.wait_until([](const Screen& s) { return s.find_row("fetching") < 0; }, std::chrono::seconds(3)))
      << ::testing::PrintToString(term.screen_text());
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(std::chrono::seconds(5)), 0);
}

TEST_F(RemoteOpen, AnAddressTypedIntoTheModelListOpens) {
  Terminal term;
  const EnvOverrides env = terminal_env();
  term.start({AKVIEW_BINARY, kDemo.string()}, {120, 30}, env);
  term.settle();
  ASSERT_GE(term.screen().find_row("llama-demo-bf16"), 0) << ::testing::PrintToString(term.screen_text());
  term.press("o");
  term.type(hf("demo-q4km"));
  term.send_key("Enter");
  ASSERT_TRUE(term.wait_for_text("blk.0.attn_q.weight", std::chrono::seconds(15)))
      << ::testing::PrintToString(term.screen_text());
  const auto title = term.screen_text().front();
  EXPECT_NE(title.find("remote"), std::string::npos) << title;
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(std::chrono::seconds(5)), 0);
}

TEST_F(RemoteOpen, TheViewShowsAddressesAndNoChangeOnDisk) {
  Terminal term;
  const EnvOverrides env = terminal_env();
  // The model list of a repository: the panel under it names the chosen model by its address.
  term.start({AKVIEW_BINARY, hf("demo-all")}, {120, 30}, env);
  ASSERT_TRUE(term.wait_for_text("hf://akview/demo-all/", std::chrono::seconds(15)))
      << ::testing::PrintToString(term.screen_text());
  EXPECT_LT(term.screen().find_row("/hub/127.0.0.1"), 0) << ::testing::PrintToString(term.screen_text());
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(std::chrono::seconds(5)), 0);
  // A model open: its files are named by their addresses, and fetching into the cache (which
  // rewrites the stand-ins) is no change on disk.
  Terminal view;
  view.start({AKVIEW_BINARY, hf("demo-q4km")}, {120, 30}, env);
  ASSERT_TRUE(view.wait_for_text("blk.0.attn_q.weight", std::chrono::seconds(15)))
      << ::testing::PrintToString(view.screen_text());
  view.send_key("Enter");   // the tensor's detail: its file, and its data read (fetched into the stand-in)
  EXPECT_TRUE(view.wait_for_text("hf://akview/demo-q4km/llama-demo-q4km.gguf", std::chrono::seconds(5)))
      << ::testing::PrintToString(view.screen_text());
  EXPECT_FALSE(view.wait_for_text("CHANGED ON DISK", std::chrono::seconds(3)))
      << ::testing::PrintToString(view.screen_text());
  view.send_key("q");
  view.send_key("q");
  EXPECT_EQ(view.wait_exit(std::chrono::seconds(5)), 0);
}

// For trying things by hand: AKVIEW_TEST_SERVE=1 keeps the servers of this fixture up and prints
// the environment a client needs (skipped otherwise).
TEST_F(RemoteOpen, ServeForManualUse) {
  if (!std::getenv("AKVIEW_TEST_SERVE")) GTEST_SKIP() << "set AKVIEW_TEST_SERVE=1 to keep the servers up";
  // AKVIEW_TEST_SERVE_DIR: a folder served as hf://akview/serve; AKVIEW_TEST_SERVE_DELAY: ms before every answer.
  if (const char* d = std::getenv("AKVIEW_TEST_SERVE_DIR")) server_.add_repo("akview", "serve", "main", "", d);
  if (const char* ms = std::getenv("AKVIEW_TEST_SERVE_DELAY")) server_.set_delay_ms_all(std::atoi(ms));
  for (const auto& e : server_.client_env()) std::printf("export %s\n", e.c_str());
  std::printf("# hub %s registry %s plain %s\n", server_.hub_endpoint().c_str(), server_.registry_host().c_str(),
              server_.base_url(Block::plain).c_str());
  std::fflush(stdout);
  for (;;) pause();
}

}   // namespace
}   // namespace akview::testing
