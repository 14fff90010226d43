// akview(1): the man page in roff, generated from the command line (cli_spec.hpp) and the
// interactive view's key table (ui/tui/keys.hpp), the two tables --help and the Help pane are drawn
// from. `akview --man` prints it; the build writes it with that and installs it (CMakeLists.txt).
#pragma once

#include <string>

#include "ui/cli_spec.hpp"

namespace akview {

std::string man_page(const CliSpec& spec, const std::string& version);

}   // namespace akview
