// The background worker: jobs run in order off the UI thread, results arrive as posted closures, an
// urgent job goes before the queued ones and a long job that yields to it goes on afterwards with its
// state kept, and Esc (cancel_all) runs the cancelled jobs' on_cancel.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ui/tui/worker.hpp"

namespace akview::tui {
namespace {

// Applies posted closures until `done` holds or 10 s pass (the UI thread's part).
template <class Pred>
bool pump(Worker& w, Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    for (auto& apply : w.take_posted()) apply();
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& apply : w.take_posted()) apply();
  return true;
}

TEST(Worker, UrgentJobGoesFirstAndTheLongJobGoesOnAfterIt) {
  Worker w;
  std::vector<std::string> log;   // UI thread only
  std::atomic<bool> long_started{false};
  std::atomic<bool> release{false};
  // A long job of 100 steps that yields between steps; its step counter lives in its closure.
  Job long_job{"long",
               [&, step = 0](JobContext& ctx) mutable {
                 long_started = true;
                 while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                 for (; step < 100; ++step) {
                   if (ctx.should_yield()) {
                     ctx.post([&log, step] { log.push_back("yield@" + std::to_string(step)); });
                     ctx.requeue();
                     return;
                   }
                 }
                 ctx.post([&log, step] { log.push_back("long done " + std::to_string(step)); });
               },
               {}};
  w.submit(std::move(long_job));
  w.submit(Job{"plain", [&](JobContext& ctx) { ctx.post([&log] { log.push_back("plain"); }); }, {}});
  ASSERT_TRUE(pump(w, [&] { return long_started.load(); }));
  w.submit(Job{"sort", [&](JobContext& ctx) { ctx.post([&log] { log.push_back("urgent"); }); }, {}, /*urgent=*/true});
  release = true;
  ASSERT_TRUE(pump(w, [&] { return w.busy() == 0; }));
  ASSERT_EQ(log.size(), 4u) << ::testing::PrintToString(log);
  EXPECT_EQ(log[0], "yield@0");
  EXPECT_EQ(log[1], "urgent");
  EXPECT_EQ(log[2], "long done 100") << "the long job went on before the plain job queued after it";
  EXPECT_EQ(log[3], "plain");
}

TEST(Worker, CancelAllRunsTheCancelledJobsOnCancel) {
  Worker w;
  std::vector<std::string> log;
  std::atomic<bool> started{false};
  w.submit(Job{"spin",
               [&](JobContext& ctx) {
                 started = true;
                 while (!ctx.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
               },
               [&log] { log.push_back("spin cancelled"); }});
  w.submit(Job{"queued", [](JobContext&) {}, [&log] { log.push_back("queued cancelled"); }});
  ASSERT_TRUE(pump(w, [&] { return started.load(); }));
  EXPECT_TRUE(w.cancel_all());
  ASSERT_TRUE(pump(w, [&] { return w.busy() == 0 && log.size() == 2; }));
  EXPECT_EQ(log[0], "queued cancelled");
  EXPECT_EQ(log[1], "spin cancelled");
}

}   // namespace
}   // namespace akview::tui
