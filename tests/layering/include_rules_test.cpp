// The layering, read from the #include lines of the whole source tree: ui -> compute -> core with nothing
// running back up, ui/batch and ui/text never reaching into the TUI, curses only in ui/tui/terminal.cpp,
// OpenCL and BLAS headers only in compute, and no library including the tests. The include folders
// (akview_layer in the top CMakeLists.txt) make most of these fail to compile as well; this test names the
// file and line, and also covers what a compiler does not see (a header nobody includes yet).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// A file whose path starts with `from` may not include a header whose path starts with `forbidden`.
// Angle-bracket includes are matched with their brackets ("<CL/"), quoted ones without.
struct IncludeRule {
  std::string_view from;
  std::string_view forbidden;
  std::string_view why;
};

constexpr IncludeRule kRules[] = {
    {"core/", "compute/", "core never includes compute"},
    {"core/", "ui/", "core never includes ui"},
    {"compute/", "ui/", "compute never includes ui"},
    {"ui/batch/", "ui/tui/", "ui/batch never includes the TUI"},
    {"ui/text/", "ui/tui/", "ui/text never includes the TUI"},
    {"ui/text/", "ui/batch/", "ui/text is below the batch printers"},
    {"core/", "tests/", "a library never includes the tests"},
    {"compute/", "tests/", "a library never includes the tests"},
    {"ui/", "tests/", "a library never includes the tests"},
    {"core/", "<CL/", "OpenCL belongs to compute"},
    {"ui/", "<CL/", "OpenCL belongs to compute"},
    {"core/", "<cblas", "BLAS belongs to compute"},
    {"ui/", "<cblas", "BLAS belongs to compute"},
};

// curses headers: allowed in this one file only.
constexpr std::string_view kCursesFile = "ui/tui/terminal.cpp";
constexpr std::string_view kCursesHeaders[] = {"<curses.h>", "<ncurses.h>", "<ncursesw/", "<term.h>", "<ncurses/"};

// The rule an include breaks, or none. `file` is relative to the source root; `header` is as written,
// with its brackets or quotes.
std::optional<std::string> broken_rule(std::string_view file, std::string_view header) {
  const bool angle = header.front() == '<';
  const std::string_view bare = header.substr(1, header.size() - 2);
  for (const IncludeRule& rule : kRules) {
    if (!file.starts_with(rule.from)) continue;
    const bool rule_is_angle = rule.forbidden.front() == '<';
    if (rule_is_angle ? (angle && header.starts_with(rule.forbidden)) : (!angle && bare.starts_with(rule.forbidden)))
      return std::string(rule.why);
  }
  if (angle && file != kCursesFile) {
    for (std::string_view curses : kCursesHeaders)
      if (header.starts_with(curses))
        return std::string("curses is included by ") + std::string(kCursesFile) + " alone";
  }
  return std::nullopt;
}

struct Finding {
  std::string where;
  std::string why;
};

std::vector<Finding> scan_tree(const fs::path& root) {
  static const std::regex include_line(R"(^\s*#\s*include\s*([<"][^>"]+[>"]))");
  std::vector<Finding> found;
  for (std::string_view top : {"core", "compute", "ui"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      std::ifstream in(entry.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        std::smatch m;
        if (!std::regex_search(line, m, include_line)) continue;
        if (auto why = broken_rule(rel, m[1].str()))
          found.push_back({rel + ":" + std::to_string(number) + " includes " + m[1].str(), *why});
      }
    }
  }
  return found;
}

TEST(Layering, RulesCatchWrongIncludes) {
  EXPECT_TRUE(broken_rule("core/model.cpp", "\"ui/tui/canvas.hpp\""));
  EXPECT_TRUE(broken_rule("core/formats/gguf.cpp", "\"compute/backend.hpp\""));
  EXPECT_TRUE(broken_rule("compute/runner.cpp", "\"ui/batch/printers.hpp\""));
  EXPECT_TRUE(broken_rule("ui/batch/stats_command.cpp", "\"ui/tui/app.hpp\""));
  EXPECT_TRUE(broken_rule("ui/tui/canvas.cpp", "<ncursesw/curses.h>"));
  EXPECT_TRUE(broken_rule("core/mapped_file.cpp", "<CL/cl.h>"));
  EXPECT_TRUE(broken_rule("ui/cli.cpp", "\"tests/common/temp_dir.hpp\""));
  EXPECT_FALSE(broken_rule("ui/tui/terminal.cpp", "<curses.h>"));
  EXPECT_FALSE(broken_rule("ui/tui/session.cpp", "\"ui/batch/commands.hpp\""));
  EXPECT_FALSE(broken_rule("compute/runner.cpp", "\"core/model.hpp\""));
  EXPECT_FALSE(broken_rule("compute/opencl_loader.cpp", "<CL/cl.h>"));
}

TEST(Layering, TheTreeFollowsTheRules) {
  const std::vector<Finding> found = scan_tree(AKVIEW_SOURCE_DIR);
  for (const Finding& f : found) ADD_FAILURE() << f.where << ": " << f.why;
  EXPECT_TRUE(found.empty());
}

}   // namespace
