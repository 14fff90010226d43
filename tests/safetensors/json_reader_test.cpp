// The JSON pull parser: tokens and their offsets, exact numbers, escapes and surrogate pairs,
// UTF-8 validation, depth limit, and a syntax error for each malformed shape.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace akview {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// All tokens of `text` (base offset 100), or the error.
struct Pulled {
  std::vector<JsonToken> tokens;
  std::vector<std::string> texts;   // copies (escaped texts live in the reader's buffer)
  bool ok = true;
  Error error;
};
// With `plain`, next_plain_member is tried before each token (as the index's weight_map parse does)
// and `*plain` counts the members it read.
Pulled pull(const std::string& text, int max_depth = JsonReader::kDefaultMaxDepth, size_t* plain = nullptr) {
  Pulled p;
  JsonReader r(bytes_of(text), "t.json", 100, max_depth);
  JsonToken tok, value;
  for (;;) {
    if (plain != nullptr && r.next_plain_member(tok, value)) {
      ++*plain;
      for (const JsonToken* t : {&tok, &value}) {
        p.tokens.push_back(*t);
        p.texts.emplace_back(t->text);
      }
      continue;
    }
    if (!r.next(tok)) break;
    p.tokens.push_back(tok);
    p.texts.emplace_back(tok.text);
    if (tok.kind == JsonKind::end) return p;
  }
  p.ok = false;
  p.error = r.error();
  return p;
}

TEST(JsonReader, TokensCarryKindsAndAbsoluteOffsets) {
  const auto p = pull(R"( {"a": [1, true, null], "b": "x"} )");
  ASSERT_TRUE(p.ok) << p.error.to_string();
  const std::vector<JsonKind> kinds = {JsonKind::object_begin, JsonKind::key,     JsonKind::array_begin,
                                       JsonKind::number,       JsonKind::boolean, JsonKind::null,
                                       JsonKind::array_end,    JsonKind::key,     JsonKind::string,
                                       JsonKind::object_end,   JsonKind::end};
  ASSERT_EQ(p.tokens.size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(p.tokens[i].kind, kinds[i]) << i;
  EXPECT_EQ(p.tokens[0].offset, 101u);
  EXPECT_EQ(p.tokens[1].offset, 102u);   // the key's opening quote
  EXPECT_EQ(p.texts[1], "a");
  EXPECT_EQ(p.tokens[3].offset, 108u);
  EXPECT_TRUE(p.tokens[4].boolean);
  EXPECT_EQ(p.texts[8], "x");
  EXPECT_FALSE(p.tokens[8].escaped);
}

TEST(JsonReader, NumbersAreExactWhereIntegral) {
  const auto p = pull("[18446744073709551615, -9223372036854775808, 0, -0, 1.5e3, 18446744073709551616, 2E-2]");
  ASSERT_TRUE(p.ok) << p.error.to_string();
  EXPECT_EQ(p.tokens[1].num, JsonNumber::uint);
  EXPECT_EQ(p.tokens[1].u, UINT64_MAX);
  EXPECT_EQ(p.tokens[2].num, JsonNumber::sint);
  EXPECT_EQ(p.tokens[2].i, INT64_MIN);
  EXPECT_EQ(p.tokens[3].u, 0u);
  EXPECT_EQ(p.tokens[4].num, JsonNumber::sint);
  EXPECT_EQ(p.tokens[5].num, JsonNumber::real);
  EXPECT_DOUBLE_EQ(p.tokens[5].f, 1500.0);
  EXPECT_EQ(p.tokens[6].num, JsonNumber::real);   // beyond 64 bits
  EXPECT_DOUBLE_EQ(p.tokens[6].f, 18446744073709551616.0);
  EXPECT_DOUBLE_EQ(p.tokens[7].f, 0.02);
  EXPECT_EQ(p.texts[5], "1.5e3");
}

TEST(JsonReader, EscapesAndSurrogatePairsAreDecoded) {
  const auto p = pull(R"(["a\"b\\c\/\n\t", "caf\u00e9", "\ud83d\ude42!", "日本"])");
  ASSERT_TRUE(p.ok) << p.error.to_string();
  EXPECT_EQ(p.texts[1], "a\"b\\c/\n\t");
  EXPECT_TRUE(p.tokens[1].escaped);
  EXPECT_EQ(p.texts[2], "caf\xc3\xa9");
  EXPECT_EQ(p.texts[3], "\xf0\x9f\x99\x82!");
  EXPECT_EQ(p.texts[4], "日本");
  EXPECT_FALSE(p.tokens[4].escaped);
}

TEST(JsonReader, SkipValueSkipsWholeContainers) {
  const std::string text = R"({"skip": {"x": [1, [2, {"y": 3}]]}, "keep": 7})";
  JsonReader r(bytes_of(text), "t.json");
  JsonToken tok;
  ASSERT_TRUE(r.next(tok));
  ASSERT_TRUE(r.next(tok));
  ASSERT_TRUE(r.next(tok));
  ASSERT_EQ(tok.kind, JsonKind::object_begin);
  ASSERT_TRUE(r.skip_value(tok));
  ASSERT_TRUE(r.next(tok));
  EXPECT_EQ(tok.kind, JsonKind::key);
  EXPECT_EQ(tok.text, "keep");
  ASSERT_TRUE(r.next(tok));
  EXPECT_EQ(tok.u, 7u);
}

TEST(JsonReader, DepthLimitHolds) {
  EXPECT_TRUE(pull(std::string(64, '[') + std::string(64, ']')).ok);
  const auto deep = pull(std::string(65, '[') + std::string(65, ']'));
  ASSERT_FALSE(deep.ok);
  EXPECT_EQ(deep.error.code, ErrorCode::bad_json);
  EXPECT_EQ(deep.error.offset, 100u + 64);
  EXPECT_FALSE(pull("[[[]]]", 2).ok);
}

TEST(JsonReader, InvalidUtf8IsBadUtf8WithItsOffset) {
  for (const std::string bad :
       {"[\"ab\xff\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xe6\x97\"]"}) {
    const auto p = pull(bad);
    ASSERT_FALSE(p.ok) << bad;
    EXPECT_EQ(p.error.code, ErrorCode::bad_utf8) << bad;
    EXPECT_GE(p.error.offset, 102u);
  }
  const std::string good = "plain ascii, then \xce\xbb and \xf0\x9f\x99\x82";
  EXPECT_EQ(find_invalid_utf8(bytes_of(good)), good.size());
  EXPECT_EQ(find_invalid_utf8(bytes_of("0123456789abcdef\x80")), 16u);
}

TEST(JsonReader, SyntaxErrorsAreBadJson) {
  const std::vector<std::string> bad = {"",
                                        "{",
                                        "{\"a\" 1}",
                                        "{\"a\":1,}",
                                        "[1,]",
                                        "[01]",
                                        "[1.]",
                                        "[-]",
                                        "[1e]",
                                        "[tru]",
                                        "{1:2}",
                                        "[\"\\x\"]",
                                        "[\"\\u12\"]",
                                        "[\"\\udc00\"]",
                                        "[\"\\ud800x\"]",
                                        "[\"a\nb\"]",
                                        "{} x",
                                        std::string("{}\0", 3),
                                        "[1 2]",
                                        "\"open",
                                        "{\"a\":}"};
  for (const auto& text : bad) {
    const auto p = pull(text);
    EXPECT_FALSE(p.ok) << "accepted: " << text;
    if (!p.ok) {
      EXPECT_EQ(p.error.code, ErrorCode::bad_json) << text;
      EXPECT_EQ(p.error.file, "t.json");
      EXPECT_GE(p.error.offset, 100u);
      EXPECT_LE(p.error.offset, 100u + text.size());
    }
  }
}

TEST(JsonReader, WhitespaceAroundTheValueIsAllowed) {
  const auto p = pull("\t\n {}\r\n  ");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.tokens.back().kind, JsonKind::end);
}

// The one-step member reads what next() reads, token for token, and leaves every unusual member
// and every error to next(): same tokens, offsets, texts, and the same error at the same byte.
TEST(JsonReader, PlainMemberReadsWhatNextReads) {
  const std::vector<std::string> texts = {
      R"({"a": "x.safetensors", "b":"y", "c" :  "z"})",
      "{\n  \"weight_map\": {\n    \"l.0.w\": \"m-1\",\n\t\"l.1.w\"\r\n:\r\n\"m-2\"\n  }\n}\n",
      R"({"a": "x", "e\u00e9": "y", "q\"": "z", "b": "w\n", "c": "x"})",          // escapes: next()'s
      "{\"a\": \"x\", \"\xc3\xa9\": \"y\", \"b\": \"\xc3\xa9\", \"c\": \"x\"}",   // non-ASCII
      R"({"a": 1, "b": "x", "c": [ "y" ], "d": {"e": "f", "g": null}, "h": "i"})",
      R"({"x": ["a", "b"], "y": "z"})",
      R"({})",
      R"({"a": "x" "b": "y"})",
      R"({"a": "x", "b" "y"})",
      R"({"a": "x", "b": "y)",
      R"({"a": "x", "b": "y)"
      "\n",
      "{\"a\": \"x\", \"b\": \"y\x01\"}",
      "{\"a\": \"x\", \"b\": \"\xff\"}",
      R"({"a": "x", "b": )",
      R"({"a": "x",)",
      R"({"a": "x", "b": "y"}})",
      R"({"a": "x", "b": "y"} "c")",
      R"(["a", "b"])",
      R"("a")",
  };
  size_t plain_total = 0;
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    size_t plain = 0;
    const Pulled want = pull(text), got = pull(text, JsonReader::kDefaultMaxDepth, &plain);
    plain_total += plain;
    ASSERT_EQ(got.ok, want.ok) << (got.ok ? want.error : got.error).to_string();
    ASSERT_EQ(got.tokens.size(), want.tokens.size());
    for (size_t i = 0; i < want.tokens.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(got.tokens[i].kind, want.tokens[i].kind);
      EXPECT_EQ(got.tokens[i].offset, want.tokens[i].offset);
      EXPECT_EQ(got.tokens[i].escaped, want.tokens[i].escaped);
      if (want.tokens[i].kind == JsonKind::key || want.tokens[i].kind == JsonKind::string) {
        EXPECT_EQ(got.texts[i], want.texts[i]);   // (other tokens leave `text` as it was)
      }
    }
    if (!want.ok) {
      EXPECT_EQ(got.error.code, want.error.code);
      EXPECT_EQ(got.error.offset, want.error.offset);
      EXPECT_EQ(got.error.message, want.error.message);
    }
  }
  EXPECT_GE(plain_total, 20u);   // the one-step path did read most plain members
}

}   // namespace
}   // namespace akview
