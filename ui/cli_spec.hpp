// The command line as data, read back from the CLI11 app that parses it (ui/cli.cpp): the one
// source that --help, the man page (man_page.hpp) and the shell completions (shell_completions.hpp)
// are generated from, so none of them can list a command or an option the parser does not take.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace akview {

struct CliArg {
  std::vector<std::string> flags;   // "-V", "--version"; empty for a positional
  std::string name;                 // a positional's name in capitals ("PATH"), else the value's ("VALUE")
  std::string help;
  bool positional = false;
  bool takes_value = false;   // an option with a value (flags take none)
  bool required = false;
  bool repeats = false;               // a positional taking several words (TENSOR...)
  std::vector<std::string> choices;   // a value from a fixed set: the help starts with them, "a|b|c"
  bool model_path = false;            // the value or positional is a model (completed as model paths)
};

struct CliCommand {
  std::string name;
  std::string help;
  std::vector<CliArg> args;   // positionals in order, then options
};

struct CliSpec {
  std::string program;           // "akview"
  std::string summary;           // the one-line description
  std::string usage;             // the usage lines --help prints
  std::string view_note;         // what `akview PATH` does (the interactive view, `?`)
  std::vector<CliArg> options;   // the top level's (hidden options left out)
  std::vector<CliCommand> commands;
};

// `summary`, `usage` and `view_note` are the texts ui/cli.cpp gives its help formatter.
CliSpec describe_cli(const CLI::App& app, std::string summary, std::string usage, std::string view_note);

}   // namespace akview
