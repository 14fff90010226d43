// Command-line front: parses arguments, dispatches to batch commands or the TUI, returns the exit code.
#pragma once

#include <string>
#include <vector>

namespace akview {

// Exit codes: 0 success; 1 bad input, unsupported, or a failed check; 2 usage error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

int run_cli(int argc, char** argv);

// The words `run --backend` takes, as --help, the man page and the completions list them: auto, then
// compute's backend table from its last row to its first (the reference last).
std::vector<std::string> backend_choices();

}   // namespace akview
