// The command line's own words through the real binary: `akview help` is --help, the usage line,
// the view and `?` in the help, -V, "did you mean" for a misspelt command, and the man page and
// completion scripts printed from the same tables (--man, --completion).
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/run_process.hpp"
#include "ui/cli.hpp"
#include "ui/tui/keys.hpp"

namespace akview::testing {
namespace {

TEST(CliHelp, HelpCommandIsTheHelpOption) {
  const auto help = run_akview({"--help"});
  const auto word = run_akview({"help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(word.exit_code, 0);
  EXPECT_EQ(word.out, help.out);
  const auto sub = run_akview({"help", "tensors"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_EQ(sub.out, run_akview({"tensors", "--help"}).out);
  EXPECT_NE(sub.out.find("--sort"), std::string::npos) << sub.out;
}

TEST(CliHelp, UsageLineThenTheCommandsAndTheInteractiveView) {
  const std::string out = run_akview({"--help"}).out;
  EXPECT_NE(out.find("\nUsage: akview [OPTIONS] PATH\n"), std::string::npos) << out;
  const size_t commands = out.find("\nCommands:\n");
  ASSERT_NE(commands, std::string::npos) << out;
  EXPECT_LT(out.find("Usage:"), commands);
  for (const char* name : {"info", "tensors", "meta", "check", "dump", "groups", "explain", "layout", "stats", "map",
                           "diff", "run", "devices"})
    EXPECT_NE(out.find(std::string("\n  ") + name + " "), std::string::npos) << name << "\n" << out;
  EXPECT_NE(out.find("interactive view"), std::string::npos) << out;
  EXPECT_NE(out.find("? lists every key"), std::string::npos) << out;
  EXPECT_EQ(out.find("--man"), std::string::npos) << "a hidden option is listed";
}

TEST(CliHelp, DashCapitalVIsVersion) {
  const auto v = run_akview({"-V"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, run_akview({"--version"}).out);
  EXPECT_EQ(v.out.rfind("akview ", 0), 0u) << v.out;
}

TEST(CliHelp, MisspeltCommandSuggestsTheNearest) {
  const auto r = run_akview({"tensor", "model.gguf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'tensor' is not a command; did you mean 'tensors'?"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(run_akview({"--json", "mta"}).err.find("did you mean 'meta'?"), std::string::npos);
  EXPECT_NE(run_akview({"devics"}).err.find("did you mean 'devices'?"), std::string::npos);
  // Not near any command, or a path: the path's own error.
  const auto far = run_akview({"zzzzzz"});
  EXPECT_EQ(far.exit_code, 1);
  EXPECT_NE(far.err.find("zzzzzz: cannot open"), std::string::npos) << far.err;
  EXPECT_EQ(run_akview({"./tensor"}).err.find("did you mean"), std::string::npos);
}

TEST(CliHelp, ManPageHasEveryCommandOptionAndKey) {
  const auto r = run_akview({"--man"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(".TH AKVIEW 1"), r.out.find(".TH"));
  for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH COMMANDS", ".SH KEYS", ".SH EXIT STATUS"})
    EXPECT_NE(r.out.find(section), std::string::npos) << section;
  for (const char* line : {".SS tensors\n", ".SS run\n", ".SS devices\n", "\\fB\\-V\\fR, \\fB\\-\\-version\\fR"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line;
  std::string backends;   // auto|opencl|blas|cpu|reference: the backend table's names
  for (const std::string& word : backend_choices()) backends += (backends.empty() ? "" : "|") + word;
  const std::string backend_line = "\\fB\\-\\-backend\\fR \\fI" + backends + "\\fR";
  EXPECT_NE(r.out.find(backend_line), std::string::npos) << backend_line;
  // Every context of the key table has its subsection (the rendered text is checked by the install test).
  for (const tui::KeyBinding& b : tui::key_table())
    EXPECT_NE(r.out.find(".SS " + std::string(tui::context_title(b.context))), std::string::npos)
        << tui::context_title(b.context);
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

TEST(CliHelp, CompletionScriptsForEachShell) {
  for (const char* shell : {"bash", "zsh", "fish"}) {
    const auto r = run_akview({"--completion", shell});
    EXPECT_EQ(r.exit_code, 0) << shell;
    EXPECT_NE(r.out.find("tensors"), std::string::npos) << shell;
    EXPECT_NE(r.out.find("x-quant"), std::string::npos) << shell;   // fish names it -l x-quant
  }
  EXPECT_EQ(run_akview({"--completion", "tcsh"}).exit_code, 2);
}

}   // namespace
}   // namespace akview::testing
