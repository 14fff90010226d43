// The Header pane on the oracle Ollama store: the GGUF blob's keys, the manifest as nested JSON
// rows, the template, params and license layers, and their text in the raw view.
#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "tests/provider/oracle_util.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/header_pane.hpp"

namespace akview::testing {
namespace {

using tui::Action;

TEST(HeaderPaneOllama, ManifestTemplateParamsAndTheirRawText) {
  auto model = open_model(test::oracle(test::manifest()["gguf"]["ollama"]["manifest"]));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  FakeHost host;
  tui::HeaderPane pane(tui::make_session(std::move(*model)));
  // Tall enough to hold every row: the sources in order, each a section.
  auto c = draw_pane(pane, host, 120, 100);
  const int tokenizer = find_row(c, {"▾ tokenizer"});
  const int config = find_row(c, {"▾ ollama · ollama config"});
  const int gguf = find_row(c, {"▾ gguf · model blob"});
  const int tmpl = find_row(c, {"▾ ollama · template"});
  const int params = find_row(c, {"▾ ollama · params"});
  const int manifest = find_row(c, {"▾ manifest (latest)"});
  EXPECT_EQ(tokenizer, 1) << screen_text(c);
  EXPECT_LT(tokenizer, config);
  EXPECT_LT(config, gguf);
  EXPECT_LT(gguf, tmpl);
  EXPECT_LT(tmpl, params);
  EXPECT_LT(params, manifest);
  EXPECT_GE(find_row(c, {"unk id 0", "<unk>"}), 0) << screen_text(c);
  EXPECT_EQ(find_row(c, {"ollama.template", "STRING", "{{ .Prompt }}"}), tmpl + 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"ollama.params.stop[0]", "STRING", "</s>"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"config.digest", "STRING", "sha256:728e08"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"▸ layers", "ARRAY", "[3]"}), 0) << "more than 8 rows below: folded\n" << screen_text(c);
  // A search opens the folded array that holds the match.
  pane.act(Action::search, host);
  host.type("image.template");
  host.accept();
  c = draw_pane(pane, host, 120, 100);
  EXPECT_GE(find_row(c, {"▾ layers"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"layers[1].mediaType", "application/vnd.ollama.image.template"}), 0) << screen_text(c);

  pane.act(Action::toggle_raw, host);
  c = draw_pane(pane, host, 120, 100);
  EXPECT_GE(find_row(c, {"── manifest:"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"\"schemaVersion\": 2,"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"── template:"}), 0) << screen_text(c);
  EXPECT_EQ(find_row(c, {"{{ .Prompt }}"}), find_row(c, {"── template:"}) + 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"{\"stop\": [\"</s>\"]}"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"tokenizer.chat_template STRING {% for m in messages %}"}), 0) << screen_text(c);
}

}   // namespace
}   // namespace akview::testing
