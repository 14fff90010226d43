// Golden-screen comparison, update switch and line diff (STACK.md §4; goldens are reviewed as text).
#include "tests/screens/golden.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/screens/svg.hpp"

#ifndef AKVIEW_GOLDEN_DIR
#error "AKVIEW_GOLDEN_DIR must name tests/screens/golden in the source tree"
#endif
#ifndef AKVIEW_SCREENS_ACTUAL_DIR
#error "AKVIEW_SCREENS_ACTUAL_DIR must name <build>/screens-actual"
#endif

namespace akview::testing {
namespace {

constexpr int kContextLines = 2;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

std::string range(size_t start, size_t count) {
  // Unified-diff convention: a zero-length range names the line before it.
  return std::to_string(count == 0 ? start : start + 1) + "," + std::to_string(count);
}

}   // namespace

std::filesystem::path golden_path(const std::string& name) {
  return std::filesystem::path(AKVIEW_GOLDEN_DIR) / (name + ".txt");
}

std::filesystem::path actual_path(const std::string& name) {
  return std::filesystem::path(AKVIEW_SCREENS_ACTUAL_DIR) / (name + ".txt");
}

std::string diff_lines(const std::string& expected, const std::string& actual) {
  const auto a = split_lines(expected);
  const auto b = split_lines(actual);
  const size_t n = a.size(), m = b.size();
  // Longest common subsequence table (screens are a few hundred lines at most).
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  struct Op {
    char kind;   // ' ', '-', '+'
    size_t ai, bi;
  };
  std::vector<Op> ops;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ops.push_back({' ', i++, j++});
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', i++, j});   // removals before additions, as diff -u prints them
    } else {
      ops.push_back({'+', i, j++});
    }
  }
  if (std::all_of(ops.begin(), ops.end(), [](const Op& op) { return op.kind == ' '; })) return "";

  std::string out = "--- expected\n+++ actual\n";
  size_t k = 0;
  while (k < ops.size()) {
    if (ops[k].kind == ' ') {
      ++k;
      continue;
    }
    // A hunk: from kContextLines before this change to kContextLines after the last change that is
    // within 2 * kContextLines of the previous one.
    size_t begin = k >= kContextLines ? k - kContextLines : 0;
    size_t end = k;
    for (size_t t = k; t < ops.size(); ++t) {
      if (ops[t].kind != ' ') end = t;
      else if (t - end > 2 * kContextLines) break;
    }
    end = std::min(ops.size(), end + 1 + kContextLines);
    size_t a_count = 0, b_count = 0;
    for (size_t t = begin; t < end; ++t) {
      if (ops[t].kind != '+') ++a_count;
      if (ops[t].kind != '-') ++b_count;
    }
    out += "@@ -" + range(ops[begin].ai, a_count) + " +" + range(ops[begin].bi, b_count) + " @@\n";
    for (size_t t = begin; t < end; ++t) {
      const std::string& line = ops[t].kind == '+' ? b[ops[t].bi] : a[ops[t].ai];
      out += ops[t].kind + line + "\n";
    }
    k = end;
  }
  return out;
}

::testing::AssertionResult screen_matches(const Screen& screen, const std::string& expected_dump) {
  std::string diff = diff_lines(expected_dump, dump_screen(screen));
  if (diff.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "screen differs from the expected dump:\n" << diff;
}

::testing::AssertionResult compare_golden(const Screen& screen, const std::string& name) {
  const std::string actual = dump_screen(screen);
  if (const char* dir = std::getenv("AKVIEW_SCREENS_SVG_DIR"); dir && *dir)
    write_svg(screen, std::filesystem::path(dir) / (name + ".svg"));

  const auto golden = golden_path(name);
  if (env_flag("AKVIEW_UPDATE_GOLDENS")) {
    if (!write_file(golden, actual)) return ::testing::AssertionFailure() << "cannot write golden " << golden;
    std::printf("[  GOLDEN  ] wrote %s (AKVIEW_UPDATE_GOLDENS=1): review it in the diff\n", golden.c_str());
    return ::testing::AssertionSuccess();
  }

  const auto actual_file = actual_path(name);
  auto keep_actual = [&] {
    write_file(actual_file, actual);
    write_svg(screen, std::filesystem::path(actual_file).replace_extension(".svg"));
  };
  std::ifstream in(golden, std::ios::binary);
  if (!in) {
    keep_actual();
    return ::testing::AssertionFailure() << "golden screen '" << name << "' is missing: " << golden
                                         << "\n  run the test with AKVIEW_UPDATE_GOLDENS=1 to create it;"
                                         << " the actual dump is in " << actual_file << "\n"
                                         << actual;
  }
  std::ostringstream expected;
  expected << in.rdbuf();
  std::string diff = diff_lines(expected.str(), actual);
  if (diff.empty()) return ::testing::AssertionSuccess();
  keep_actual();
  return ::testing::AssertionFailure() << "screen '" << name << "' differs from " << golden << "\n"
                                       << diff << "  actual dump: " << actual_file
                                       << " (and .svg); AKVIEW_UPDATE_GOLDENS=1 rewrites the golden";
}

}   // namespace akview::testing
