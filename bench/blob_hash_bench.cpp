// `akview check` of an Ollama store against the peers that hash a file: `sha256sum BLOB` and
// `openssl dgst -sha256 BLOB` over the same blob, whole processes, interleaved, median wall times and
// GB/s, in one run, with the file in the page cache. The store (under /tmp, removed at the end)
// holds one model whose blob is a hard link to BLOB (argv[1]; default the whole-model fixture of
// bench/whole_model_fixture.hpp, 4.92 GB, written on first use), so nothing is copied. `check
// --no-values` is the blob's size and sha256 alone (and the open); plain `check` adds the value scan.
// Beside them, in process: akview's Sha256 over 256 MiB in memory with the CPU's SHA extensions and
// with the scalar rounds (the hash's own speed, the bound).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/process_run.hpp"
#include "bench/whole_model_fixture.hpp"
#include "core/sha256.hpp"
#include "tests/writers/ollama_writer.hpp"

namespace {

using akview::bench::median;
using akview::bench::run_process;
using Clock = std::chrono::steady_clock;

std::string find_tool(const std::string& name) {
  for (const char* dir : {"/usr/bin/", "/bin/", "/usr/local/bin/"})
    if (access((std::string(dir) + name).c_str(), X_OK) == 0) return std::string(dir) + name;
  return {};
}

// The file's sha256 read in 1 MiB pieces (as a reader would), and the seconds it took.
std::string file_sha256(const std::string& path, double* seconds) {
  const auto t0 = Clock::now();
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  akview::Sha256 h;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update({reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(in.gcount())});
  }
  const auto d = h.finish();
  *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return akview::to_hex(d);
}

// GB/s of Sha256 over `bytes` in memory, the best of three.
double hash_gbps(const std::vector<uint8_t>& bytes, bool cpu_extensions) {
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = Clock::now();
    akview::Sha256 h(cpu_extensions);
    h.update(bytes);
    volatile uint8_t sink = h.finish()[0];
    (void)sink;
    best = std::max(best, bytes.size() / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9);
  }
  return best;
}

}   // namespace

int main(int argc, char** argv) {
  std::string blob = argc > 1 ? argv[1] : std::string(AKVIEW_BENCH_FIXTURES) + "/llama8b_q4km.gguf";
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  if (!std::filesystem::exists(blob)) {
    std::filesystem::create_directories(std::filesystem::path(blob).parent_path());
    std::printf("writing %s (4.92 GB, once) ...\n", blob.c_str());
    if (!akview::bench::write_llama8b_q4km(blob)) {
      std::printf("FAILED: could not write %s\n", blob.c_str());
      return 1;
    }
  }
  const double gb = std::filesystem::file_size(blob) / 1e9;
  double first_s = 0;
  const std::string hex = file_sha256(blob, &first_s);   // also brings the file into the page cache

  std::string root = "/tmp/akview_blob_hash_XXXXXX";
  if (!mkdtemp(root.data())) return 1;
  akview::testing::OllamaStoreWriter store(root);
  std::error_code ec;
  const std::string linked = root + "/blobs/sha256-" + hex;
  std::filesystem::create_hard_link(blob, linked, ec);
  if (ec) std::filesystem::create_symlink(std::filesystem::absolute(blob), linked, ec);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  layers.push_back({{"mediaType", "application/vnd.ollama.image.model"},
                    {"digest", "sha256:" + hex},
                    {"size", std::filesystem::file_size(blob)}});
  const bool stored = !ec && store.write_manifest("bench", "latest", {{"model_format", "gguf"}}, layers);

  std::vector<uint8_t> mem(size_t{256} << 20);
  for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  const double sha_ni = akview::sha256_uses_cpu_extensions() ? hash_gbps(mem, true) : 0;
  const double scalar = hash_gbps(mem, false);

  const std::string sha256sum = find_tool("sha256sum"), openssl = find_tool("openssl");
  std::vector<double> t_sum, t_ssl, t_check, t_scan;
  bool ok = stored;
  for (int r = 0; r < runs && ok; ++r) {
    if (!sha256sum.empty()) t_sum.push_back(run_process(sha256sum, {blob}).seconds);
    if (!openssl.empty()) t_ssl.push_back(run_process(openssl, {"dgst", "-sha256", blob}).seconds);
    const auto c = run_process(AKVIEW_BINARY, {"check", root, "--no-values"});
    const auto s = run_process(AKVIEW_BINARY, {"check", root});
    ok = c.ok && s.ok;
    t_check.push_back(c.seconds);
    t_scan.push_back(s.seconds);
  }
  std::filesystem::remove_all(root, ec);
  if (!ok) {
    std::printf("FAILED: akview check of the store did not pass (or the store could not be made)\n");
    return 1;
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("blob hash: %s (%.2f GB), %u threads, median of %d interleaved runs, file in the page cache\n",
              blob.c_str(), gb, threads, runs);
  std::printf("  %-44s %8.2f GB/s  %s\n", "Sha256 in memory, SHA extensions", sha_ni,
              akview::sha256_uses_cpu_extensions() ? "" : "(this CPU has none)");
  std::printf("  %-44s %8.2f GB/s\n", "Sha256 in memory, scalar rounds", scalar);
  std::printf("  %-44s %8.3f s  %6.2f GB/s (the first read, in process)\n", "Sha256 of the file, 1 MiB reads", first_s,
              gb / first_s);
  const double check = median(t_check), scan = median(t_scan);
  auto peer = [&](const char* name, const std::vector<double>& t) {
    if (t.empty()) return std::printf("  %-44s (not installed)\n", name), void();
    const double s = median(t);
    std::printf("  %-44s %8.3f s  %6.2f GB/s   akview check --no-values: %.2fx its speed\n", name, s, gb / s,
                s / check);
  };
  std::printf("  %-44s %8.3f s  %6.2f GB/s\n", "akview check STORE --no-values (sha256)", check, gb / check);
  std::printf("  %-44s %8.3f s  %6.2f GB/s\n", "akview check STORE (sha256 + NaN/Inf scan)", scan, gb / scan);
  peer("sha256sum BLOB", t_sum);
  peer("openssl dgst -sha256 BLOB", t_ssl);
  return 0;
}
