// The pane table (pane_table.hpp), in PRODUCT.md's order of the panes.
#include "ui/tui/pane_table.hpp"

#include "ui/tui/compute_pane.hpp"
#include "ui/tui/diff_pane.hpp"
#include "ui/tui/fit_pane.hpp"
#include "ui/tui/groups_pane.hpp"
#include "ui/tui/header_pane.hpp"
#include "ui/tui/help_pane.hpp"
#include "ui/tui/layout_pane.hpp"
#include "ui/tui/mapping_pane.hpp"
#include "ui/tui/model_view.hpp"
#include "ui/tui/tensors_pane.hpp"

namespace akview::tui {
namespace {

// The tensor the Tensors pane's cursor is on: Layout, Groups and Compute follow it.
std::function<uint32_t()> selected_tensor(ModelView& v) {
  return [&v] { return v.find<TensorsPane>()->selected_tensor(); };
}

std::unique_ptr<Pane> make_tensors(ModelView& v) {
  return std::make_unique<TensorsPane>(v.shared_session(), v.stats_plan(), [&v] { v.restart_stats(); });
}
std::unique_ptr<Pane> make_header(ModelView& v) { return std::make_unique<HeaderPane>(v.shared_session()); }
std::unique_ptr<Pane> make_layout(ModelView& v) {
  return std::make_unique<LayoutPane>(v.shared_session(), selected_tensor(v));
}
std::unique_ptr<Pane> make_groups(ModelView& v) {
  return std::make_unique<GroupsPane>(v.shared_session(), selected_tensor(v));
}
std::unique_ptr<Pane> make_mapping(ModelView& v) { return std::make_unique<MappingPane>(v.shared_session()); }
std::unique_ptr<Pane> make_compute(ModelView& v) {
  return std::make_unique<ComputePane>(v.shared_session(), selected_tensor(v), v.ref());
}
std::unique_ptr<Pane> make_fit(ModelView& v) { return std::make_unique<FitPane>(v.shared_session()); }
std::unique_ptr<Pane> make_help(ModelView&) { return std::make_unique<HelpPane>(); }
// `x` on a pair: the Tensors pane's cursor goes to A's tensor (Compute's "tensor …" line, Layout and
// Groups follow the pair), Compute runs it against B's and comes to the front.
std::unique_ptr<Pane> make_diff(ModelView& v) {
  return std::make_unique<DiffPane>(v.shared_session(), v.ref(), [&v](uint32_t tensor, PaneHost& host) {
    v.find<TensorsPane>()->select_tensor(tensor);
    v.find<ComputePane>()->run_tensor(tensor, host);
    v.show<ComputePane>();
  });
}

constexpr PaneRow kPanes[] = {
    {"Tensors", '1', "Tensors pane", Context::tensors, false, make_tensors},
    {"Header", '2', "Header pane", Context::header, false, make_header},
    {"Layout", '3', "Layout pane", Context::layout, false, make_layout},
    {"Groups", '4', "Groups pane", Context::groups, false, make_groups},
    {"Mapping", '5', "Mapping pane", Context::mapping, false, make_mapping},
    {"Compute", '6', "Compute pane", Context::compute, false, make_compute},
    {"Help", '7', "Help pane", Context::help, false, make_help},
    {"Diff", '8', "Diff pane (with a second model: akview A --ref B)", Context::diff, true, make_diff},
    {"Fit", '9', "Fit pane: the memory to run the model at a context (also: click the title's size)", Context::fit,
     false, make_fit},
};

}   // namespace

std::span<const PaneRow> pane_table() { return kPanes; }

}   // namespace akview::tui
