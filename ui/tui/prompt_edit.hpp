// The prompt line's editing: what one key does to the text being typed (filter, search, offset,
// path). Keys come from the terminal as key codes (keys.hpp; ncurses decodes the escape sequences);
// this is the part of input handling that akview does itself, kept free of curses so it can be
// fuzzed (tests/fuzz/tui_input_fuzz.cpp). The text stays valid UTF-8 whatever keys arrive.
#pragma once

#include <cstdint>
#include <string>

namespace akview::tui {

enum class PromptKey { ignored, edited, accept, cancel };

// Applies `key` to `text`: Backspace removes the last character (a whole UTF-8 sequence), Ctrl-U
// all of it, Enter
// accepts, Esc cancels (per the key table's prompt context); a printable code point is appended;
// anything else (controls, surrogates, values past U+10FFFF, the named keys) is ignored.
PromptKey edit_prompt(std::string& text, int32_t key);

}   // namespace akview::tui
