// What a user far from the CDN waits for when opening a remote model: the test servers of
// tests/remote/hub_server.hpp (nginx: a Hub, its CDN) with a fixed delay on every request of every
// block (50 ms by default), serving the demo's sharded bf16 model, the 163-shard fixture, the
// 1,000,000-tensor SafeTensors file (bench/fixtures.hpp) and the demo GGUF. For each, the real akview
// binary (`info ADDRESS --json`, `tensors ADDRESS --json`) beside the peers in the same run:
// @huggingface/hub's parseSafetensorsMetadata and @huggingface/gguf's gguf() (node scripts in
// bench/peers). Reported per model and tool: wall time (median of N runs, interleaved), requests and
// bytes per file counted from the servers' access logs (redirects apart), bytes beyond each file's
// header (overfetch), the HTTP overhead, and the targets beside them: <= 2 requests and
// <= header + 256 KiB per file (redirects not counted); the 163-shard open within 8 delays plus the
// transfer of its headers at the link rate measured in the same run.
// Usage: remote_open_bench [--akview PATH] [--baseline PATH] [--runs N] [--delay-ms MS] [--dir DIR] [--keep]
//                          [--only SUBSTRING] [--per-file] [--node PATH] [--peers DIR] [--trace] [--serve]
// --baseline: another akview binary (e.g. main's) run beside --akview in the same interleaved rounds.
// --serve: only start the servers with the models and print the environment and addresses, for runs
// by hand (AKVIEW_HTTP_TRACE=1 akview info ADDRESS); Enter stops them.
// --trace: akview runs with AKVIEW_HTTP_TRACE=1 and its stderr of each model's last run is printed
// (every answer with its time since the start, and the open's phases).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/fixtures.hpp"
#include "core/formats/format.hpp"
#include "tests/remote/hub_server.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using akview::testing::Block;
using akview::testing::HubServer;

constexpr uint64_t kOverfetchTarget = 256 * 1024;
constexpr int kMaxRequestsTarget = 2;
constexpr int kDelaysTarget = 8;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_line(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) return line;
  return {};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct ProcessResult {
  double seconds = 0;
  int exit_code = -1;
  std::string out, err;
};

// Runs argv with `env` added to a copy of this environment from which the Hub and cache variables
// were taken out; stdout into a file (or /dev/null), stderr into a file.
ProcessResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& scratch,
                  bool keep_stdout) {
  const fs::path out = scratch / "stdout", err = scratch / "stderr";
  std::vector<std::string> vars;
  static const char* kDropped[] = {"HF_TOKEN",       "HF_HOME",       "HF_ENDPOINT",         "XDG_CACHE_HOME",
                                   "CURL_CA_BUNDLE", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "HUGGING_FACE_HUB_TOKEN"};
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (std::none_of(std::begin(kDropped), std::end(kDropped), [&](const char* d) { return name == d; }))
      vars.push_back(kv);
  }
  vars.insert(vars.end(), env.begin(), env.end());
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(keep_stdout ? out.c_str() : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> a, v;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (const auto& s : vars) v.push_back(const_cast<char*>(s.c_str()));
    v.push_back(nullptr);
    execve(argv[0].c_str(), a.data(), v.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ProcessResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (keep_stdout) r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// One file of a served repository: what a reader of its header needs.
struct ServedFile {
  uint64_t size = 0;
  uint64_t needed = 0;   // a weights file's header (up to its data); any other file: all of it
};

struct Model {
  std::string label, repo, local_dir, address, peer;   // peer: "st" or "gguf"
  std::map<std::string, ServedFile> files;
  uint64_t needed_bytes = 0;
};

struct FileTraffic {
  int requests = 0, redirects = 0;
  uint64_t body_bytes = 0, overhead_bytes = 0;   // overhead: request + response headers
};

struct Traffic {
  std::map<std::string, FileTraffic> files;   // by path in the repository
  int api_requests = 0, other_requests = 0;
  uint64_t api_body_bytes = 0, other_body_bytes = 0, overhead_bytes = 0;   // overhead: of every request
  int requests() const {
    int n = api_requests + other_requests;
    for (const auto& [p, f] : files) n += f.requests;
    return n;
  }
  int redirects() const {
    int n = 0;
    for (const auto& [p, f] : files) n += f.redirects;
    return n;
  }
};

// Whose file a logged request was: /ORG/REPO/(resolve|raw)/REV/PATH on the hub,
// /repos/ORG/REPO/COMMIT/PATH on the cdn.
Traffic count(const HubServer& server, const std::string& repo) {
  Traffic t;
  for (Block b : {Block::hub, Block::cdn}) {
    for (const auto& e : server.access_log(b, 0, 0)) {
      std::string uri = e.uri.substr(0, e.uri.find('?'));
      const uint64_t overhead = e.request_length + (e.bytes_sent - e.body_bytes_sent);
      std::string path;
      const std::string hub_prefix = "/" + repo + "/", cdn_prefix = "/repos/" + repo + "/";
      if (b == Block::hub && uri.rfind(hub_prefix, 0) == 0) {
        const auto rest = uri.substr(hub_prefix.size());   // resolve/REV/PATH
        const auto s1 = rest.find('/'), s2 = rest.find('/', s1 + 1);
        if (s1 != std::string::npos && s2 != std::string::npos) path = rest.substr(s2 + 1);
      } else if (b == Block::cdn && uri.rfind(cdn_prefix, 0) == 0) {
        const auto rest = uri.substr(cdn_prefix.size());   // COMMIT/PATH
        if (rest.find('/') != std::string::npos) path = rest.substr(rest.find('/') + 1);
      }
      if (!path.empty()) {
        FileTraffic& f = t.files[path];
        if (e.status == 301 || e.status == 302 || e.status == 307 || e.status == 308) ++f.redirects;
        else ++f.requests;
        f.body_bytes += e.body_bytes_sent;
        f.overhead_bytes += overhead;
      } else if (uri.rfind("/api/", 0) == 0) {
        ++t.api_requests;
        t.api_body_bytes += e.body_bytes_sent;
      } else {
        ++t.other_requests;
        t.other_body_bytes += e.body_bytes_sent;
      }
      t.overhead_bytes += overhead;
    }
  }
  return t;
}

struct Tool {
  std::string label;
  std::vector<std::string> argv;   // ADDRESS, URL, HUB, REPO are replaced
  bool akview = false;
  std::string skipped;   // why it does not run
};

struct Row {
  std::vector<double> walls;
  Traffic traffic;   // of the last run
  int exit_code = 0;
  std::string failure;       // first line of stderr (or the peer's error)
  std::string peer_result;   // tensors / files the peer reported
  std::string trace;         // akview's stderr with AKVIEW_HTTP_TRACE (--trace)
};

// The host's 1, 5 and 15 minute load averages (the machine is shared: timings are read beside them).
std::string load_average() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) != 3) return "unknown";
  return fmt::format("{:.2f} {:.2f} {:.2f}", l[0], l[1], l[2]);
}

std::string mib(uint64_t bytes) { return fmt::format("{:.2f}", bytes / 1048576.0); }

// Every file under `dir` cut to 0 bytes: their blocks go back now, their inodes at the end of the bench.
void empty_files(const fs::path& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) fs::resize_file(it->path(), 0, ec);
}

}   // namespace

int main(int argc, char** argv) {
  std::string binary = AKVIEW_BINARY, baseline, only, node = "/usr/bin/node";
  std::string peers = std::string(AKVIEW_SOURCE_DIR) + "/bench/peers";
  std::string root = (fs::temp_directory_path() / "akview_remote_bench").string();
  int runs = 3, delay_ms = 50;
  bool keep = false, per_file = false, trace = false, serve = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--akview" && i + 1 < argc) binary = argv[++i];
    else if (a == "--baseline" && i + 1 < argc) baseline = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--delay-ms" && i + 1 < argc) delay_ms = std::max(0, std::atoi(argv[++i]));
    else if (a == "--dir" && i + 1 < argc) root = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--node" && i + 1 < argc) node = argv[++i];
    else if (a == "--peers" && i + 1 < argc) peers = argv[++i];
    else if (a == "--keep") keep = true;
    else if (a == "--per-file") per_file = true;
    else if (a == "--trace") trace = true;
    else if (a == "--serve") serve = true;
    else {
      std::fprintf(
          stderr,
          "usage: remote_open_bench [--akview PATH] [--baseline PATH] [--runs N] [--delay-ms MS] [--dir DIR] [--keep] "
          "[--only SUBSTRING] [--per-file] [--node PATH] [--peers DIR] [--trace] [--serve]\n");
      return 2;
    }
  }

  // The models, written once and kept between runs when --dir names the same folder.
  fs::create_directories(root + "/st-1m");
  fs::create_directories(root + "/st-163");
  fs::create_directories(root + "/gguf");
  if (!fs::exists(root + "/st-1m/model.safetensors") &&
      !akview::bench::write_million_safetensors(root + "/st-1m/model.safetensors"))
    return 1;
  if (!fs::exists(root + "/st-163/model.safetensors.index.json") &&
      !akview::bench::write_sharded_safetensors(root + "/st-163"))
    return 1;
  const std::string demo = AKVIEW_DEMO_DIR;
  std::error_code ec;
  fs::remove(root + "/gguf/llama-demo-q4km.gguf", ec);
  fs::create_symlink(demo + "/llama-demo-q4km.gguf", root + "/gguf/llama-demo-q4km.gguf", ec);
  if (!fs::exists(demo + "/llama-demo-q4km.gguf") || !fs::exists(demo + "/llama-demo-bf16")) {
    std::fprintf(stderr, "the demo models are missing in %s (ninja akview_demo_model)\n", demo.c_str());
    return 1;
  }
  std::vector<Model> models = {
      {"demo bf16, sharded",
       "bench/llama-demo-bf16",
       demo + "/llama-demo-bf16",
       "hf://bench/llama-demo-bf16",
       "st",
       {},
       0},
      {"163 shards", "bench/st-163-shards", root + "/st-163", "hf://bench/st-163-shards", "st", {}, 0},
      {"1M tensors", "bench/st-1m-tensors", root + "/st-1m", "hf://bench/st-1m-tensors", "st", {}, 0},
      {"demo gguf", "bench/llama-demo-gguf", root + "/gguf", "", "gguf", {}, 0},
  };

  HubServer::Options options;
  options.page_size = 1000;   // the Hub's tree page
  HubServer server(options);
  for (auto& m : models) {
    const auto slash = m.repo.find('/');
    server.add_repo(m.repo.substr(0, slash), m.repo.substr(slash + 1), "main", "", m.local_dir);
    for (const auto& entry : fs::recursive_directory_iterator(m.local_dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string rel = entry.path().lexically_relative(m.local_dir).generic_string();
      ServedFile f;
      f.size = entry.file_size();
      f.needed = f.size;
      const std::string ext = entry.path().extension().string();
      if (ext == ".safetensors" || ext == ".gguf") {
        auto opened = akview::open_model(entry.path().string());
        if (opened && !opened->files.empty()) f.needed = opened->files[0].header_bytes;
      }
      m.files[rel] = f;
    }
  }
  server.set_delay_ms_all(delay_ms);
  if (!server.start()) {
    std::printf("remote_open_bench: no test servers: %s\n", server.reason().c_str());
    return 1;
  }
  models[3].address =
      server.url(Block::hub, server.resolve_path("bench", "llama-demo-gguf", "main", "llama-demo-q4km.gguf"));

  if (serve) {
    for (const auto& v : server.client_env()) std::printf("export %s\n", v.c_str());
    for (const auto& m : models) std::printf("# %s: %s\n", m.label.c_str(), m.address.c_str());
    std::printf("# Enter stops the servers\n");
    std::fflush(stdout);
    std::getchar();
    return 0;
  }

  const fs::path scratch = fs::path(root) / "scratch";
  fs::create_directories(scratch);
  int cache_runs = 0;

  // The link's rate, for the 163-shard target: one 94 MB range of the 1M-tensor file from the cdn
  // (time after the first byte, so the delay and the handshake are not in it).
  double link_bytes_per_s = 0;
  {
    const uint64_t n = models[2].files["model.safetensors"].needed;
    const ProcessResult r =
        run({"/usr/bin/curl", "-sS", "-o", "/dev/null", "--cacert", server.ca_file().string(), "-r",
             fmt::format("0-{}", n - 1), "-w", "%{time_starttransfer} %{time_total} %{size_download}",
             server.url(Block::cdn, server.cdn_path("bench", "st-1m-tensors", "main", "model.safetensors"))},
            {}, scratch, true);
    double start = 0, total = 0, size = 0;
    std::istringstream(r.out) >> start >> total >> size;
    if (r.exit_code == 0 && total > start) link_bytes_per_s = size / (total - start);
  }

  const bool node_ok = access(node.c_str(), X_OK) == 0;
  auto peer_skip = [&](const char* package) -> std::string {
    if (!node_ok) return "skipped (no node at " + node + ")";
    if (!fs::exists(peers + "/node_modules/@huggingface/" + package))
      return fmt::format("skipped (not installed: cd bench/peers && npm install)");
    return {};
  };
  std::printf(
      "remote open: akview (%s) and peers through nginx test servers on 127.0.0.1, HTTPS + HTTP/2 where the\n"
      "client has it, %d ms delay on every request of every block, median of %d runs (interleaved)\n",
      binary.c_str(), delay_ms, runs);
  if (!baseline.empty()) std::printf("baseline: %s, run in the same rounds\n", baseline.c_str());
  std::printf("link rate (one 94 MB range, after the first byte): %.0f MB/s\n", link_bytes_per_s / 1e6);
  std::printf("load average at the start: %s\n", load_average().c_str());
  std::printf("peers: %s\n",
              peer_skip("hub").empty() ? (peers + " (node " + node + ")").c_str() : peer_skip("hub").c_str());

  const std::vector<std::string> env0 = server.client_env();
  for (auto& m : models) {
    if (!only.empty() && m.label.find(only) == std::string::npos) continue;
    for (const auto& [p, f] : m.files) m.needed_bytes += f.needed;
    std::vector<Tool> tools = {
        {"akview info --json", {binary, "info", "ADDRESS", "--json"}, true, {}},
        {"akview tensors --json", {binary, "tensors", "ADDRESS", "--json"}, true, {}},
    };
    if (!baseline.empty()) {
      tools.push_back({"baseline info --json", {baseline, "info", "ADDRESS", "--json"}, true, {}});
      tools.push_back({"baseline tensors --json", {baseline, "tensors", "ADDRESS", "--json"}, true, {}});
    }
    if (m.peer == "st")
      tools.push_back(
          {"hub parseSafetensorsMetadata", {node, peers + "/st_metadata.mjs", "HUB", "REPO"}, false, peer_skip("hub")});
    else tools.push_back({"gguf gguf()", {node, peers + "/gguf_header.mjs", "ADDRESS"}, false, peer_skip("gguf")});
    std::vector<Row> rows(tools.size());
    for (int run_i = 0; run_i < runs; ++run_i) {
      for (size_t t = 0; t < tools.size(); ++t) {
        if (!tools[t].skipped.empty()) continue;
        std::vector<std::string> args;
        for (const auto& a : tools[t].argv)
          args.push_back(a == "ADDRESS" ? m.address : a == "HUB" ? server.hub_endpoint() : a == "REPO" ? m.repo : a);
        // A cold cache every run (akview keeps fetched ranges on disk), in a folder of its own: the
        // last run's is emptied but not removed until the end. Without a journal (this machine's
        // ext4) the file system skips, when it allocates an inode, every inode freed in the last
        // minutes (up to 5), reading its inode table block for each: with the 330 files of the
        // previous run removed just before, the open's 164 cache files took 30-170 ms to create
        // instead of ~7, which no user opening a model for the first time pays. (The bench removes
        // its folders when it ends: a second bench within minutes pays that in its file creations.)
        const fs::path cache = scratch / fmt::format("cache-{}", ++cache_runs);
        fs::create_directories(cache / "hf");
        std::vector<std::string> env = env0;
        env.push_back("XDG_CACHE_HOME=" + cache.string());
        env.push_back("HF_HOME=" + (cache / "hf").string());
        if (trace && tools[t].akview) env.push_back("AKVIEW_HTTP_TRACE=1");
        server.clear_access_logs();
        const ProcessResult r = run(args, env, scratch, !tools[t].akview || t == 0);
        empty_files(cache);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));   // nginx logs just after the last byte
        Row& row = rows[t];
        row.walls.push_back(r.seconds);
        row.traffic = count(server, m.repo);
        row.exit_code = r.exit_code;
        if (trace && tools[t].akview) row.trace = r.err;
        row.failure.clear();
        if (r.exit_code != 0) row.failure = first_line(r.err);
        if (!tools[t].akview) {
          const auto j = nlohmann::json::parse(first_line(r.out), nullptr, false);
          if (!j.is_discarded() && !j.value("ok", false)) row.failure = j.value("error", "");
          if (!j.is_discarded() && j.value("ok", false))
            row.peer_result = fmt::format("{} files, {} tensors", j.value("files", 0), j.value("tensors", 0));
        }
      }
    }

    std::printf("\nload average after the runs: %s", load_average().c_str());
    uint64_t max_file_needed = 0;
    for (const auto& [p, f] : m.files) max_file_needed = std::max(max_file_needed, f.needed);
    std::printf("\n%s (%s, %zu files, headers %s MiB; address %s)\n", m.label.c_str(), m.repo.c_str(), m.files.size(),
                mib(m.needed_bytes).c_str(), m.address.c_str());
    std::printf("  %-30s %9s %9s %6s %8s %6s %6s %10s %11s %10s %9s\n", "tool", "wall ms", "min ms", "reqs", "max/file",
                "redir", "api", "body MiB", "max over KiB", "over MiB", "hdrs KiB");
    for (size_t t = 0; t < tools.size(); ++t) {
      const Row& row = rows[t];
      if (!tools[t].skipped.empty()) {
        std::printf("  %-30s %s\n", tools[t].label.c_str(), tools[t].skipped.c_str());
        continue;
      }
      int max_requests = 0;
      uint64_t body = row.traffic.api_body_bytes + row.traffic.other_body_bytes, max_over = 0, over = 0;
      for (const auto& [path, f] : row.traffic.files) {
        max_requests = std::max(max_requests, f.requests);
        body += f.body_bytes;
        const auto known = m.files.find(path);
        const uint64_t needed = known == m.files.end() ? 0 : known->second.needed;
        const uint64_t o = f.body_bytes > needed ? f.body_bytes - needed : 0;
        over += o;
        max_over = std::max(max_over, o);
      }
      std::printf("  %-30s %9.0f %9.0f %6d %8d %6d %6d %10s %11.1f %10s %9.1f", tools[t].label.c_str(),
                  median(row.walls) * 1e3, *std::min_element(row.walls.begin(), row.walls.end()) * 1e3,
                  row.traffic.requests(), max_requests, row.traffic.redirects(), row.traffic.api_requests,
                  mib(body).c_str(), max_over / 1024.0, mib(over).c_str(), row.traffic.overhead_bytes / 1024.0);
      if (!row.failure.empty() || row.exit_code != 0)
        std::printf("  FAILED (exit %d): %s", row.exit_code, row.failure.c_str());
      else if (!row.peer_result.empty()) std::printf("  %s", row.peer_result.c_str());
      std::printf("\n");
      if (tools[t].akview && row.exit_code == 0) {
        std::string verdict = fmt::format("    targets: <= {} requests a file: {}; <= header + 256 KiB a file: {}",
                                          kMaxRequestsTarget, max_requests <= kMaxRequestsTarget ? "met" : "NOT met",
                                          max_over <= kOverfetchTarget ? "met" : "NOT met");
        if (m.label == "163 shards" && link_bytes_per_s > 0) {
          const double budget = kDelaysTarget * delay_ms / 1e3 + m.needed_bytes / link_bytes_per_s;
          verdict += fmt::format("; wall <= {} delays + transfer = {:.0f} ms: {}", kDelaysTarget, budget * 1e3,
                                 median(row.walls) <= budget ? "met" : "NOT met");
        }
        std::printf("%s\n", verdict.c_str());
      }
      if (!row.trace.empty()) std::printf("    trace of the last run:\n%s", row.trace.c_str());
      if (per_file)
        for (const auto& [path, f] : row.traffic.files) {
          const auto known = m.files.find(path);
          std::printf("      %-44s %3d reqs %2d redir  body %10llu  header %10llu  http headers %6llu\n", path.c_str(),
                      f.requests, f.redirects, static_cast<unsigned long long>(f.body_bytes),
                      static_cast<unsigned long long>(known == m.files.end() ? 0 : known->second.needed),
                      static_cast<unsigned long long>(f.overhead_bytes));
        }
    }
    if (m.label == "163 shards" && link_bytes_per_s > 0)
      std::printf("  target for the 163-shard open: %d x %d ms + %s MiB at %.0f MB/s = %.0f ms\n", kDelaysTarget,
                  delay_ms, mib(m.needed_bytes).c_str(), link_bytes_per_s / 1e6,
                  (kDelaysTarget * delay_ms / 1e3 + m.needed_bytes / link_bytes_per_s) * 1e3);
    std::fflush(stdout);
  }
  std::printf(
      "\nreqs: requests answered with bytes or an error (redirects apart, in redir; api: tree / revision calls);\n"
      "max/file: the most requests one file took; body: bytes of bodies (API answers too); over: body bytes past\n"
      "each file's header "
      "(a weights file's header up to its data; any other file counts whole); hdrs: HTTP request + response headers\n"
      "of every request.\n");
  fs::remove_all(scratch, ec);
  if (!keep) fs::remove_all(root, ec);
  return 0;
}
