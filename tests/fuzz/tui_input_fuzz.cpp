// The TUI's input as akview handles it. ncurses decodes the terminal's bytes (escape sequences, CSI
// keys, xterm mouse reports, UTF-8) in wget_wch/getmouse, and ui/tui/terminal.cpp maps its codes
// through a table; what akview then does itself is dispatch key codes through the key table and
// edit the prompt line. Here any sequence of key codes (ASCII, the named keys, and arbitrary 32-bit
// values, as a broken terminal or locale could deliver) goes through the key lookup (the contexts in
// turn) and the prompt's editing. Invariants: the prompt text stays valid UTF-8 with no control (C0, DEL, C1)
// or surrogate; an edit changes it by one character at most; only Enter accepts and only Esc cancels;
// the text's display width is the sum of its glyphs'.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ui/tui/canvas.hpp"
#include "ui/tui/keys.hpp"
#include "ui/tui/prompt_edit.hpp"

namespace {

using namespace akview::tui;

[[noreturn]] void fail(const char* what, const std::string& text, int32_t key) {
  std::fprintf(stderr, "tui_input: %s (key 0x%x, text of %zu bytes)\n", what, static_cast<unsigned>(key), text.size());
  std::abort();
}

// Decodes strict UTF-8 (no overlong forms, surrogates or values past U+10FFFF); false when invalid.
bool decode_utf8(const std::string& s, std::vector<char32_t>& out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    char32_t c = n == 1 ? b : n == 2 ? (b & 0x1f) : n == 3 ? (b & 0x0f) : (b & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xc0) != 0x80) return false;
      c = (c << 6) | (t & 0x3f);
    }
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < kMin[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return false;
    out.push_back(c);
    i += n;
  }
  return true;
}

constexpr int32_t kNamed[] = {kKeyEnter, kKeyTab,  kKeyEsc,     kKeyBackspace, kKeyUp,
                              kKeyDown,  kKeyLeft, kKeyRight,   kKeyPageUp,    kKeyPageDown,
                              kKeyHome,  kKeyEnd,  kKeyBackTab, kKeyF1,        kKeyDelete};

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text;
  std::vector<char32_t> chars, added;   // the text's code points, kept alongside it
  constexpr Context kContexts[] = {Context::global,  Context::nav,     Context::model_list, Context::tensors,
                                   Context::detail,  Context::header,  Context::layout,     Context::groups,
                                   Context::mapping, Context::compute, Context::diff,       Context::prompt};
  // A prompt's worth of keys (the replay test feeds whole oracle files).
  constexpr size_t kMaxKeys = 256;
  size_t keys = 0;
  for (size_t i = 0; i < size && keys < kMaxKeys; ++keys) {
    // One byte: below 0x80 an ASCII key; 0x80-0xbf a named key; above, the next 4 bytes as the code.
    const uint8_t b = data[i++];
    int32_t key;
    if (b < 0x80) {
      key = b;
    } else if (b < 0xc0) {
      key = kNamed[(b - 0x80) % std::size(kNamed)];
    } else {
      uint32_t v = 0;
      const size_t n = std::min<size_t>(4, size - i);
      std::memcpy(&v, data + i, n);
      i += n;
      key = static_cast<int32_t>(v);
    }
    Action a;   // the lookup dispatch makes, in one context per key (edit_prompt looks in the prompt's)
    (void)find_binding(key, kContexts[keys % std::size(kContexts)], a);
    const std::string old = text;
    const PromptKey what = edit_prompt(text, key);
    if (what == PromptKey::edited && text.size() > old.size()) {
      // An append: the old text is kept and exactly the key's code point, well formed, follows.
      if (text.compare(0, old.size(), old) != 0) fail("an append changed the text before it", text, key);
      if (!decode_utf8(text.substr(old.size()), added) || added.size() != 1 || added[0] != static_cast<char32_t>(key))
        fail("an append is not the key's character as valid UTF-8", text, key);
      const char32_t c = added[0];
      if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) fail("a control character was typed into the prompt", text, key);
      chars.push_back(c);
    } else if (what == PromptKey::edited && key == 0x15) {
      // Ctrl-U clears the prompt.
      if (!text.empty()) fail("Ctrl-U left text in the prompt", text, key);
      chars.clear();
    } else if (what == PromptKey::edited && (text.size() < old.size() || old.empty())) {
      // An erase: exactly the last character goes (nothing, on an empty text).
      if (old.empty() ? !text.empty() : (chars.empty() || old.compare(0, text.size(), text) != 0))
        fail("an erase changed more than the last character", text, key);
      if (!old.empty()) {
        std::vector<char32_t> gone;
        if (!decode_utf8(old.substr(text.size()), gone) || gone.size() != 1 || gone[0] != chars.back())
          fail("an erase removed other than one whole character", text, key);
        chars.pop_back();
      }
    } else {
      if (text != old) fail("a key that does not edit changed the text", text, key);
      if (what == PromptKey::edited) fail("an edit left the text as it was", text, key);
      if (what == PromptKey::accept && key != kKeyEnter) fail("a key other than Enter accepted", text, key);
      if (what == PromptKey::cancel && key != kKeyEsc) fail("a key other than Esc cancelled", text, key);
      if (what == PromptKey::accept || what == PromptKey::cancel) text.clear(), chars.clear();
    }
  }
  // The whole text, as the shell hands it to the panes and draws it.
  std::vector<char32_t> all;
  if (!decode_utf8(text, all) || all != chars) fail("the prompt text is not the characters typed", text, 0);
  std::vector<Glyph> glyphs;
  to_glyphs(text, glyphs);
  int sum = 0;
  for (const Glyph& g : glyphs) sum += g.width;
  if (sum != display_width(text)) fail("display width differs from the glyphs' widths", text, 0);
  return 0;
}
