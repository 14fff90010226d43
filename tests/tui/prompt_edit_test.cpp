// The prompt line's editing (ui/tui/prompt_edit.cpp), the part of key input akview handles itself.
// The cases the tui_input fuzz target's invariants guard: code points that are not text (C1
// controls, UTF-16 surrogates, values past U+10FFFF, the named keys) never reach the text, which
// the shell used to take in as invalid UTF-8 (a surrogate appended as 3 bytes ED A0 80) or as C1.
#include <gtest/gtest.h>

#include <string>

#include "ui/tui/keys.hpp"
#include "ui/tui/prompt_edit.hpp"

namespace akview::tui {
namespace {

TEST(PromptEdit, TypesTextAndErasesWholeCharacters) {
  std::string text;
  for (int32_t k : {int32_t{'a'}, int32_t{0xe9}, int32_t{0x4e2d}, int32_t{0x1f600}})
    EXPECT_EQ(edit_prompt(text, k), PromptKey::edited);
  EXPECT_EQ(text, "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
  EXPECT_EQ(edit_prompt(text, kKeyBackspace), PromptKey::edited);
  EXPECT_EQ(text, "a\xc3\xa9\xe4\xb8\xad");
  EXPECT_EQ(edit_prompt(text, kKeyBackspace), PromptKey::edited);
  EXPECT_EQ(edit_prompt(text, kKeyBackspace), PromptKey::edited);
  EXPECT_EQ(text, "a");
  EXPECT_EQ(edit_prompt(text, kKeyBackspace), PromptKey::edited);
  EXPECT_EQ(edit_prompt(text, kKeyBackspace), PromptKey::edited);   // erasing nothing is harmless
  EXPECT_EQ(text, "");
}

TEST(PromptEdit, CodePointsThatAreNotTextAreIgnored) {
  std::string text = "x";
  for (int32_t k : {int32_t{0xd800}, int32_t{0xdfff}, int32_t{0x85}, int32_t{0x9b}, int32_t{0x110000}, int32_t{-1},
                    int32_t{1}, int32_t{0x1f}, int32_t{kKeyUp}, int32_t{kKeyF1}, int32_t{kKeyDelete}}) {
    EXPECT_EQ(edit_prompt(text, k), PromptKey::ignored) << std::hex << k;
    EXPECT_EQ(text, "x") << std::hex << k;
  }
}

TEST(PromptEdit, CtrlUClearsThePrompt) {
  std::string text = "blk.0.attn";
  EXPECT_EQ(edit_prompt(text, kKeyCtrlU), PromptKey::edited);
  EXPECT_EQ(text, "");
  EXPECT_EQ(edit_prompt(text, kKeyCtrlU), PromptKey::edited);   // on an empty prompt: still empty
  EXPECT_EQ(text, "");
}

TEST(PromptEdit, EnterAcceptsAndEscCancelsLeavingTheText) {
  std::string text = "blk.0";
  EXPECT_EQ(edit_prompt(text, kKeyEnter), PromptKey::accept);
  EXPECT_EQ(edit_prompt(text, kKeyEsc), PromptKey::cancel);
  EXPECT_EQ(text, "blk.0");
}

}   // namespace
}   // namespace akview::tui
