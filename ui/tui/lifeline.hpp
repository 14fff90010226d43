// Results from the worker for a pane that may be gone by the time they land. The pane owns a Lifeline;
// a job, made on the UI thread, takes a link() and wraps what it posts (or its on_cancel) in
// link.guard(...): that runs on the UI thread only while the pane lives.
#pragma once

#include <functional>
#include <memory>
#include <utility>

namespace akview::tui {

class Lifeline {
 public:
  class Link {
   public:
    template <typename Apply>
    std::function<void()> guard(Apply apply) const {
      return [alive = alive_, apply = std::move(apply)]() mutable {
        if (!alive.expired()) apply();
      };
    }

   private:
    friend class Lifeline;
    explicit Link(std::weak_ptr<const bool> alive) : alive_(std::move(alive)) {}
    std::weak_ptr<const bool> alive_;
  };

  Lifeline() = default;
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;
  Link link() const { return Link(token_); }

 private:
  std::shared_ptr<const bool> token_ = std::make_shared<const bool>(true);
};

}   // namespace akview::tui
