// One opened model on screen (model_view.hpp).
#include "ui/tui/model_view.hpp"

#include "core/remote/mirror.hpp"

namespace akview::tui {

ModelView::ModelView(std::shared_ptr<ModelSession> session, Worker& worker, bool start_jobs,
                     std::shared_ptr<ModelSession> ref)
    : session_(std::move(session)), ref_(std::move(ref)), worker_(worker), plan_(std::make_shared<StatsPlan>()) {
  for (const PaneRow& row : pane_table())
    if (!row.needs_ref || ref_) panes_.push_back({&row, row.make(*this)});
  if (start_jobs) this->start_jobs();
}

void ModelView::start_jobs() {
  if (jobs_started_) return;
  jobs_started_ = true;
  // Before any job reads them, on this thread (the only one reading the model now): the names are
  // copied out of the header into a block of their own and the header's pages dropped (the Header
  // pane and the metadata fault back in the few they read), so a big header does not stay resident.
  for (ModelSession* s : {session_.get(), ref_.get()}) {
    if (!s) continue;
    s->model.pack_names();
    for (const SourceFile& f : s->model.files) f.map.release_pages();
  }
  Job names;
  names.label = "name map";
  names.run = [s = session_](JobContext& ctx) {
    auto map = std::make_shared<const NameMap>(build_name_map(s->model));
    // Mapping read the metadata (config, architecture): those pages are dropped again.
    for (const SourceFile& f : s->model.files) f.map.release_pages();
    ctx.post([s, map] { attach_names(*s, map); });
  };
  worker_.submit(std::move(names));
  // A remote model's statistics would fetch every tensor: they start when asked (s), not by themselves.
  if (!remote::is_remote_model(session_->model)) restart_stats();
}

bool ModelView::select_pane_by_key(int32_t key) {
  for (size_t i = 0; i < panes_.size(); ++i)
    if (panes_[i].row->key == key) {
      current_ = i;
      return true;
    }
  return false;
}

void ModelView::restart_stats() {
  if (*stats_active_) return;   // one statistics job at a time; it skips what is done
  *stats_active_ = true;
  Job job = make_stats_job(session_, plan_);
  job.run = [run = std::move(job.run), flag = stats_active_](JobContext& ctx) {
    run(ctx);
    if (!ctx.requeued()) ctx.post([flag] { *flag = false; });   // requeued: it goes on after an urgent job
  };
  job.on_cancel = [flag = stats_active_] { *flag = false; };
  worker_.submit(std::move(job));
}

bool ModelView::check_files() {
  bool now = files_changed(session_->stamps);
  bool moved = now != changed_;
  changed_ = now;
  return moved;
}

}   // namespace akview::tui
