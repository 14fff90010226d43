// Goldens of the Layout pane through the real binary on a pty: a GGUF, a SafeTensors file and a
// PyTorch zip, and a q4_K block's fields, each at 120x40, 80x24 and 40x12. Files come from the
// oracles (tests/oracles), opened by paths relative to the oracle folder so the screens name no machine path.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/formats/format.hpp"
#include "core/layout/layout.hpp"
#include "tests/screens/golden.hpp"
#include "tests/screens/harness.hpp"

namespace akview::testing {
namespace {

const std::string kOracles = AKVIEW_ORACLES_DIR;

void start_layout(Terminal& term, const std::string& path, TermSize size) {
  term.start({AKVIEW_BINARY, path}, size, {}, kOracles);
  term.settle();
  term.press("3");
  term.settle();
}

void check_pane(const std::string& path, const std::string& name) {
  for (TermSize size : kGoldenSizes) {
    Terminal term;
    start_layout(term, path, size);
    EXPECT_TRUE(compare_golden(term.screen(), fmt::format("layout_{}_{}", name, size_name(size))));
    term.send_key("q");
    EXPECT_EQ(term.wait_exit(), 0);
  }
}

TEST(LayoutScreens, Gguf) { check_pane("gguf/lq_q4_k_m.gguf", "gguf"); }
TEST(LayoutScreens, SafeTensors) { check_pane("st/plain_bf16/model.safetensors", "safetensors"); }
TEST(LayoutScreens, PyTorchZip) { check_pane("pytorch/conv_linear_zip.pt", "pytorch_zip"); }

// `o` to the data of token_embd.weight, Enter: block 0's fields; Down: block 1.
TEST(LayoutScreens, Q4KBlockFields) {
  auto model = open_model(kOracles + "/gguf/lq_q4_k_m.gguf");
  ASSERT_TRUE(model.ok());
  const Tensor* t = model->find("token_embd.weight");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->type, TypeId::q4_k);
  for (TermSize size : kGoldenSizes) {
    Terminal term;
    start_layout(term, "gguf/lq_q4_k_m.gguf", size);
    term.press("o");
    term.type(fmt::format("{:x}", t->offset));
    term.press("Enter");
    term.press("Enter");
    EXPECT_NE(term.screen().find_row("block 0/"), -1) << term.screen().text();
    EXPECT_TRUE(compare_golden(term.screen(), fmt::format("layout_q4_k_block_{}", size_name(size))));
    term.press("Down");
    EXPECT_NE(term.screen().find_row("block 1/"), -1) << term.screen().text();
    term.press("Esc");
    EXPECT_EQ(term.screen().find_row("block 1/"), -1) << term.screen().text();
    term.send_key("q");
    EXPECT_EQ(term.wait_exit(), 0);
  }
}

// Enter on a tensor info jumps to the tensor's data: the hex view then starts at the data.
TEST(LayoutScreens, EnterOnATensorInfoJumpsToItsData) {
  auto model = open_model(kOracles + "/gguf/q8_0.gguf");
  ASSERT_TRUE(model.ok());
  uint64_t info_at = 0;
  ASSERT_TRUE(walk_layout(*model, 0, [&](const Region& r) {
                if (r.kind == RegionKind::tensor_info && r.label == "blk.0.attn_v.weight") info_at = r.offset;
                return true;
              }).ok());
  ASSERT_GT(info_at, 0u);
  const uint64_t data_at = model->find("blk.0.attn_v.weight")->offset;
  Terminal term;
  start_layout(term, "gguf/q8_0.gguf", {120, 40});
  term.press("o");
  term.type(fmt::format("{:x}", info_at));
  term.press("Enter");
  const std::string data_row = fmt::format("{:08x} ", data_at);
  EXPECT_EQ(term.screen().find_row(data_row), -1) << term.screen().text();
  term.press("Enter");
  EXPECT_NE(term.screen().find_row(data_row), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

}   // namespace
}   // namespace akview::testing
