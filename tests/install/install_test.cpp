// The install a user runs, from the build folder: `cmake --install` puts the binary, the man page
// and the bash, zsh and fish completions where Debian keeps them; `cpack -G DEB` makes a package
// that declares its library dependencies and holds the same files; the man page renders with man
// and groff without a warning and says every command and key; each completion script loads in its
// shell and completes commands, option values and model paths. A shell or tool that is not
// installed is reported skipped.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/temp_dir.hpp"
#include "ui/cli.hpp"
#include "ui/tui/keys.hpp"

namespace akview::testing {
namespace {

namespace fs = std::filesystem;

struct Shell {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` with sh; stdout and stderr apart (stderr through a file in `scratch`).
Shell sh(const std::string& command, const std::string& scratch) {
  const std::string err_file = scratch + "/stderr.txt";
  Shell r;
  FILE* p = popen(("(" + command + ") 2>'" + err_file + "'").c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

bool have(const std::string& tool) { return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0; }

// The files an install puts under `prefix`, relative to it.
constexpr const char* kInstalled[] = {
    "bin/akview",
    "share/man/man1/akview.1.gz",
    "share/bash-completion/completions/akview",
    "share/zsh/vendor-completions/_akview",
    "share/fish/vendor_completions.d/akview.fish",
};

// One install for the whole suite: `cmake --install` into a scratch prefix, and the package
// unpacked into a scratch root. Each test reads what it needs.
class Install : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string d = dir_->path();
    install_ = sh(fmt("'{}' --install '{}' --prefix '{}/prefix/usr'", AKVIEW_CMAKE, AKVIEW_BUILD_DIR, d), d);
    if (have("dpkg-deb")) {
      cpack_ = sh(fmt("'{}' -G DEB --config '{}/CPackConfig.cmake' -B '{}/pkg'", AKVIEW_CPACK, AKVIEW_BUILD_DIR, d), d);
      for (const auto& e : fs::directory_iterator(d + "/pkg"))
        if (e.path().extension() == ".deb") deb_ = e.path().string();
      if (!deb_.empty()) unpack_ = sh(fmt("dpkg-deb -x '{}' '{}/root'", deb_, d), d);
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // A tiny std::format for these command lines: each {} takes the next argument.
  template <typename... Args>
  static std::string fmt(std::string pattern, const Args&... args) {
    for (const std::string& a : {std::string(args)...}) pattern.replace(pattern.find("{}"), 2, a);
    return pattern;
  }
  static std::string scratch() { return dir_->path(); }
  static std::string prefix() { return dir_->path() + "/prefix/usr"; }
  static std::string root() { return dir_->path() + "/root/usr"; }

  static inline TempDir* dir_ = nullptr;
  static inline Shell install_, cpack_, unpack_;
  static inline std::string deb_;
};

TEST_F(Install, CmakeInstallPutsEachFileWhereDebianKeepsIt) {
  ASSERT_EQ(install_.exit_code, 0) << install_.out << install_.err;
  for (const char* file : kInstalled) EXPECT_TRUE(fs::is_regular_file(prefix() + "/" + file)) << file;
  const Shell v = sh("'" + prefix() + "/bin/akview' --version", scratch());
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("akview ", 0), 0u) << v.out;
}

TEST_F(Install, DebPackageDeclaresItsDependenciesAndHoldsTheSameFiles) {
  if (!have("dpkg-deb")) GTEST_SKIP() << "dpkg-deb is not installed";
  ASSERT_EQ(cpack_.exit_code, 0) << cpack_.out << cpack_.err;
  ASSERT_FALSE(deb_.empty()) << cpack_.out;
  const Shell fields = sh("dpkg-deb -f '" + deb_ + "' Package Depends Recommends", scratch());
  ASSERT_EQ(fields.exit_code, 0) << fields.err;
  EXPECT_NE(fields.out.find("Package: akview"), std::string::npos) << fields.out;
  // dpkg-shlibdeps: the C and C++ runtimes and ncurses, each with a minimum version.
  for (const char* dep : {"libc6 (>=", "libstdc++6 (>=", "libncursesw6 (>="})
    EXPECT_NE(fields.out.find(dep), std::string::npos) << dep << "\n" << fields.out;
  EXPECT_NE(fields.out.find("Recommends: libopenblas0, ocl-icd-libopencl1"), std::string::npos) << fields.out;
  ASSERT_EQ(unpack_.exit_code, 0) << unpack_.err;
  for (const char* file : kInstalled) EXPECT_TRUE(fs::is_regular_file(root() + "/" + file)) << file;
  const Shell v = sh("'" + root() + "/bin/akview' -V", scratch());
  EXPECT_EQ(v.exit_code, 0) << v.err;
}

// The man page of the package: `man -l` and groff with every warning on print nothing on stderr,
// and the rendered text holds every command and every key binding's help.
TEST_F(Install, ManPageRendersWithoutWarningsAndSaysEveryCommandAndKey) {
  ASSERT_EQ(install_.exit_code, 0) << install_.err;
  const std::string page = prefix() + "/share/man/man1/akview.1.gz";
  if (!have("groff")) GTEST_SKIP() << "groff is not installed (groff-base)";
  // UTF-8 and ASCII output (man in a C locale; the arrow keys fall back to Up and Down there).
  for (const char* device : {"utf8", "ascii"}) {
    const Shell groff = sh("zcat '" + page + "' | groff -man -T" + device + " -ww -z", scratch());
    EXPECT_EQ(groff.exit_code, 0);
    EXPECT_EQ(groff.err, "") << "groff warnings for -T" << device;
  }
  if (!have("man")) GTEST_SKIP() << "man is not installed (man-db)";
  // man as a user runs it, its formatter's warnings kept (man-db drops them by default).
  const Shell ascii = sh("LC_ALL=C MAN_KEEP_STDERR=1 MANWIDTH=100 man -l '" + page + "'", scratch());
  EXPECT_EQ(ascii.exit_code, 0);
  EXPECT_EQ(ascii.err, "") << "man warnings in the C locale";
  // Wide lines: no hyphenation or wrapping between the words looked for below.
  const Shell man = sh("LC_ALL=C.UTF-8 MAN_KEEP_STDERR=1 MANWIDTH=1000 man --no-hyphenation --no-justification -l '" +
                           page + "' | col -b",
                       scratch());
  ASSERT_EQ(man.exit_code, 0) << man.err;
  EXPECT_EQ(man.err, "");
  for (const char* text : {"akview - inspect and run ML weight files", "akview [OPTIONS] [PATH]", "interactive view",
                           "-V, --version", "130"})
    EXPECT_NE(man.out.find(text), std::string::npos) << text << "\n" << man.out;
  std::string backends;   // auto|opencl|blas|cpu|reference: the backend table's names
  for (const std::string& word : backend_choices()) backends += (backends.empty() ? "" : "|") + word;
  EXPECT_NE(man.out.find("--backend " + backends), std::string::npos) << backends << "\n" << man.out;
  for (const char* command : {"info", "tensors", "meta", "check", "dump", "groups", "explain", "layout", "stats", "map",
                              "diff", "run", "devices"})
    EXPECT_NE(man.out.find(std::string("akview ") + command + " "), std::string::npos) << command;
  for (const tui::KeyBinding& b : tui::key_table()) {
    EXPECT_NE(man.out.find(std::string(b.help)), std::string::npos) << b.help;
    for (int32_t k : b.keys) EXPECT_NE(man.out.find(tui::key_label(k)), std::string::npos) << tui::key_label(k);
  }
}

// A folder for the completions to complete in: a weight file, another file and a sub-folder.
std::string completion_fixture(const std::string& scratch) {
  const std::string d = scratch + "/models";
  fs::create_directories(d + "/llama-st");
  std::ofstream(d + "/tiny.gguf") << "x";
  std::ofstream(d + "/notes.txt") << "x";
  return d;
}

TEST_F(Install, BashCompletionLoadsAndCompletes) {
  ASSERT_EQ(install_.exit_code, 0) << install_.err;
  if (!have("bash")) GTEST_SKIP() << "bash is not installed";
  const std::string script = prefix() + "/share/bash-completion/completions/akview";
  const std::string cwd = completion_fixture(scratch());
  // With bash-completion's helpers when installed (as a user has them), else the script alone.
  auto complete = [&](const std::string& words, bool helpers) {
    return sh("cd '" + cwd + "' && bash --norc --noprofile -c '" +
                  (helpers ? "source /usr/share/bash-completion/bash_completion; " : "") +
                  "source \"$0\" && complete -p akview && " + "COMP_WORDS=(" + words +
                  "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=\"${COMP_WORDS[*]}\"; " +
                  "COMP_POINT=${#COMP_LINE}; _akview; printf \"%s\\n\" \"${COMPREPLY[@]}\"' '" + script + "'",
              scratch());
  };
  for (bool helpers : {false, true}) {
    if (helpers && !fs::exists("/usr/share/bash-completion/bash_completion")) continue;
    SCOPED_TRACE(helpers ? "with bash-completion" : "alone");
    const Shell c = complete("akview ten", helpers);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_NE(c.out.find("complete -F _akview akview"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("\ntensors\n"), std::string::npos) << c.out;
    EXPECT_NE(complete("akview run m.gguf --backend op", helpers).out.find("\nopencl\n"), std::string::npos);
    EXPECT_NE(complete("akview tensors m.gguf --", helpers).out.find("\n--sort\n"), std::string::npos);
    // Model paths: the weight file and the folder, not the text file; nothing for a tensor name.
    const Shell paths = complete("akview info \"\"", helpers);
    EXPECT_NE(paths.out.find("tiny.gguf\n"), std::string::npos) << paths.out;
    EXPECT_NE(paths.out.find("llama-st\n"), std::string::npos) << paths.out;
    EXPECT_EQ(paths.out.find("notes.txt"), std::string::npos) << paths.out;
    EXPECT_EQ(complete("akview dump tiny.gguf \"\"", helpers).out.find("tiny.gguf\n"), std::string::npos);
    // A flag takes no value: after `--json tiny.gguf` the word is the tensor, not the model again.
    EXPECT_EQ(complete("akview dump --json tiny.gguf \"\"", helpers).out.find("tiny.gguf\n"), std::string::npos);
    EXPECT_NE(complete("akview dump --rows 0:2 \"\"", helpers).out.find("tiny.gguf\n"), std::string::npos);
  }
}

TEST_F(Install, ZshCompletionLoads) {
  ASSERT_EQ(install_.exit_code, 0) << install_.err;
  if (!have("zsh")) GTEST_SKIP() << "zsh is not installed";
  const std::string dir = prefix() + "/share/zsh/vendor-completions";
  const Shell syntax = sh("zsh -n '" + dir + "/_akview'", scratch());
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  // compinit finds it on the fpath (as Debian's zsh has vendor-completions) and binds it to akview.
  const Shell bound = sh("HOME='" + scratch() +
                             "' zsh -f -c 'fpath=(\"$0\" $fpath); autoload -Uz compinit; compinit -u -D; "
                             "print -r -- $_comps[akview]; autoload +X _akview && print loaded' '" +
                             dir + "'",
                         scratch());
  EXPECT_EQ(bound.exit_code, 0) << bound.err;
  EXPECT_EQ(bound.out, "_akview\nloaded\n") << bound.err;
}

TEST_F(Install, FishCompletionLoadsAndCompletes) {
  ASSERT_EQ(install_.exit_code, 0) << install_.err;
  if (!have("fish")) GTEST_SKIP() << "fish is not installed";
  const std::string script = prefix() + "/share/fish/vendor_completions.d/akview.fish";
  auto complete = [&](const std::string& line) {
    return sh(
        "HOME='" + scratch() + "' fish --no-config -c 'source $argv[1]; complete -C\"" + line + "\"' '" + script + "'",
        scratch());
  };
  const Shell c = complete("akview ten");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err, "");
  EXPECT_NE(c.out.find("tensors\tthe tensor table"), std::string::npos) << c.out;
  EXPECT_NE(complete("akview run m.gguf --backend ").out.find("opencl"), std::string::npos);
  EXPECT_NE(complete("akview tensors m.gguf --s").out.find("--sort"), std::string::npos);
}

}   // namespace
}   // namespace akview::testing
