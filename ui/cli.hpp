// Command-line front: parses arguments, dispatches to batch commands or the TUI, returns the exit code.
#pragma once

namespace akview {

// Exit codes: 0 success; 1 bad input, unsupported, or a failed check; 2 usage error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

int run_cli(int argc, char** argv);

}  // namespace akview
