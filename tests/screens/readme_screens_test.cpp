// The README's screenshots are drawn from goldens (tests/screens/readme_screens.sh): each PNG listed in
// assets/screens/screens.txt exists, the README shows it, and the golden it came from is unchanged
// since (its sha256 is recorded), so a screen the code no longer draws cannot stay in the README. The
// dump parser the drawing goes through reads every golden back to the same dump.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/sha256.hpp"
#include "tests/screens/golden.hpp"
#include "tests/screens/screen.hpp"

namespace akview::testing {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Shot {
  std::string name, golden, sha256;
};

std::vector<Shot> listed_shots() {
  std::vector<Shot> shots;
  std::istringstream lines(read_all(fs::path(AKVIEW_README_SCREENS) / "screens.txt"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Shot s;
    words >> s.name >> s.golden >> s.sha256;
    shots.push_back(s);
  }
  return shots;
}

TEST(ReadmeScreens, RenderedFromTheCurrentGoldens) {
  const auto shots = listed_shots();
  ASSERT_GE(shots.size(), 8u) << "assets/screens/screens.txt lists the README's screenshots";
  const std::string readme = read_all(fs::path(AKVIEW_SOURCE_DIR) / "README.md");
  std::set<std::string> names;
  for (const Shot& s : shots) {
    SCOPED_TRACE(s.name);
    EXPECT_TRUE(names.insert(s.name).second) << "listed twice";
    const std::string golden = read_all(golden_path(s.golden));
    ASSERT_FALSE(golden.empty()) << "no golden " << golden_path(s.golden);
    const std::string digest = sha256_hex({reinterpret_cast<const uint8_t*>(golden.data()), golden.size()});
    EXPECT_EQ(s.sha256, digest) << "golden " << s.golden
                                << " changed after its screenshot was drawn: run tests/screens/readme_screens.sh";
    const std::string png = read_all(fs::path(AKVIEW_README_SCREENS) / (s.name + ".png"));
    ASSERT_GE(png.size(), 8u) << "missing assets/screens/" << s.name << ".png";
    EXPECT_EQ(png.substr(1, 3), "PNG");
    EXPECT_NE(readme.find("assets/screens/" + s.name + ".png"), std::string::npos) << "the README does not show it";
  }
}

TEST(ReadmeScreens, EveryGoldenParsesBackToItsDump) {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(golden_path("x")).parent_path())) {
    if (entry.path().extension() != ".txt") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string dump = read_all(entry.path());
    const auto screen = parse_screen_dump(dump);
    ASSERT_TRUE(screen.has_value());
    EXPECT_EQ(dump_screen(*screen), dump);
    ++n;
  }
  EXPECT_GE(n, 60u);
  EXPECT_FALSE(parse_screen_dump("not a dump").has_value());
  EXPECT_FALSE(parse_screen_dump("# vtshot screen 2x1\n00| ab\n# styles\n0: 0-5 fg=1 bg=def\n").has_value());
}

}   // namespace
}   // namespace akview::testing
