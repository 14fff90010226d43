// Golden screens: compare a Screen's dump with tests/screens/golden/<name>.txt.
//   AKVIEW_UPDATE_GOLDENS=1        (re)write the golden instead of comparing; the check passes with a note
//   AKVIEW_SCREENS_SVG_DIR=<dir>   also write <dir>/<name>.svg for every screen compared
// On a mismatch the failure shows a unified diff of the dump lines, and the actual dump and its SVG are
// written to <build>/screens-actual/<name>.txt and .svg. A missing golden fails with the update hint.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/screens/screen.hpp"

namespace akview::testing {

// A unified-style line diff ("--- expected", "+++ actual", "@@ -a,n +b,m @@" hunks with 2 lines of
// context); "" when the texts are equal.
std::string diff_lines(const std::string& expected, const std::string& actual);

// Compares dump_screen(screen) with an expected dump held in memory (no files touched).
::testing::AssertionResult screen_matches(const Screen& screen, const std::string& expected_dump);

// Compares with the golden file `name` (letters, digits, '_', '-'), as described above.
::testing::AssertionResult compare_golden(const Screen& screen, const std::string& name);

std::filesystem::path golden_path(const std::string& name);
std::filesystem::path actual_path(const std::string& name);   // <build>/screens-actual/<name>.txt

}   // namespace akview::testing
