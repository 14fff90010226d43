// The value-statistics job (value_stats.hpp).
#include "ui/tui/value_stats.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/decode/decode.hpp"
#include "core/decode/stats.hpp"
#include "core/tensor_view.hpp"

namespace akview::tui {

void StatsPlan::set_visible(std::vector<uint32_t> tensors) {
  std::lock_guard lock(mutex_);
  visible_ = std::move(tensors);
}

std::vector<uint32_t> StatsPlan::visible() const {
  std::lock_guard lock(mutex_);
  return visible_;
}

ValueSummary summarize(const TensorStats& s) {
  ValueSummary v;
  v.state = ValueSummary::State::done;
  v.min = static_cast<float>(s.min);
  v.max = static_cast<float>(s.max);
  v.std = static_cast<float>(s.std);
  if (!s.histogram.empty()) {
    const size_t per = std::max<size_t>(1, s.histogram.size() / 8);
    uint64_t bins[8] = {};
    for (size_t k = 0; k < s.histogram.size(); ++k) bins[std::min<size_t>(7, k / per)] += s.histogram[k];
    const uint64_t top = *std::max_element(std::begin(bins), std::end(bins));
    for (int k = 0; k < 8; ++k)
      v.spark[k] = top == 0 || bins[k] == 0
                       ? 0
                       : static_cast<uint8_t>(std::clamp<double>(
                             std::ceil(8.0 * static_cast<double>(bins[k]) / static_cast<double>(top)), 1, 8));
  }
  return v;
}

Job make_stats_job(std::shared_ptr<ModelSession> session, std::shared_ptr<StatsPlan> plan) {
  // What already has values is skipped (a restart after Esc continues where it stopped).
  std::vector<uint8_t> done(session->model.tensors.size(), 0);
  uint32_t todo = 0;
  for (uint32_t t = 0; t < done.size(); ++t) {
    done[t] = (session->model.tensors[t].flags & kTensorCompanion) || session->value(t) ? 1 : 0;
    todo += done[t] ? 0 : 1;
  }
  Job job;
  job.label = "stats";
  job.run = [session, plan, done = std::move(done), todo](JobContext& ctx) mutable {
    using Clock = std::chrono::steady_clock;
    std::vector<std::pair<uint32_t, ValueSummary>> batch;
    auto flush = [&] {
      if (batch.empty()) return;
      ctx.post([session, results = std::move(batch)] {
        if (session->values.size() != session->model.tensors.size())
          session->values.resize(session->model.tensors.size());
        for (const auto& [t, v] : results) session->values[t] = v;
        ++session->values_version;
      });
      batch.clear();
    };
    uint32_t next = 0, finished = 0;
    auto last_post = Clock::now();
    // Data read for the statistics is not kept resident: every 16 MiB, and at the end, the mapped
    // pages are dropped (they stay in the page cache), so going over a model's data costs no memory
    // of its size.
    constexpr uint64_t kReleaseEvery = uint64_t{16} << 20;
    uint64_t read_since_release = 0;
    while (finished < todo && !ctx.cancelled()) {
      if (ctx.should_yield()) {   // a sort the user asked for goes first; the statistics go on after it
        flush();
        ctx.requeue();
        return;
      }
      uint32_t t = kNone;
      for (uint32_t v : plan->visible())
        if (v < done.size() && !done[v]) {
          t = v;
          break;
        }
      while (t == kNone && next < done.size()) {
        if (!done[next]) t = next;
        ++next;
      }
      if (t == kNone) break;
      done[t] = 1;
      const Model& m = session->model;
      ValueSummary v;
      v.state = ValueSummary::State::failed;
      if (can_decode(m.tensors[t].type)) {
        if (auto view = make_tensor_view(m, m.tensors[t])) {
          StatsOptions opt;
          opt.histogram_bins = 64;
          opt.top_k = 0;
          opt.cancel = &ctx.cancel();
          const double base = static_cast<double>(finished) / todo, step = 1.0 / todo;
          opt.progress = [&](double f) { ctx.progress(base + step * f); };
          auto stats = compute_stats(*view, opt);
          if (stats && stats->cancelled) break;
          if (stats) v = summarize(*stats);
          read_since_release += m.tensors[t].nbytes;
          if (read_since_release >= kReleaseEvery) {
            for (const SourceFile& f : m.files) f.map.release_pages();
            read_since_release = 0;
          }
        }
      }
      batch.emplace_back(t, v);
      ++finished;
      ctx.progress(static_cast<double>(finished) / todo);
      if (batch.size() >= 4096 || Clock::now() - last_post > std::chrono::milliseconds(50)) {
        flush();
        last_post = Clock::now();
      }
    }
    flush();
    if (read_since_release > 0)
      for (const SourceFile& f : session->model.files) f.map.release_pages();
  };
  return job;
}

}   // namespace akview::tui
