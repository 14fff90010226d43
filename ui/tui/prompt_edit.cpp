// The prompt line's editing (prompt_edit.hpp).
#include "ui/tui/prompt_edit.hpp"

#include "ui/tui/canvas.hpp"
#include "ui/tui/keys.hpp"

namespace akview::tui {
namespace {

void erase_last_char(std::string& s) {
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xc0) == 0x80) s.pop_back();
  if (!s.empty()) s.pop_back();
}

bool typeable(int32_t k) {
  return k >= 0x20 && k < 0x110000 && k != kKeyBackspace && !(k >= 0x80 && k <= 0x9f) && !(k >= 0xd800 && k <= 0xdfff);
}

}   // namespace

PromptKey edit_prompt(std::string& text, int32_t key) {
  Action a;
  if (find_binding(key, Context::prompt, a)) {
    switch (a) {
      case Action::prompt_erase: erase_last_char(text); return PromptKey::edited;
      case Action::prompt_clear: text.clear(); return PromptKey::edited;
      case Action::prompt_accept: return PromptKey::accept;
      case Action::prompt_cancel: return PromptKey::cancel;
      default: return PromptKey::ignored;
    }
  }
  if (!typeable(key)) return PromptKey::ignored;
  append_utf8(text, static_cast<char32_t>(key));
  return PromptKey::edited;
}

}   // namespace akview::tui
