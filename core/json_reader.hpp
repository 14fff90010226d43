// A strict, zero-copy JSON pull parser (RFC 8259) over a byte span: the SafeTensors header
// (FORMATS.md §1.3), shard indexes (§1.7), MLX config.json and Ollama manifests.
// Tokens carry absolute file offsets; strings without escapes are views into the input, escaped
// strings are unescaped into a buffer the reader reuses (so no heap allocation per token).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace akview {

enum class JsonKind : uint8_t {
  none,
  object_begin,
  object_end,
  array_begin,
  array_end,
  key,   // an object member name; the next token is its value
  string,
  number,
  boolean,
  null,
  end,   // the document is complete (only whitespace followed it)
};

enum class JsonNumber : uint8_t {
  uint,   // integral and fits uint64: `u`
  sint,   // integral, negative, fits int64: `i`
  real,   // anything else: `f` (integers beyond 64 bits land here too)
};

struct JsonToken {
  JsonKind kind = JsonKind::none;
  JsonNumber num = JsonNumber::uint;
  bool boolean = false;
  bool escaped = false;    // `text` lives in the reader's buffer: valid until the next string token
  uint64_t offset = 0;     // absolute file offset of the token's first byte (the quote of a string)
  std::string_view text;   // string/key contents (unescaped), or a number's source text
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
};

std::string_view json_kind_name(JsonKind kind);   // "object", "string", ... for messages

class JsonReader {
 public:
  static constexpr int kDefaultMaxDepth = 64;

  // `base` is the absolute file offset of bytes[0], so token and error offsets are file offsets.
  JsonReader(std::span<const uint8_t> bytes, std::string_view file, uint64_t base = 0,
             int max_depth = kDefaultMaxDepth);

  // Pulls the next token. Returns false on error (see error()); after the top-level value it
  // yields JsonKind::end once the rest of the input is whitespace.
  bool next(JsonToken& tok);
  // The common object member `"key": "value"` in one step, where the next token would be a key of
  // the object being read: both strings plain (printable ASCII, no escape), whitespace as JSON has
  // it. On a match the reader stands where next() twice would (key then value) and returns true;
  // on anything else (another value, an escape, a non-ASCII or control byte, the object's end,
  // truncated input) it moves nothing and returns false, so next() reads the same bytes and
  // reports the same error. For maps of 10^5-10^6 such members (a sharded index's weight_map).
  bool next_plain_member(JsonToken& key, JsonToken& value);
  // Skips the value whose first token is `first` (for a container: through its matching end).
  bool skip_value(const JsonToken& first);

  bool ok() const { return !failed_; }
  const Error& error() const { return error_; }
  int depth() const { return depth_; }
  uint64_t file_offset() const { return base_ + pos_; }   // just past the last token
  // Records an error found by the caller (schema rules) in the same sticky way; returns false,
  // so a parser can `return reader.fail(...)`.
  bool fail(ErrorCode code, uint64_t file_offset, std::string message);

 private:
  enum class State : uint8_t { value, first_member, first_element, after_value, done };

  bool read_value(JsonToken& tok);
  bool read_string(JsonToken& tok);
  bool read_string_slow(JsonToken& tok, size_t start, size_t escape_at);
  bool read_number(JsonToken& tok);
  bool read_literal(JsonToken& tok, std::string_view word, JsonKind kind, bool value);
  bool read_key(JsonToken& tok);
  // Validates one UTF-8 sequence at pos_ (lead byte >= 0x80); advances past it.
  bool read_utf8_sequence();
  // From `from` (just past an opening quote): the position of the closing quote when every byte
  // before it is plain printable ASCII, else false.
  bool plain_string_end(size_t from, size_t& end) const;
  // The first byte at or after `at` that is not JSON whitespace; skip_ws() moves pos_ there.
  size_t ws_end(size_t at) const;
  void skip_ws();
  bool syntax_error(std::string message);
  void close_container();

  const uint8_t* data_;
  size_t size_;
  std::string_view file_;
  uint64_t base_;
  size_t pos_ = 0;
  int max_depth_;
  int depth_ = 0;
  uint64_t object_bits_ = 0;   // bit d set: the container at depth d+1 is an object (depth <= 64)
  State state_ = State::value;
  bool failed_ = false;
  Error error_;
  std::string buffer_;   // unescaped strings
};

// Checks that `bytes` are well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
// Returns the index of the first bad byte, or bytes.size() when all are valid.
size_t find_invalid_utf8(std::span<const uint8_t> bytes);

}   // namespace akview
