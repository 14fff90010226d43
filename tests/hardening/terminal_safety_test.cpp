// Terminal safety: names, keys and values carrying ESC/CSI/OSC sequences, BEL, C1 bytes
// (raw 0x9b and U+009B), NUL, DEL, bidi overrides, zero-width characters and CJK characters.
// Text output must carry no control byte, no C1 code point and no invisible/bidi code point (they are
// escaped as \xNN and \u{...}), while CJK passes through; JSON must stay valid and exact (invalid
// bytes replaced by U+FFFD, everything else as it was).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_process.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "ui/batch/printers.hpp"

namespace akview::testing {
namespace {

using namespace std::string_literals;

const std::vector<std::string> kHostileNames = {
    "blk.0.csi\x1b[31mred\x1b[0m.weight"s,
    "blk.0.osc\x1b]0;pwned\x07title.weight"s,
    "blk.0.c1raw\x9b"
    "2J.weight"s,   // 0x9b alone: CSI on 8-bit terminals, invalid UTF-8
    "blk.0.c1utf8\xc2\x9b"
    "2J.weight"s,   // U+009B encoded
    "blk.0.nul\0byte.weight"s,
    "blk.0.del\x7f.weight"s,
    "blk.0.bidi\xe2\x80\xae"
    "txt.exe.weight"s,                                                  // U+202E RIGHT-TO-LEFT OVERRIDE
    "blk.0.iso\xe2\x81\xa6x\xe2\x81\xa9.weight"s,                       // U+2066 .. U+2069 isolate
    "blk.0.zw\xe2\x80\x8bsp\xef\xbb\xbf.weight"s,                       // U+200B, U+FEFF
    "blk.0.lsep\xe2\x80\xa8.weight"s,                                   // U+2028
    "blk.0.\xe4\xb8\xad\xe6\x96\x87\xe6\x9d\x83\xe9\x87\x8d.weight"s,   // 中文权重
};
const std::string kCjk = "\xe4\xb8\xad\xe6\x96\x87\xe6\x9d\x83\xe9\x87\x8d";

const std::vector<std::pair<std::string, std::string>> kHostileMeta = {
    {"general.name",
     "evil\x1b]8;;http://x.invalid\x07link\x1b]8;;\x07 \xe2\x80\xae"
     "gnp.exe"s},
    {"hostile.key\x1b[2J\x9b"
     "H"s,
     "bell\x07 nul\0 c1\xc2\x9b"
     "31m del\x7f"s},
    {"hostile.bidi\xe2\x80\xae"
     "yek"s,
     "\xe4\xb8\xad\xe6\x96\x87 \xe2\x80\x8f rlm"s},
};

std::string write_fixture(const TempDir& dir) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama\x1b]0;x\x07\xe2\x80\xae"));
  for (const auto& [k, v] : kHostileMeta) w.set(k, gguf_string(v));
  w.set("hostile.array",
        gguf_array(kGgufString, {gguf_string("a\x1b[1m"), gguf_string("b\xe2\x80\xae"), gguf_string(kCjk)}));
  for (const auto& name : kHostileNames) w.add_tensor({name, kGgmlF32, {8, 2}});
  const std::string path = dir.file("hostile.gguf");
  EXPECT_TRUE(w.write(path));
  return path;
}

// Decodes UTF-8; false when `s` is not well-formed.
bool decode_utf8(std::string_view s, std::vector<char32_t>& out) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    char32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    out.push_back(cp);
    i += len;
  }
  return true;
}

bool is_spoofing(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

// The byte-by-byte rule for text output.
void expect_terminal_safe(const std::string& text, const std::string& what) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    ASSERT_FALSE((b < 0x20 && b != '\n') || b == 0x7f)
        << what << ": byte 0x" << std::hex << int(b) << " at " << std::dec << i;
  }
  std::vector<char32_t> cps;
  ASSERT_TRUE(decode_utf8(text, cps)) << what << ": output is not valid UTF-8";
  for (char32_t cp : cps) ASSERT_FALSE(is_spoofing(cp)) << what << ": raw U+" << std::hex << static_cast<uint32_t>(cp);
}

// What JSON must hold for a name: the same bytes, except that each invalid byte is U+FFFD.
std::string json_expected(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    std::vector<char32_t> one;
    size_t len = 1;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + len <= s.size() && decode_utf8(s.substr(i, len), one) && (c < 0x80 || c >= 0xc2)) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

TEST(EscapeForTerminal, EscapesControlsInvalidBytesAndInvisiblesKeepsWideCharacters) {
  EXPECT_EQ(escape_for_terminal("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(escape_for_terminal("\x07\x7f"), "\\x07\\x7f");
  EXPECT_EQ(escape_for_terminal("nul\0x"s), "nul\\x00x");
  EXPECT_EQ(escape_for_terminal("\x9b"), "\\x9b");
  EXPECT_EQ(escape_for_terminal("\xc2\x9b"), "\\xc2\\x9b");   // U+009B: both bytes
  EXPECT_EQ(escape_for_terminal("\xc2\xa0"), "\xc2\xa0");     // U+00A0 is printable
  EXPECT_EQ(escape_for_terminal("\xe2\x80\xae"), "\\u{202e}");
  EXPECT_EQ(escape_for_terminal("\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"),
            "\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}");
  EXPECT_EQ(escape_for_terminal("\xe2\x80\x8b\xe2\x80\x8d\xe2\x80\xa8\xe2\x80\xa9\xef\xbb\xbf"),
            "\\u{200b}\\u{200d}\\u{2028}\\u{2029}\\u{feff}");
  EXPECT_EQ(escape_for_terminal(kCjk), kCjk);
  EXPECT_EQ(escape_for_terminal("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");   // emoji (4 bytes)
  // Not well-formed UTF-8: overlong, surrogate, above U+10FFFF, cut short.
  EXPECT_EQ(escape_for_terminal("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(escape_for_terminal("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");
  EXPECT_EQ(escape_for_terminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(escape_for_terminal("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(escape_for_terminal("ab\xe4\xb8"), "ab\\xe4\\xb8");
}

TEST(TerminalSafety, TextOutputOfHostileNamesIsEscaped) {
  const TempDir dir;
  const std::string path = write_fixture(dir);
  int commands = 0;
  for (const char* cmd : {"tensors", "meta", "info", "map", "check"}) {
    auto r = run_akview({cmd, path}, {"TERM=xterm-256color"});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << cmd << " exit " << r.exit_code << r.err;
    ASSERT_FALSE(r.out.empty() && r.err.empty()) << cmd;
    expect_terminal_safe(r.out, std::string(cmd) + " stdout");
    expect_terminal_safe(r.err, std::string(cmd) + " stderr");
    ++commands;
  }
  EXPECT_EQ(commands, 5);
  // The escapes are there, and the wide characters pass through.
  auto tensors = run_akview({"tensors", path});
  EXPECT_NE(tensors.out.find("csi\\x1b[31mred\\x1b[0m"), std::string::npos) << tensors.out;
  EXPECT_NE(tensors.out.find("osc\\x1b]0;pwned\\x07title"), std::string::npos);
  EXPECT_NE(tensors.out.find("c1raw\\x9b2J"), std::string::npos);
  EXPECT_NE(tensors.out.find("c1utf8\\xc2\\x9b2J"), std::string::npos);
  EXPECT_NE(tensors.out.find("nul\\x00byte"), std::string::npos);
  EXPECT_NE(tensors.out.find("del\\x7f."), std::string::npos);
  EXPECT_NE(tensors.out.find("bidi\\u{202e}txt.exe"), std::string::npos);
  EXPECT_NE(tensors.out.find("iso\\u{2066}x\\u{2069}"), std::string::npos);
  EXPECT_NE(tensors.out.find("zw\\u{200b}sp\\u{feff}"), std::string::npos);
  EXPECT_NE(tensors.out.find(kCjk), std::string::npos);
  auto meta = run_akview({"meta", path});
  EXPECT_NE(meta.out.find("hostile.key\\x1b[2J\\x9bH"), std::string::npos) << meta.out;
  EXPECT_NE(meta.out.find("hostile.bidi\\u{202e}yek"), std::string::npos) << meta.out;
  auto map = run_akview({"map", path});
  EXPECT_NE(map.out.find("config (llama\\x1b]0;x\\x07\\u{202e})"), std::string::npos) << map.out;
  auto info = run_akview({"info", path});
  EXPECT_NE(info.out.find("llama\\x1b]0;x\\x07\\u{202e}"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("\\u{202e}gnp.exe"), std::string::npos) << info.out;
  // One key asked for: its string value printed alone, escaped.
  auto one = run_akview({"meta", path, "general.name"});
  expect_terminal_safe(one.out, "meta general.name");
  EXPECT_NE(one.out.find("\\u{202e}gnp.exe"), std::string::npos) << one.out;
}

TEST(TerminalSafety, JsonOutputOfHostileNamesIsExact) {
  const TempDir dir;
  const std::string path = write_fixture(dir);
  auto tensors = run_akview({"tensors", path, "--json"});
  ASSERT_EQ(tensors.exit_code, 0) << tensors.err;
  auto rows = nlohmann::json::parse(tensors.out);   // throws (fails the test) when invalid
  ASSERT_EQ(rows.size(), kHostileNames.size());
  std::vector<std::string> got, want;
  for (const auto& row : rows) got.push_back(row["name"].get<std::string>());
  for (const auto& name : kHostileNames) want.push_back(json_expected(name));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);

  auto meta = run_akview({"meta", path, "--json"});
  ASSERT_EQ(meta.exit_code, 0) << meta.err;
  auto meta_rows = nlohmann::json::parse(meta.out);
  int found = 0;
  for (const auto& [key, value] : kHostileMeta) {
    for (const auto& row : meta_rows) {
      if (row["key"].get<std::string>() != json_expected(key)) continue;
      EXPECT_EQ(row["value"].get<std::string>(), json_expected(value)) << key;
      ++found;
    }
  }
  EXPECT_EQ(found, static_cast<int>(kHostileMeta.size())) << meta.out;

  for (const char* cmd : {"info", "map", "check"}) {
    auto r = run_akview({cmd, path, "--json"});
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << cmd << r.out;
  }
}

}   // namespace
}   // namespace akview::testing
