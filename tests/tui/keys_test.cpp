// The key table: dispatch finds every binding in its own context, no key is bound twice in one
// context, every pane and action has help text, and the README's key table is the generated one
// (AKVIEW_UPDATE_README=1 rewrites it).
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "ui/tui/keys.hpp"

namespace akview::testing {
namespace {

using tui::Action;
using tui::Context;

constexpr std::string_view kBegin = "<!-- key table: generated from ui/tui/keys.cpp -->\n";
constexpr std::string_view kEnd = "<!-- end of the key table -->";

TEST(KeyTable, EveryBindingIsFoundInItsContextAndNoKeyIsBoundTwice) {
  std::set<std::pair<Context, int32_t>> seen;
  for (const tui::KeyBinding& b : tui::key_table()) {
    EXPECT_FALSE(b.keys.empty());
    EXPECT_FALSE(b.help.empty());
    for (int32_t key : b.keys) {
      EXPECT_TRUE(seen.insert({b.context, key}).second)
          << tui::key_label(key) << " bound twice in " << tui::context_title(b.context);
      Action found{};
      ASSERT_TRUE(tui::find_binding(key, b.context, found));
      EXPECT_EQ(found, b.action);
      EXPECT_FALSE(tui::key_label(key).empty());
    }
  }
}

TEST(KeyTable, NamedKeysHaveReadableLabels) {
  EXPECT_EQ(tui::key_label(tui::kKeyEnter), "Enter");
  EXPECT_EQ(tui::key_label(tui::kKeyPageDown), "PgDn");
  EXPECT_EQ(tui::key_label('z'), "z");
}

TEST(KeyTable, ReadmeHoldsTheGeneratedTable) {
  const std::string path = std::string(AKVIEW_SOURCE_DIR) + "/README.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream buf;
  buf << in.rdbuf();
  std::string readme = buf.str();
  const size_t begin = readme.find(kBegin);
  ASSERT_NE(begin, std::string::npos) << "README.md lacks the marker " << kBegin;
  const size_t from = begin + kBegin.size();
  const size_t end = readme.find(kEnd, from);
  ASSERT_NE(end, std::string::npos) << "README.md lacks the marker " << kEnd;
  const std::string expected = tui::key_table_markdown();
  if (const char* update = std::getenv("AKVIEW_UPDATE_README"); update && std::string(update) == "1") {
    readme.replace(from, end - from, expected);
    std::ofstream(path, std::ios::trunc) << readme;
    GTEST_SKIP() << "rewrote the key table in " << path;
  }
  EXPECT_EQ(readme.substr(from, end - from), expected)
      << "the README's key table is stale: run  AKVIEW_UPDATE_README=1 build/tests/tui/akview_tui_tests "
         "--gtest_filter=KeyTable.ReadmeHoldsTheGeneratedTable";
}

}   // namespace
}   // namespace akview::testing
