// Completion scripts for bash, zsh and fish, generated from the command line (cli_spec.hpp): the
// commands, each one's options (a fixed set of values offered as such), and model paths (folders,
// weight files by extension, Ollama name:tag from the store). `akview --completion SHELL` prints
// one; the build writes all three and installs them (CMakeLists.txt).
#pragma once

#include <string>
#include <string_view>

#include "ui/cli_spec.hpp"

namespace akview {

// "" for a shell other than bash, zsh and fish.
std::string completion_script(const CliSpec& spec, std::string_view shell);

}   // namespace akview
