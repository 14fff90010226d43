// akview_golden_svg GOLDEN.txt OUT.svg: draws a golden dump as SVG (the cells and styles it records),
// so the README's screenshots come from the same goldens the tests compare (tests/screens/readme_screens.sh).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/screens/screen.hpp"
#include "tests/screens/svg.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: akview_golden_svg GOLDEN.txt OUT.svg\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "akview_golden_svg: cannot read %s\n", argv[1]);
    return 1;
  }
  const auto screen = akview::testing::parse_screen_dump(text.str());
  if (!screen) {
    std::fprintf(stderr, "akview_golden_svg: %s: not a screen dump (# vtshot screen WxH)\n", argv[1]);
    return 1;
  }
  if (!akview::testing::write_svg(*screen, argv[2])) {
    std::fprintf(stderr, "akview_golden_svg: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
