// The virtual Tensors table: sorts, filters, grouping and search permute tensor indices; scales and
// biases stay right beneath their tensor under every sort and filter; names sort in natural order.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "ui/tui/tensor_table.hpp"

namespace akview::testing {
namespace {

using tui::Column;
using tui::natural_name_orders;
using tui::TensorTable;

constexpr uint32_t kF32 = 0;

std::string_view native(const tui::ModelSession& s, uint32_t tensor) { return s.model.tensors[tensor].name; }

bool is_companion_name(std::string_view name) { return name.ends_with(".scales") || name.ends_with(".biases"); }

// Every companion row directly follows its own tensor (or another companion of it).
void expect_companions_beneath(const tui::ModelSession& s, const TensorTable& table) {
  const auto& rows = table.rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (table.is_group(rows[i])) continue;
    const std::string_view name = native(s, rows[i]);
    if (!is_companion_name(name)) continue;
    ASSERT_GT(i, 0u) << name;
    size_t lead = i - 1;
    while (lead > 0 && !table.is_group(rows[lead]) && is_companion_name(native(s, rows[lead]))) --lead;
    ASSERT_FALSE(table.is_group(rows[lead])) << name;
    const std::string_view base = name.substr(0, name.rfind('.'));
    EXPECT_EQ(std::string(native(s, rows[lead])), std::string(base) + ".weight") << "row " << i;
  }
}

class MlxTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session_ = open_session(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-mlx-4bit");
    table_ = std::make_unique<TensorTable>(*session_);
    table_->set_show_canonical(false);
  }
  std::shared_ptr<tui::ModelSession> session_;
  std::unique_ptr<TensorTable> table_;
};

TEST_F(MlxTableTest, ModelOrderShowsEveryTensorOnceWithCompanionsBeneath) {
  const auto& rows = table_->rows();
  EXPECT_EQ(rows.size(), session_->model.tensors.size());
  std::vector<uint32_t> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  expect_companions_beneath(*session_, *table_);
}

TEST_F(MlxTableTest, SortByBytesPutsTheLargestFirstAndKeepsCompanions) {
  for (bool desc : {true, false}) {
    table_->set_sort(Column::bytes, desc);
    const auto& rows = table_->rows();
    ASSERT_EQ(rows.size(), session_->model.tensors.size());
    std::vector<uint64_t> lead_bytes;
    for (uint32_t r : rows)
      if (!is_companion_name(native(*session_, r))) lead_bytes.push_back(session_->model.tensors[r].nbytes);
    if (desc) {
      EXPECT_TRUE(std::is_sorted(lead_bytes.rbegin(), lead_bytes.rend()));
      uint64_t largest = 0;
      for (const Tensor& t : session_->model.tensors)
        if (!is_companion_name(t.name)) largest = std::max(largest, t.nbytes);
      EXPECT_EQ(session_->model.tensors[rows.front()].nbytes, largest);
    } else {
      EXPECT_TRUE(std::is_sorted(lead_bytes.begin(), lead_bytes.end()));
    }
    // Ties keep the model's order, also when this direction was derived from the other one.
    uint32_t prev = 0;
    uint64_t prev_bytes = UINT64_MAX;
    for (uint32_t r : rows) {
      if (is_companion_name(native(*session_, r))) continue;
      if (session_->model.tensors[r].nbytes == prev_bytes) {
        EXPECT_LT(prev, r) << native(*session_, r);
      }
      prev = r;
      prev_bytes = session_->model.tensors[r].nbytes;
    }
    expect_companions_beneath(*session_, *table_);
  }
}

TEST_F(MlxTableTest, FilterAndItsInverseSplitTheUnits) {
  ASSERT_TRUE(table_->set_filter("q_proj").ok());
  const uint64_t matched = table_->shown_tensors();
  for (uint32_t r : table_->rows()) EXPECT_NE(native(*session_, r).find("q_proj"), std::string_view::npos);
  EXPECT_GT(matched, 0u);
  EXPECT_EQ(matched % 3, 0u);   // weight, scales, biases
  expect_companions_beneath(*session_, *table_);
  ASSERT_TRUE(table_->set_filter("!q_proj").ok());
  EXPECT_EQ(table_->shown_tensors() + matched, session_->model.tensors.size());
  for (uint32_t r : table_->rows()) EXPECT_EQ(native(*session_, r).find("q_proj"), std::string_view::npos);
  // A regex, and a bad one that leaves the filter unchanged.
  ASSERT_TRUE(table_->set_filter("layers\\.[01]\\..*(k|v)_proj\\.weight$").ok());
  EXPECT_EQ(table_->shown_tensors(), 2u * 2u * 3u);
  EXPECT_FALSE(table_->set_filter("([").ok());
  EXPECT_EQ(table_->shown_tensors(), 2u * 2u * 3u);
  ASSERT_TRUE(table_->set_filter("").ok());
  EXPECT_EQ(table_->shown_tensors(), session_->model.tensors.size());
}

TEST_F(MlxTableTest, DotsInAPlainFilterMatchAnyCharacterLikeTheRegex) {
  ASSERT_TRUE(table_->set_filter("layers.1.self_attn.q.proj").ok());   // the fast path
  const uint64_t fast = table_->shown_tensors();
  ASSERT_TRUE(table_->set_filter("layers.1.self_attn.q.proj|^$").ok());   // the same through std::regex
  EXPECT_EQ(table_->shown_tensors(), fast);
  EXPECT_EQ(fast, 3u);
  ASSERT_TRUE(table_->set_filter("layers.1.self_attn.q.proj.weight").ok());   // narrowing keeps the answer
  EXPECT_EQ(table_->shown_tensors(), 3u);
}

TEST_F(MlxTableTest, TypingAndBackspacingAFilterGivesWhatAFreshFilterGives) {
  // Each prefix typed one character at a time (narrowing and remembered), then backspaced
  // (answered from what was remembered): the rows equal those of a table filtered afresh.
  const std::string typed = "layers.1.self_attn.q";
  std::vector<std::vector<uint32_t>> forward;
  for (size_t n = 1; n <= typed.size(); ++n) {
    ASSERT_TRUE(table_->set_filter(typed.substr(0, n)).ok());
    forward.push_back(table_->rows().to_vector());
  }
  for (size_t n = typed.size(); n-- > 1;) {
    ASSERT_TRUE(table_->set_filter(typed.substr(0, n)).ok());
    EXPECT_EQ(table_->rows().to_vector(), forward[n - 1]) << typed.substr(0, n);
    TensorTable fresh(*session_);
    ASSERT_TRUE(fresh.set_filter(typed.substr(0, n)).ok());
    EXPECT_EQ(fresh.rows().to_vector(), table_->rows().to_vector()) << typed.substr(0, n);
  }
  // The inverse of a remembered pattern is its own pattern, not the remembered one.
  ASSERT_TRUE(table_->set_filter("!layers.1").ok());
  EXPECT_EQ(table_->shown_tensors() + forward[7].size(), session_->model.tensors.size());
}

TEST_F(MlxTableTest, SearchFindsAndWraps) {
  const int64_t first = table_->search("o_proj", 0, 1);
  ASSERT_GE(first, 0);
  EXPECT_NE(native(*session_, table_->rows()[first]).find("o_proj"), std::string_view::npos);
  const int64_t next = table_->search("o_proj", first + 1, 1);
  ASSERT_GT(next, first);
  // Backwards from the first hit wraps to the last one.
  const int64_t last = table_->search("o_proj", first - 1, -1);
  EXPECT_GE(last, next);
  EXPECT_EQ(table_->search("O_PROJ", 0, 1), first);   // case-insensitive
  EXPECT_EQ(table_->search("no such tensor", 0, 1), -1);
}

// A big table sorts names on the worker: the sort stays pending (model order) until the order the
// worker computed from the request is installed, which then equals the sort done in place; an
// answer for names no longer shown is dropped and asked for again.
TEST_F(MlxTableTest, NameSortOfABigTableWaitsForTheWorkersOrder) {
  TensorTable inline_table(*session_);
  inline_table.set_show_canonical(false);
  inline_table.set_sort(Column::name, true);
  const std::vector<uint32_t> expected = inline_table.rows().to_vector();

  table_->set_async_name_sort_units(0);
  const std::vector<uint32_t> model_order = table_->rows().to_vector();
  table_->set_sort(Column::name, true);
  EXPECT_TRUE(table_->name_sort_pending());
  EXPECT_EQ(table_->rows().to_vector(), model_order);
  auto request = table_->take_name_sort_request();
  ASSERT_TRUE(request.has_value());
  EXPECT_FALSE(table_->take_name_sort_request().has_value()) << "one request per pending sort";
  EXPECT_FALSE(request->canonical);

  // Stale: the canonical names are shown now; the answer for native names is dropped.
  table_->set_show_canonical(true);
  table_->refresh(true);
  table_->install_name_orders(request->canonical, request->names_version,
                              natural_name_orders(session_->model, *request));
  EXPECT_TRUE(table_->name_sort_pending());
  table_->set_show_canonical(false);
  table_->refresh(true);
  request = table_->take_name_sort_request();
  ASSERT_TRUE(request.has_value());
  table_->install_name_orders(request->canonical, request->names_version,
                              natural_name_orders(session_->model, *request));
  EXPECT_FALSE(table_->name_sort_pending());
  EXPECT_EQ(table_->rows().to_vector(), expected);
  expect_companions_beneath(*session_, *table_);
  inline_table.set_sort(Column::name, false);
  table_->set_sort(Column::name, false);
  EXPECT_FALSE(table_->name_sort_pending()) << "both directions came from the worker";
  EXPECT_EQ(table_->rows().to_vector(), inline_table.rows().to_vector());

  // Esc while sorting: back to the model's order, not sorted.
  table_->set_show_canonical(true);
  table_->refresh(true);
  ASSERT_TRUE(table_->name_sort_pending());
  table_->cancel_name_sort();
  EXPECT_FALSE(table_->sorted());
  EXPECT_EQ(table_->rows().to_vector(), model_order);
}

TEST(TensorTable, NamesSortNaturallyAndGroupByLayerFolds) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.add_tensor({"token_embd.weight", kF32, {8, 4}});
  for (int layer : {10, 2, 1}) {
    w.add_tensor({"blk." + std::to_string(layer) + ".attn_q.weight", kF32, {4, 4}});
    w.add_tensor({"blk." + std::to_string(layer) + ".ffn_up.weight", kF32, {4, 8}});
  }
  w.add_tensor({"output.weight", kF32, {8, 4}});
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(w.write(path));
  auto session = open_session(path);
  TensorTable table(*session);
  table.set_show_canonical(false);
  table.set_sort(Column::name, false);
  std::vector<std::string> names;
  for (uint32_t r : table.rows()) names.emplace_back(native(*session, r));
  const std::vector<std::string> expected = {"blk.1.attn_q.weight", "blk.1.ffn_up.weight",  "blk.2.attn_q.weight",
                                             "blk.2.ffn_up.weight", "blk.10.attn_q.weight", "blk.10.ffn_up.weight",
                                             "output.weight",       "token_embd.weight"};
  EXPECT_EQ(names, expected);

  table.set_sort(Column::name, false);
  table.set_grouping(true);
  // Headers for layers 1, 2, 10 and one for the tensors outside any layer.
  int headers = 0;
  int64_t layer10 = -1;
  for (size_t i = 0; i < table.rows().size(); ++i)
    if (table.is_group(table.rows()[i])) {
      ++headers;
      if (table.group(table.rows()[i]).layer == 10) layer10 = static_cast<int64_t>(i);
    }
  EXPECT_EQ(headers, 4);
  ASSERT_GE(layer10, 0);
  EXPECT_EQ(table.group(table.rows()[layer10]).tensors, 2u);
  const size_t before = table.rows().size();
  table.toggle_fold(table.rows()[layer10]);
  EXPECT_EQ(table.rows().size(), before - 2);
  EXPECT_EQ(table.shown_tensors(), session->model.tensors.size());   // folded rows still pass the filter
  table.toggle_fold(table.rows()[layer10]);
  EXPECT_EQ(table.rows().size(), before);
  table.set_grouping(false);
  EXPECT_EQ(table.rows().size(), session->model.tensors.size());
}

// A filter typed before the name map lands is tested again on every tensor when it does: rows whose
// canonical name matches come in, though their native names had left them out.
TEST(TensorTable, AFilterTypedBeforeTheNameMapTakesInTheCanonicalMatches) {
  auto session = open_session(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-q4km.gguf");
  TensorTable table(*session);
  ASSERT_TRUE(table.set_filter("attention.q").ok());
  EXPECT_EQ(table.shown_tensors(), 0u) << "the native names are blk.N.attn_q";
  tui::attach_names(*session, std::make_shared<NameMap>(build_name_map(session->model)));
  table.refresh(true);
  EXPECT_EQ(table.shown_tensors(), 4u);   // layers.0..3.attention.q.weight
}

// In the model's order with nothing filtered or grouped, no row index is stored (row r is tensor r):
// the first frame of a million-tensor model allocates none. A filter, a sort or the grouping stores
// them; clearing it goes back to the virtual rows, with the same rows as before.
TEST(TensorTable, ModelOrderRowsAreVirtualUntilFilteredSortedOrGrouped) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  for (int layer = 0; layer < 3; ++layer) {
    w.add_tensor({"blk." + std::to_string(layer) + ".attn_q.weight", kF32, {4, 4}});
    w.add_tensor({"blk." + std::to_string(layer) + ".ffn_up.weight", kF32, {4, 8 + layer}});
  }
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(w.write(path));
  auto session = open_session(path);
  TensorTable table(*session);
  table.set_show_canonical(false);
  const size_t n = session->model.tensors.size();
  std::vector<uint32_t> identity(n);
  for (uint32_t i = 0; i < n; ++i) identity[i] = i;
  EXPECT_TRUE(table.rows().is_virtual());
  EXPECT_EQ(table.rows().to_vector(), identity);
  EXPECT_EQ(table.row_of(3), 3);
  EXPECT_EQ(table.row_of(static_cast<uint32_t>(n)), -1);
  EXPECT_EQ(table.shown_units(), n);
  EXPECT_EQ(table.shown_bytes(), table.all_bytes());

  ASSERT_TRUE(table.set_filter("ffn").ok());
  EXPECT_FALSE(table.rows().is_virtual());
  EXPECT_EQ(table.rows().to_vector(), (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_EQ(table.row_of(3), 1);
  ASSERT_TRUE(table.set_filter("").ok());
  EXPECT_TRUE(table.rows().is_virtual());
  EXPECT_EQ(table.rows().to_vector(), identity);

  table.set_sort(Column::bytes, true);   // the ffn tensors (largest last layer first), then attn_q in model order
  EXPECT_FALSE(table.rows().is_virtual());
  EXPECT_EQ(table.rows().to_vector(), (std::vector<uint32_t>{5, 3, 1, 0, 2, 4}));
  table.set_grouping(true);
  EXPECT_FALSE(table.rows().is_virtual());
  EXPECT_EQ(table.rows().size(), n + 3);   // a header per layer
  table.set_grouping(false);

  // The MLX model's scales and biases make units of several tensors: its model order is virtual too.
  auto mlx = open_session(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-mlx-4bit");
  TensorTable mlx_table(*mlx);
  EXPECT_TRUE(mlx_table.rows().is_virtual());
  EXPECT_EQ(mlx_table.rows().size(), mlx->model.tensors.size());
  EXPECT_LT(mlx_table.shown_units(), mlx->model.tensors.size());
}

}   // namespace
}   // namespace akview::testing
