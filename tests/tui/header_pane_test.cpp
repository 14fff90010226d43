// The Header pane drawn into an off-screen canvas: the tree of GGUF keys and types, arrays folded
// and unfolded page by page (a 100,000-token vocabulary read a screen at a time), the tokenizer
// summary, the raw view, search with n/N, escaping, SafeTensors metadata and a folder's config.json.
#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"
#include "ui/tui/header_pane.hpp"
#include "ui/tui/header_tree.hpp"

namespace akview::testing {
namespace {

using tui::Action;
using tui::HeaderPane;
using tui::Role;

constexpr int kTokens = 100000;
constexpr std::string_view kEvilKey = "evil.\x1b[31mkey";

std::string token(int i) {
  if (i == 1) return "<s>";
  if (i == 2) return "</s>";
  if (i == kTokens - 1) return "zz_last_token";
  return "tok" + std::to_string(i);
}

GgufWriter tokenizer_model() {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("general.name", gguf_string("tiny"));
  w.set("llama.block_count", gguf_u32(2));
  w.set("llama.embedding_length", gguf_u32(64));
  w.set("llama.rope.freq_base", gguf_f32(10000.0f));
  w.set(std::string(kEvilKey), gguf_string("a\xe2\x80\xae"
                                           "b"));
  w.set("small.ints", gguf_array(kGgufI32, {gguf_i32(7), gguf_i32(-8), gguf_i32(9)}));
  w.set("nested", gguf_array(kGgufArray, {gguf_array(kGgufString, {gguf_string("x"), gguf_string("y")}),
                                          gguf_array(kGgufU8, {gguf_u8(5)})}));
  w.set("tokenizer.ggml.model", gguf_string("llama"));
  w.set("tokenizer.ggml.bos_token_id", gguf_u32(1));
  w.set("tokenizer.ggml.eos_token_id", gguf_u32(2));
  std::vector<GgufValue> tokens;
  tokens.reserve(kTokens);
  for (int i = 0; i < kTokens; ++i) tokens.push_back(gguf_string(token(i)));
  w.set("tokenizer.ggml.tokens", gguf_array(kGgufString, tokens));
  w.add_tensor({"token_embd.weight", 0, {8, 4}});
  return w;
}

class HeaderPaneGguf : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    path_ = dir_->file("tok.gguf");
    ASSERT_TRUE(tokenizer_model().write(path_));
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    auto model = open_model(path_);
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    pane_ = std::make_unique<HeaderPane>(tui::make_session(std::move(*model)));
  }
  tui::Canvas draw(int w, int h) { return draw_pane(*pane_, host_, w, h); }
  // Searches `text` and accepts it (the cursor lands on the first match at/after it).
  void search(std::string_view text) {
    ASSERT_TRUE(pane_->act(Action::search, host_));
    ASSERT_TRUE(host_.prompting());
    host_.type(text);
    host_.accept();
  }
  static int selected_row(const tui::Canvas& c) {
    for (int y = 0; y < c.height(); ++y)
      if (c.at(c.width() - 1, y).role == Role::selected) return y;
    return -1;
  }

  static inline TempDir* dir_ = nullptr;
  static inline std::string path_;
  FakeHost host_;
  std::unique_ptr<HeaderPane> pane_;
};

TEST_F(HeaderPaneGguf, KeysWithTheirTypesAndValues) {
  auto c = draw(120, 40);
  EXPECT_EQ(c.row_text(0).substr(0, 3), "key");
  EXPECT_NE(c.row_text(0).find("type"), std::string::npos);
  EXPECT_GE(find_row(c, {"general.architecture", "STRING", "llama"}), 0) << screen_text(c);
  int y = find_row(c, {"llama.block_count", "UINT32", "2"});
  ASSERT_GE(y, 0) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, y, Role::key));
  EXPECT_TRUE(row_has_role(c, y, Role::number));
  EXPECT_GE(find_row(c, {"llama.rope.freq_base", "FLOAT32", "10000"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"gguf", "tok.gguf"}), 0) << "a section per source\n" << screen_text(c);
  EXPECT_EQ(pane_->position(), "key 1/" + std::to_string(pane_->row_count()));
}

TEST_F(HeaderPaneGguf, FoldedArrayShowsCountAndElementType) {
  auto c = draw(120, 40);
  EXPECT_GE(find_row(c, {"tokenizer.ggml.tokens", "ARRAY[STRING]", "[100000]"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"▸", "small.ints", "ARRAY[INT32]", "[3]"}), 0) << screen_text(c);
  EXPECT_EQ(find_row(c, {"tok50"}), -1) << "nothing of the vocabulary is shown folded";
  EXPECT_EQ(pane_->elements_read(), 0u) << "the tree read no array element (the summary reads its own few)";
}

TEST_F(HeaderPaneGguf, UnfoldingShowsTheFirstElementsAndEndShowsTheLast) {
  draw(120, 40);
  const uint64_t folded_rows = pane_->row_count();
  search("small.ints");
  pane_->act(Action::fold, host_);
  EXPECT_EQ(pane_->row_count(), folded_rows + 3);
  auto c = draw(120, 40);
  const int y = find_row(c, {"▾", "small.ints"});
  ASSERT_GE(y, 0) << screen_text(c);
  EXPECT_NE(c.row_text(y + 1).find("[0]"), std::string::npos) << screen_text(c);
  EXPECT_NE(c.row_text(y + 1).find("INT32"), std::string::npos);
  EXPECT_NE(c.row_text(y + 1).find("7"), std::string::npos);
  EXPECT_NE(c.row_text(y + 2).find("-8"), std::string::npos);

  // The vocabulary: unfold, then End goes to its last element; only screens were read.
  search("tokenizer.ggml.tokens");
  const uint64_t before = pane_->elements_read();
  pane_->act(Action::fold, host_);
  EXPECT_EQ(pane_->row_count(), folded_rows + 3 + kTokens);
  c = draw(120, 40);
  EXPECT_GE(find_row(c, {"[0]", "STRING", "tok0"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"[1]", "<s>"}), 0) << screen_text(c);
  pane_->act(Action::end, host_);
  c = draw(120, 40);
  const int last = find_row(c, {"[99999]", "zz_last_token"});
  ASSERT_GE(last, 0) << screen_text(c);
  EXPECT_EQ(last, selected_row(c));
  EXPECT_GE(find_row(c, {"[99998]", "tok99998"}), 0);
  EXPECT_EQ(pane_->position(), "[99999] of 100000");
  EXPECT_LE(pane_->largest_read(), 39u) << "never more than a screen of elements at once";
  EXPECT_LE(pane_->elements_read() - before, 2u * 39u);
  // Paging back up reads one more screen, not the whole array.
  pane_->act(Action::page_up, host_);
  c = draw(120, 40);
  EXPECT_GE(find_row(c, {"[99960]", "tok99960"}), 0) << screen_text(c);
  EXPECT_LE(pane_->elements_read() - before, 3u * 39u);
  // Enter on an element folds its array and puts the cursor on it.
  pane_->act(Action::fold, host_);
  EXPECT_EQ(pane_->row_count(), folded_rows + 3);
  c = draw(120, 40);
  EXPECT_EQ(find_row(c, {"▸", "tokenizer.ggml.tokens"}), selected_row(c)) << screen_text(c);
}

TEST_F(HeaderPaneGguf, NestedArrayElementsShowTheirFirstElements) {
  draw(120, 40);
  search("nested");
  pane_->act(Action::fold, host_);
  auto c = draw(120, 40);
  const int y = find_row(c, {"▾", "nested", "ARRAY[ARRAY[…]]", "[2]"});
  ASSERT_GE(y, 0) << screen_text(c);
  EXPECT_NE(c.row_text(y + 1).find("ARRAY[STRING]"), std::string::npos) << screen_text(c);
  EXPECT_NE(c.row_text(y + 1).find("[2] x, y"), std::string::npos) << screen_text(c);
  EXPECT_NE(c.row_text(y + 2).find("[1] 5"), std::string::npos) << screen_text(c);
}

TEST_F(HeaderPaneGguf, TokenizerSummaryComesFirst) {
  auto c = draw(120, 40);
  EXPECT_NE(c.row_text(1).find("tokenizer"), std::string::npos) << screen_text(c);
  EXPECT_GE(find_row(c, {"model", "llama"}), 0);
  EXPECT_GE(find_row(c, {"vocabulary", "100000 tokens"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"bos id 1", "<s>"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"eos id 2", "</s>"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"token 0", "tok0"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"token 99999", "zz_last_token"}), 0) << screen_text(c);
  // At 40 columns the type column goes, the ids stay.
  c = draw(40, 12);
  EXPECT_GE(find_row(c, {"bos id 1", "<s>"}), 0) << screen_text(c);
  EXPECT_EQ(c.row_text(0).find("type"), std::string::npos);
}

TEST_F(HeaderPaneGguf, SearchLandsOnAKeyAndNextMoves) {
  draw(120, 40);
  ASSERT_TRUE(pane_->act(Action::search, host_));
  host_.type("LLAMA.");   // case-insensitive, incremental
  auto c = draw(120, 40);
  int y = selected_row(c);
  ASSERT_GE(y, 0);
  EXPECT_NE(c.row_text(y).find("llama.block_count"), std::string::npos) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, y, Role::match));
  host_.accept();
  EXPECT_TRUE(pane_->state().starts_with("match 1/")) << pane_->state();
  EXPECT_TRUE(pane_->state().ends_with(" 'LLAMA.'")) << pane_->state();   // the term as typed
  pane_->act(Action::search_next, host_);
  c = draw(120, 40);
  EXPECT_NE(c.row_text(selected_row(c)).find("llama.embedding_length"), std::string::npos) << screen_text(c);
  pane_->act(Action::search_prev, host_);
  c = draw(120, 40);
  EXPECT_NE(c.row_text(selected_row(c)).find("llama.block_count"), std::string::npos) << screen_text(c);
  // Esc on a new search puts the cursor back where it was, and the term before back for n/N.
  const int64_t here = pane_->cursor_row();
  const std::string before = pane_->state();
  pane_->act(Action::search, host_);
  host_.type("eos");
  EXPECT_NE(pane_->cursor_row(), here);
  host_.cancel();
  EXPECT_EQ(pane_->cursor_row(), here);
  EXPECT_EQ(pane_->state(), before);
  pane_->act(Action::search, host_);
  host_.type("no such key anywhere");
  EXPECT_EQ(pane_->state(), "no match 'no such key anywhere'");
  ASSERT_FALSE(host_.flashes.empty());
  EXPECT_EQ(host_.flashes.back(), "no match for 'no such key anywhere'");
}

TEST_F(HeaderPaneGguf, ControlAndBidiCharactersAreEscaped) {
  auto c = draw(120, 40);
  const int y = find_row(c, {"evil.\\x1b[31mkey"});
  ASSERT_GE(y, 0) << screen_text(c);
  EXPECT_NE(c.row_text(y).find("a\\u{202e}b"), std::string::npos) << c.row_text(y);
  for (int row = 0; row < c.height(); ++row) {
    EXPECT_EQ(c.row_text(row).find('\x1b'), std::string::npos);
    EXPECT_EQ(c.row_text(row).find("\xe2\x80\xae"), std::string::npos);
  }
}

TEST_F(HeaderPaneGguf, RawViewListsKeysInFileOrderWithOffsets) {
  draw(120, 40);
  pane_->act(Action::toggle_raw, host_);
  EXPECT_TRUE(pane_->raw());
  EXPECT_EQ(pane_->state(), "raw");
  auto c = draw(120, 40);
  EXPECT_GE(find_row(c, {"gguf", "tok.gguf"}), 0) << screen_text(c);
  const int arch = find_row(c, {"0x00000018 general.architecture STRING llama"});
  EXPECT_GE(arch, 0) << screen_text(c);
  const int name = find_row(c, {"general.name STRING tiny"});
  EXPECT_GT(name, arch);
  EXPECT_GE(find_row(c, {"tokenizer.ggml.tokens ARRAY[STRING] [100000]"}), 0) << screen_text(c);
  pane_->act(Action::search, host_);
  EXPECT_FALSE(host_.prompting());
  EXPECT_EQ(host_.flashes.size(), 1u);
  pane_->act(Action::toggle_raw, host_);
  EXPECT_FALSE(pane_->raw());
}

TEST_F(HeaderPaneGguf, EverySizeDownTo40x12Draws) {
  for (auto [w, h] : {std::pair{120, 40}, std::pair{80, 24}, std::pair{40, 12}}) {
    auto c = draw(w, h);
    EXPECT_EQ(c.row_text(0).substr(0, 3), "key") << w << "x" << h;
    EXPECT_GE(find_row(c, {"tokenizer"}), 0) << screen_text(c);
    EXPECT_GE(find_row(c, {"bos id 1"}), 0) << screen_text(c);
  }
  pane_->act(Action::page_down, host_);
  auto c = draw(40, 12);
  EXPECT_EQ(pane_->cursor_row(), 11);   // a page is the 11 rows under the column header
  EXPECT_GE(selected_row(c), 1);
}

TEST_F(HeaderPaneGguf, ClickSelectsAndWheelScrolls) {
  auto c = draw(80, 24);
  pane_->click(3, 5, host_);
  EXPECT_EQ(pane_->cursor_row(), 4);
  pane_->wheel(3);
  EXPECT_EQ(pane_->cursor_row(), 7);
  c = draw(80, 24);
  EXPECT_EQ(selected_row(c), 8);   // row 7, under the column header (everything fits: no scroll)
}

TEST(HeaderPaneSafetensors, MetadataTreeAndRawHeader) {
  TempDir dir;
  StWriteOptions options;
  options.metadata = {{"format", "pt"}, {"note", std::string(300, 'x') + "END"}};
  ASSERT_TRUE(write_safetensors(dir.file("model.safetensors"),
                                {StTensor{"model.embed_tokens.weight", "F32", {4, 2}, std::vector<uint8_t>(32, 0)}},
                                options));
  ASSERT_TRUE(
      write_text(dir.file("config.json"),
                 R"({"model_type": "llama", "hidden_size": 64, "rope_scaling": {"factor": 8.0, "type": "llama3"},)"
                 R"( "eos_token_id": [1, 2], "tie_word_embeddings": false})"));
  auto model = open_model(dir.path());
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  FakeHost host;
  HeaderPane pane(tui::make_session(std::move(*model)));
  auto c = draw_pane(pane, host, 120, 40);
  EXPECT_GE(find_row(c, {"safetensors", "model.safetensors"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"format", "STRING", "pt"}), 0) << screen_text(c);
  const int note = find_row(c, {"note", "xxxx"});
  ASSERT_GE(note, 0);
  EXPECT_NE(c.row_text(note).find("…"), std::string::npos) << "a long value is cut";
  EXPECT_EQ(c.row_text(note).find("END"), std::string::npos);
  EXPECT_GE(find_row(c, {"config.json"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"model_type", "STRING", "llama"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"rope_scaling", "OBJECT", "{2}"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"rope_scaling.factor", "NUMBER", "8.0"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"eos_token_id[1]", "NUMBER", "2"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"tie_word_embeddings", "BOOL", "false"}), 0) << screen_text(c);

  pane.act(Action::toggle_raw, host);
  c = draw_pane(pane, host, 120, 40);
  EXPECT_GE(find_row(c, {"safetensors header"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"__metadata__"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"END"}), 0) << "the raw view wraps the header, long value and all\n" << screen_text(c);
  EXPECT_GE(find_row(c, {"\"rope_scaling\""}), 0) << screen_text(c);
  c = draw_pane(pane, host, 40, 12);
  EXPECT_GE(find_row(c, {"__metadata"}), 0) << screen_text(c);
}

// Nested JSON arrays and objects deep enough that the node list grows while a parent's children are
// added (a child key is built from its parent's, which must not dangle): the Ollama manifest's layers.
TEST(HeaderPaneSafetensors, NestedJsonKeepsEveryPath) {
  TempDir dir;
  ASSERT_TRUE(write_safetensors(dir.file("model.safetensors"),
                                {StTensor{"model.embed_tokens.weight", "F32", {4, 2}, std::vector<uint8_t>(32, 0)}}));
  std::string layers;
  for (int i = 0; i < 40; ++i)
    layers += (i ? "," : "") + std::string(R"({"mediaType": "x", "size": )") + std::to_string(i) +
              R"(, "shape": [[1, 2], [3, [4, 5]]]})";
  ASSERT_TRUE(write_text(dir.file("config.json"), R"({"model_type": "llama", "layers": [)" + layers + "]}"));
  auto model = open_model(dir.path());
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const tui::HeaderTree tree = tui::build_header_tree(*model);
  bool deep_first = false, deep_last = false;
  for (const tui::HeaderNode& n : tree.nodes) {
    deep_first = deep_first || n.key == "layers[0].shape[1][1][0]";
    deep_last = deep_last || n.key == "layers[39].shape[1][1][1]";
  }
  EXPECT_TRUE(deep_first);
  EXPECT_TRUE(deep_last);
}

// Every type in the tree is named one way, in capitals, whether it is a GGUF type, a JSON kind in a
// config.json or a JSON value held in a GGUF string, or the tokenizer summary's TOKEN.
TEST(HeaderTypes, AreNamedOneWay) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("llama.block_count", gguf_u32(2));
  w.set("meta.json", gguf_string(R"({"a": 1, "b": "x", "c": [true, null], "d": {}})"));
  w.set("tokenizer.ggml.tokens", gguf_array(kGgufString, {gguf_string("<s>"), gguf_string("</s>")}));
  w.set("tokenizer.ggml.bos_token_id", gguf_u32(0));
  w.add_tensor({"token_embd.weight", 0, {8, 4}});
  ASSERT_TRUE(w.write(dir.file("t.gguf")));
  ASSERT_TRUE(
      write_text(dir.file("config.json"), R"({"model_type": "llama", "rope_scaling": {"factor": 8.0}, "tie": false})"));
  auto model = open_model(dir.file("t.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const tui::HeaderTree tree = tui::build_header_tree(*model);
  size_t typed = 0;
  for (const tui::HeaderNode& n : tree.nodes) {
    if (n.type.empty()) continue;
    ++typed;
    for (char ch : n.type) EXPECT_FALSE(ch >= 'a' && ch <= 'z') << n.key << ": " << n.type;
  }
  EXPECT_GE(typed, 6u);
}

}   // namespace
}   // namespace akview::testing
