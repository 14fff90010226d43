// Whole-model passes against the matvec over the same tensors, on the fixture of
// bench/whole_model_fixture.hpp (an 8 B-parameter Q4_K_M-shaped GGUF, 4.92 GB), written on first use
// to bench-fixtures/llama8b_q4km.gguf under the build tree (argv[1] names another folder) and kept.
// In one run: the bandwidth probe; `run`'s cpu matvec over every tensor (x-quant for the quantized
// ones, the exact path for f32; the summed median seconds); `akview stats FILE --json` and
// `akview diff FILE FILE --json` as whole processes (median wall time of N runs, interleaved; weights
// per second, and as a fraction of the matvec's); the TUI's time from the open to the statistics of
// every tensor (App off-screen, as frame_bench runs it) and what of the file it left resident. The
// target: stats and diff at >= 10 % of the matvec's weights per second (diff counts the weights of
// both sides). Then `akview check FILE` (structure and the NaN/Inf scan of every value) beside `check --no-values`,
// and `akview diff FILE OTHER --json` of two different models of the same shape (OTHER: the fixture
// written with another seed, llama8b_q4km_seed2.gguf beside it, so no chunk is equal on both sides).
// A third argument `check-diff` runs only the matvec and that last section. Beside stats, the floor of
// any pass over every value: the whole file read once from the page cache (pread in 576 KiB chunks
// into a buffer per thread, as the statistics pass reads, on every thread; in-process, interleaved
// with the stats runs), against the seconds the target allows.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/bandwidth.hpp"
#include "bench/process_run.hpp"
#include "bench/whole_model_fixture.hpp"
#include "compute/runner.hpp"
#include "core/formats/format.hpp"
#include "core/tensor_view.hpp"
#include "ui/tui/app.hpp"
#include "ui/tui/canvas.hpp"
#include "ui/tui/model_view.hpp"

namespace {

using akview::bench::median;
using akview::bench::ProcessRun;
using akview::bench::run_process;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct MatvecPass {
  double seconds = 0;         // x-quant medians for the quantized tensors, exact for the rest
  double exact_seconds = 0;   // the exact path's medians for every tensor
  uint64_t weights = 0, bytes = 0;
  int xquant_tensors = 0;
};

MatvecPass matvec_pass(const akview::Model& model) {
  using namespace akview;
  std::vector<compute::NamedView> views;
  for (const Tensor& t : model.tensors) {
    if (t.flags & kTensorCompanion) continue;
    auto v = make_tensor_view(model, t);
    if (v) views.push_back({std::string(t.name), *v});
  }
  compute::RunOptions o;
  o.backend = "cpu";
  o.repeat = 3;
  o.compare_reference = false;
  o.x_quant = true;
  MatvecPass p;
  compute::RunCallbacks cb;
  cb.on_run = [&](compute::TensorRun& r) {
    p.weights += static_cast<uint64_t>(r.n_rows) * static_cast<uint64_t>(r.n_cols);
    p.bytes += r.weight_bytes;
    p.exact_seconds += r.median_seconds;
    const bool xq = r.xquant && !r.xquant->act.empty() && r.xquant->note.empty() && r.xquant->median_seconds > 0;
    p.seconds += xq ? r.xquant->median_seconds : r.median_seconds;
    p.xquant_tensors += xq;
  };
  compute::run_tensors(views, o, cb);
  return p;
}

// This process's resident pages of mapped files (RssFile in /proc/self/status), in MB.
double rss_file_mb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "RssFile: %ld kB", &kb) == 1) break;
  std::fclose(f);
  return kb / 1024.0;
}

// The TUI opened off-screen: seconds from the start to every tensor's statistics being applied
// (and drawn once), as the Tensors pane would show them.
double tui_stats_seconds(const std::string& path, size_t* tensors_out) {
  using namespace akview;
  const auto t0 = Clock::now();
  tui::App app(tui::AppOptions{path, {}, false});
  tui::Canvas canvas(120, 40);
  while (!app.model_view() && seconds_since(t0) < 120) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    app.apply_background_results();
  }
  if (!app.model_view()) return -1;
  app.draw(canvas);
  app.frame_shown();   // the background jobs start
  const auto& session = app.model_view()->session();
  auto all_shown = [&] {
    for (uint32_t t = 0; t < session.model.tensors.size(); ++t)
      if (!(session.model.tensors[t].flags & kTensorCompanion) && session.value(t) == nullptr) return false;
    return true;
  };
  while (!all_shown() && seconds_since(t0) < 1800) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    app.apply_background_results();
  }
  app.draw(canvas);
  *tensors_out = session.model.tensors.size();
  return all_shown() ? seconds_since(t0) : -1;
}

// Seconds to read every byte of `path` once from the page cache: `threads` threads pread 576 KiB
// chunks (the statistics pass's largest) into a buffer each. -1 when the file cannot be read.
double read_once_seconds(const std::string& path, unsigned threads) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const uint64_t size = std::filesystem::file_size(path);
  constexpr uint64_t kChunk = 576 * 1024;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      std::vector<uint8_t> buf(kChunk);
      for (uint64_t at; (at = next.fetch_add(kChunk)) < size;) {
        const size_t len = static_cast<size_t>(std::min(kChunk, size - at));
        if (::pread(fd, buf.data(), len, static_cast<off_t>(at)) != static_cast<ssize_t>(len)) failed = true;
      }
    });
  for (auto& t : pool) t.join();
  const double s = seconds_since(t0);
  ::close(fd);
  return failed ? -1 : s;
}

// `check FILE` (with the value scan) and `check FILE --no-values`, and `diff FILE OTHER --json`,
// interleaved; weights per second against the matvec's (`rate`: weights/s; diff counts both sides).
void check_and_different_diff(const std::string& path, const std::string& other, uint64_t weights, double rate,
                              int runs, bool* ok) {
  std::vector<double> check_s, structure_s, diff_s, check_cpu, diff_cpu;
  long diff_rss = 0;
  for (int r = 0; r < runs; ++r) {
    const ProcessRun c = run_process(AKVIEW_BINARY, {"check", path});
    const ProcessRun n = run_process(AKVIEW_BINARY, {"check", path, "--no-values"});
    const ProcessRun d = run_process(AKVIEW_BINARY, {"diff", path, other, "--json"});
    *ok = *ok && c.ok && n.ok && d.ok;
    check_s.push_back(c.seconds);
    check_cpu.push_back(c.cpu_seconds);
    structure_s.push_back(n.seconds);
    diff_s.push_back(d.seconds);
    diff_cpu.push_back(d.cpu_seconds);
    diff_rss = std::max(diff_rss, d.max_rss_kb);
  }
  const double w = static_cast<double>(weights), c = median(check_s), d = median(diff_s);
  std::printf("  %-44s %8.3f s  %7.2f G weights/s  %5.1f %% of the matvec  (cpu %.1f s) %s\n",
              "akview check FILE (NaN/Inf scan; median)", c, w / c / 1e9, 100 * (w / c) / rate, median(check_cpu),
              (w / c) >= 0.1 * rate ? "ok" : "UNDER 10 %");
  std::printf("  %-44s %8.3f s\n", "akview check FILE --no-values (median)", median(structure_s));
  std::printf("  %-44s %8.3f s  %7.2f G weights/s  %5.1f %% of the matvec  (cpu %.1f s, peak RSS %.0f MB) %s\n",
              "akview diff FILE OTHER --json (median)", d, 2 * w / d / 1e9, 100 * (2 * w / d) / rate, median(diff_cpu),
              diff_rss / 1024.0, (2 * w / d) >= 0.1 * rate ? "ok" : "UNDER 10 %");
  std::string each;
  for (size_t i = 0; i < check_s.size(); ++i) each += fmt::format(" {:.2f}/{:.2f}", check_s[i], diff_s[i]);
  std::printf("  %-44s%s s\n", "each run, check/diff OTHER", each.c_str());
}

// The second model of the fixture's shape, written with another seed on first use.
bool ensure_other(const std::string& other) {
  if (std::filesystem::exists(other)) return true;
  std::printf("writing %s (4.92 GB, once) ...\n", other.c_str());
  return akview::bench::write_llama8b_q4km(other, akview::bench::kSecondFixtureSeed);
}

}   // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : AKVIEW_BENCH_FIXTURES;
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const bool only_check_diff = argc > 3 && std::string(argv[3]) == "check-diff";
  const std::string other = dir + "/llama8b_q4km_seed2.gguf";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/llama8b_q4km.gguf";
  if (!std::filesystem::exists(path)) {
    std::printf("writing %s (4.92 GB, once) ...\n", path.c_str());
    const auto t0 = Clock::now();
    if (!akview::bench::write_llama8b_q4km(path)) {
      std::printf("FAILED: could not write the fixture\n");
      return 1;
    }
    std::printf("  written in %.1f s\n", seconds_since(t0));
  }
  auto model = akview::open_model(path);
  if (!model) {
    std::printf("FAILED: %s\n", model.error().to_string().c_str());
    return 1;
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("whole-model passes: %s (%.2f GB), %u threads\n", path.c_str(), std::filesystem::file_size(path) / 1e9,
              threads);

  if (!ensure_other(other)) {
    std::printf("FAILED: could not write %s\n", other.c_str());
    return 1;
  }
  // The first matvec pass also brings the file into the page cache.
  MatvecPass mv = matvec_pass(*model);
  if (only_check_diff) {
    const MatvecPass mv2 = matvec_pass(*model);
    const double mv_s = std::min(mv.seconds, mv2.seconds);
    std::printf("  %-44s %8.3f s  %7.2f G weights/s  %6.2f GB/s (%d tensors x-quant; two passes, the better)\n",
                "matvec, run --backend cpu --x-quant", mv_s, mv.weights / mv_s / 1e9, mv.bytes / mv_s / 1e9,
                mv.xquant_tensors);
    bool ok = true;
    check_and_different_diff(path, other, mv.weights, mv.weights / mv_s, runs, &ok);
    if (!ok) std::printf("FAILED: a command exited with an error\n");
    return ok ? 0 : 1;
  }
  akview::bench::BandwidthProbe probe;
  const auto bw = probe.measure(static_cast<int>(threads));
  std::vector<double> stats_s, diff_s, stats_cpu, diff_cpu, read_s;
  long stats_rss = 0, diff_rss = 0;
  bool ok = true;
  for (int r = 0; r < runs; ++r) {
    read_s.push_back(read_once_seconds(path, threads));
    ok = ok && read_s.back() > 0;
    const ProcessRun s = run_process(AKVIEW_BINARY, {"stats", path, "--json"});
    const ProcessRun d = run_process(AKVIEW_BINARY, {"diff", path, path, "--json"});
    ok = ok && s.ok && d.ok;
    stats_s.push_back(s.seconds);
    stats_cpu.push_back(s.cpu_seconds);
    stats_rss = std::max(stats_rss, s.max_rss_kb);
    diff_s.push_back(d.seconds);
    diff_cpu.push_back(d.cpu_seconds);
    diff_rss = std::max(diff_rss, d.max_rss_kb);
  }
  const MatvecPass mv2 = matvec_pass(*model);
  const double mv_s = std::min(mv.seconds, mv2.seconds), mv_exact = std::min(mv.exact_seconds, mv2.exact_seconds);
  size_t tui_tensors = 0;
  // The TUI maps the file again: what of that mapping its statistics job leaves resident shows as
  // the growth of RssFile (this process's own mapping, read by the matvec passes, is resident already).
  const double rss_before = rss_file_mb();
  const double tui_s = tui_stats_seconds(path, &tui_tensors);
  const double tui_rss = rss_file_mb() - rss_before;

  const double w = static_cast<double>(mv.weights), mv_rate = w / mv_s;
  std::printf("  %-44s %8.2f GB/s (median of 7; best %.2f)\n", "bandwidth probe", bw.median_gbps, bw.best_gbps);
  std::printf("  %-44s %8.3f s  %7.2f G weights/s  %6.2f GB/s (%d tensors x-quant; two passes, the better)\n",
              "matvec, run --backend cpu --x-quant", mv_s, w / mv_s / 1e9, mv.bytes / mv_s / 1e9, mv.xquant_tensors);
  std::printf("  %-44s %8.3f s  %7.2f G weights/s\n", "matvec, exact path only", mv_exact, w / mv_exact / 1e9);
  const double st = median(stats_s), df = median(diff_s);
  std::printf("  %-44s %8.3f s  %7.2f G weights/s  %5.1f %% of the matvec  (cpu %.1f s, peak RSS %.0f MB) %s\n",
              "akview stats FILE --json (median)", st, w / st / 1e9, 100 * (w / st) / mv_rate, median(stats_cpu),
              stats_rss / 1024.0, (w / st) >= 0.1 * mv_rate ? "ok" : "UNDER 10 %");
  std::printf("  %-44s %8.3f s  %7.2f G weights/s  %5.1f %% of the matvec  (cpu %.1f s, peak RSS %.0f MB) %s\n",
              "akview diff FILE FILE --json (median)", df, 2 * w / df / 1e9, 100 * (2 * w / df) / mv_rate,
              median(diff_cpu), diff_rss / 1024.0, (2 * w / df) >= 0.1 * mv_rate ? "ok" : "UNDER 10 %");
  const double target = w / (0.1 * mv_rate), read = median(read_s);
  std::printf("  %-44s %8.3f s  (10 %% of the matvec's weights per second)\n", "the target: stats or diff at most",
              target);
  std::printf("  %-44s %8.3f s  %6.2f GB/s  (%.0f %% of the target's time; %u threads)\n",
              "read every byte once (pread; median)", read,
              static_cast<double>(std::filesystem::file_size(path)) / read / 1e9, 100 * read / target, threads);
  std::string each;
  for (size_t i = 0; i < stats_s.size(); ++i) each += fmt::format(" {:.2f}/{:.2f}", stats_s[i], diff_s[i]);
  std::printf("  %-44s%s s\n", "each run, stats/diff", each.c_str());
  std::printf(
      "  %-44s %8.3f s  (%zu tensors; open, first frame and the statistics job; mapped file resident after "
      "it: +%.0f MB)\n",
      "TUI: open to every tensor's statistics", tui_s, tui_tensors, tui_rss);
  check_and_different_diff(path, other, mv.weights, mv_rate, runs, &ok);
  if (!ok) std::printf("FAILED: a command exited with an error\n");
  return ok && tui_s > 0 ? 0 : 1;
}
