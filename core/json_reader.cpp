// The JSON pull parser: a small state machine over the input bytes. Strings are scanned eight
// bytes at a time (SWAR) for the bytes that need attention (quote, backslash, control, non-ASCII),
// so compact headers of ~100 MB parse at hundreds of MB/s without per-token allocation.
#include "core/json_reader.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace akview {
namespace {

constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighs = 0x8080808080808080ull;

inline uint64_t load8(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline uint64_t zero_bytes(uint64_t w) { return (w - kOnes) & ~w & kHighs; }
// Flags (high bit) bytes that end a fast string scan; the lowest flagged byte is always exact.
inline uint64_t special_string_bytes(uint64_t w) {
  uint64_t below_space = (w - kOnes * 0x20) & ~w & kHighs;
  return below_space | zero_bytes(w ^ (kOnes * '"')) | zero_bytes(w ^ (kOnes * '\\')) | (w & kHighs);
}

inline bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Valid second-byte range and sequence length for each UTF-8 lead byte (RFC 3629 table 3.7).
struct Utf8Lead {
  uint8_t length;   // 0: invalid lead byte
  uint8_t lo, hi;   // range of the second byte
};
constexpr std::array<Utf8Lead, 256> make_utf8_table() {
  std::array<Utf8Lead, 256> t{};
  for (int b = 0xC2; b <= 0xDF; ++b) t[b] = {2, 0x80, 0xBF};
  t[0xE0] = {3, 0xA0, 0xBF};
  for (int b = 0xE1; b <= 0xEF; ++b) t[b] = {3, 0x80, 0xBF};
  t[0xED] = {3, 0x80, 0x9F};   // excludes surrogates
  t[0xF0] = {4, 0x90, 0xBF};
  for (int b = 0xF1; b <= 0xF3; ++b) t[b] = {4, 0x80, 0xBF};
  t[0xF4] = {4, 0x80, 0x8F};   // up to U+10FFFF
  return t;
}
constexpr auto kUtf8 = make_utf8_table();

// Length of the valid UTF-8 sequence at p (lead >= 0x80), or 0 when it is malformed.
inline size_t utf8_sequence_length(const uint8_t* p, size_t avail) {
  const Utf8Lead& lead = kUtf8[p[0]];
  if (lead.length == 0 || lead.length > avail) return 0;
  if (p[1] < lead.lo || p[1] > lead.hi) return 0;
  for (size_t k = 2; k < lead.length; ++k)
    if ((p[k] & 0xC0) != 0x80) return 0;
  return lead.length;
}

inline int hex_value(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// What a byte that cannot start a value looks like, for messages.
std::string describe_byte(uint8_t c) {
  if (c >= 0x21 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02x}", c);
}

constexpr std::array<std::string_view, 11> kKindNames = {"nothing", "object", "'}'",     "array", "']'",         "key",
                                                         "string",  "number", "boolean", "null",  "end of input"};

}   // namespace

std::string_view json_kind_name(JsonKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

size_t find_invalid_utf8(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    // ASCII fast path: 32 bytes at a time (one test of four words), then 8.
    while (i + 32 <= n && ((load8(p + i) | load8(p + i + 8) | load8(p + i + 16) | load8(p + i + 24)) & kHighs) == 0)
      i += 32;
    while (i + 8 <= n && (load8(p + i) & kHighs) == 0) i += 8;
    if (i >= n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    size_t len = utf8_sequence_length(p + i, n - i);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

JsonReader::JsonReader(std::span<const uint8_t> bytes, std::string_view file, uint64_t base, int max_depth)
    : data_(bytes.data()),
      size_(bytes.size()),
      file_(file),
      base_(base),
      max_depth_(max_depth < 1 ? 1 : (max_depth > 64 ? 64 : max_depth)) {}

bool JsonReader::fail(ErrorCode code, uint64_t file_offset, std::string message) {
  if (failed_) return false;
  failed_ = true;
  error_ = Error{code, std::string(file_), file_offset, std::move(message)};
  return false;
}

bool JsonReader::syntax_error(std::string message) {
  fail(ErrorCode::bad_json, base_ + pos_, std::move(message));
  return false;
}

inline size_t JsonReader::ws_end(size_t at) const {
  // Compact headers have no whitespace: one test and out.
  while (at < size_ && data_[at] <= ' ' && is_ws(data_[at])) ++at;
  return at;
}

inline void JsonReader::skip_ws() { pos_ = ws_end(pos_); }

void JsonReader::close_container() {
  --depth_;
  state_ = depth_ == 0 ? State::done : State::after_value;
}

bool JsonReader::next(JsonToken& tok) {
  if (failed_) return false;
  skip_ws();
  switch (state_) {
    case State::value: return read_value(tok);
    case State::first_member:
      if (pos_ < size_ && data_[pos_] == '}') {
        tok.kind = JsonKind::object_end;
        tok.offset = base_ + pos_++;
        close_container();
        return true;
      }
      return read_key(tok);
    case State::first_element:
      if (pos_ < size_ && data_[pos_] == ']') {
        tok.kind = JsonKind::array_end;
        tok.offset = base_ + pos_++;
        close_container();
        return true;
      }
      return read_value(tok);
    case State::after_value: {
      const bool in_object = (object_bits_ >> (depth_ - 1)) & 1;
      if (pos_ >= size_) return syntax_error(in_object ? "unterminated object" : "unterminated array");
      const uint8_t c = data_[pos_];
      if (c == ',') {
        ++pos_;
        skip_ws();
        return in_object ? read_key(tok) : read_value(tok);
      }
      if (c == (in_object ? '}' : ']')) {
        tok.kind = in_object ? JsonKind::object_end : JsonKind::array_end;
        tok.offset = base_ + pos_++;
        close_container();
        return true;
      }
      return syntax_error(fmt::format("expected ',' or '{}' but found {}", in_object ? '}' : ']', describe_byte(c)));
    }
    case State::done:
      if (pos_ < size_)
        return syntax_error(fmt::format("trailing characters after the JSON value ({})", describe_byte(data_[pos_])));
      tok.kind = JsonKind::end;
      tok.offset = base_ + pos_;
      return true;
  }
  return false;
}

bool JsonReader::read_key(JsonToken& tok) {
  if (pos_ >= size_) return syntax_error("unterminated object");
  if (data_[pos_] != '"')
    return syntax_error(fmt::format("expected a quoted key but found {}", describe_byte(data_[pos_])));
  if (!read_string(tok)) return false;
  tok.kind = JsonKind::key;
  skip_ws();
  if (pos_ >= size_ || data_[pos_] != ':')
    return syntax_error(pos_ >= size_
                            ? "unterminated object"
                            : fmt::format("expected ':' after the key but found {}", describe_byte(data_[pos_])));
  ++pos_;
  state_ = State::value;
  return true;
}

bool JsonReader::read_value(JsonToken& tok) {
  if (pos_ >= size_) return syntax_error(depth_ == 0 ? "no JSON value (empty input)" : "unexpected end of input");
  const uint8_t c = data_[pos_];
  bool ok;
  switch (c) {
    case '{':
    case '[':
      if (depth_ >= max_depth_) return syntax_error(fmt::format("nesting deeper than {} levels", max_depth_));
      if (c == '{') object_bits_ |= uint64_t{1} << depth_;
      else object_bits_ &= ~(uint64_t{1} << depth_);
      ++depth_;
      tok.kind = c == '{' ? JsonKind::object_begin : JsonKind::array_begin;
      tok.offset = base_ + pos_++;
      state_ = c == '{' ? State::first_member : State::first_element;
      return true;
    case '"': ok = read_string(tok); break;
    case 't': ok = read_literal(tok, "true", JsonKind::boolean, true); break;
    case 'f': ok = read_literal(tok, "false", JsonKind::boolean, false); break;
    case 'n': ok = read_literal(tok, "null", JsonKind::null, false); break;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) {
        ok = read_number(tok);
        break;
      }
      if (c == '}' || c == ']')
        return syntax_error(fmt::format("expected a value but found '{}'", static_cast<char>(c)));
      return syntax_error(fmt::format("expected a value but found {}", describe_byte(c)));
  }
  if (!ok) return false;
  state_ = depth_ == 0 ? State::done : State::after_value;
  return true;
}

bool JsonReader::read_literal(JsonToken& tok, std::string_view word, JsonKind kind, bool value) {
  if (size_ - pos_ < word.size() || std::memcmp(data_ + pos_, word.data(), word.size()) != 0)
    return syntax_error(fmt::format("invalid literal (expected '{}')", word));
  tok.kind = kind;
  tok.boolean = value;
  tok.offset = base_ + pos_;
  pos_ += word.size();
  return true;
}

bool JsonReader::read_string(JsonToken& tok) {
  const size_t start = ++pos_;   // past the opening quote
  tok.offset = base_ + start - 1;
  tok.kind = JsonKind::string;
  tok.escaped = false;
  for (;;) {
    while (pos_ + 8 <= size_) {
      const uint64_t hits = special_string_bytes(load8(data_ + pos_));
      if (hits) {
        pos_ += static_cast<size_t>(__builtin_ctzll(hits)) >> 3;
        break;
      }
      pos_ += 8;
    }
    if (pos_ >= size_) {
      pos_ = start - 1;
      return syntax_error("unterminated string");
    }
    const uint8_t c = data_[pos_];
    if (c == '"') {
      tok.text = {reinterpret_cast<const char*>(data_ + start), pos_ - start};
      ++pos_;
      return true;
    }
    if (c == '\\') return read_string_slow(tok, start, pos_);
    if (c < 0x20) return syntax_error(fmt::format("control character 0x{:02x} inside a string", c));
    if (c >= 0x80) {
      if (!read_utf8_sequence()) return false;
    } else {
      ++pos_;   // a plain byte in the tail (fewer than 8 bytes left)
    }
  }
}

inline bool JsonReader::plain_string_end(size_t from, size_t& end) const {
  size_t at = from;
  for (;;) {
    if (at + 8 <= size_) {
      const uint64_t hits = special_string_bytes(load8(data_ + at));
      if (!hits) {
        at += 8;
        continue;
      }
      at += static_cast<size_t>(__builtin_ctzll(hits)) >> 3;
    } else {
      while (at < size_ && data_[at] >= 0x20 && data_[at] < 0x80 && data_[at] != '"' && data_[at] != '\\') ++at;
      if (at >= size_) return false;
    }
    end = at;
    return data_[at] == '"';
  }
}

bool JsonReader::next_plain_member(JsonToken& key, JsonToken& value) {
  if (failed_ || depth_ == 0 || !((object_bits_ >> (depth_ - 1)) & 1)) return false;
  size_t at = ws_end(pos_);
  if (state_ == State::after_value) {
    if (at >= size_ || data_[at] != ',') return false;
    at = ws_end(at + 1);
  } else if (state_ != State::first_member) {
    return false;
  }
  const size_t key_at = at;
  size_t key_end, value_end;
  if (at >= size_ || data_[at] != '"' || !plain_string_end(at + 1, key_end)) return false;
  at = ws_end(key_end + 1);
  if (at >= size_ || data_[at] != ':') return false;
  at = ws_end(at + 1);
  const size_t value_at = at;
  if (at >= size_ || data_[at] != '"' || !plain_string_end(at + 1, value_end)) return false;
  key.kind = JsonKind::key;
  key.escaped = false;
  key.offset = base_ + key_at;
  key.text = {reinterpret_cast<const char*>(data_ + key_at + 1), key_end - key_at - 1};
  value.kind = JsonKind::string;
  value.escaped = false;
  value.offset = base_ + value_at;
  value.text = {reinterpret_cast<const char*>(data_ + value_at + 1), value_end - value_at - 1};
  pos_ = value_end + 1;
  state_ = State::after_value;
  return true;
}

bool JsonReader::read_utf8_sequence() {
  const size_t len = utf8_sequence_length(data_ + pos_, size_ - pos_);
  if (len == 0) {
    fail(ErrorCode::bad_utf8, base_ + pos_, fmt::format("invalid UTF-8 byte 0x{:02x} in a string", data_[pos_]));
    return false;
  }
  pos_ += len;
  return true;
}

// Strings with escapes: copy into buffer_, unescaping (\uXXXX with surrogate pairs).
bool JsonReader::read_string_slow(JsonToken& tok, size_t start, size_t escape_at) {
  buffer_.assign(reinterpret_cast<const char*>(data_ + start), escape_at - start);
  pos_ = escape_at;
  for (;;) {
    if (pos_ >= size_) {
      pos_ = start - 1;
      return syntax_error("unterminated string");
    }
    const uint8_t c = data_[pos_];
    if (c == '"') {
      ++pos_;
      tok.text = buffer_;
      tok.escaped = true;
      return true;
    }
    if (c < 0x20) return syntax_error(fmt::format("control character 0x{:02x} inside a string", c));
    if (c >= 0x80) {
      const size_t at = pos_;
      if (!read_utf8_sequence()) return false;
      buffer_.append(reinterpret_cast<const char*>(data_ + at), pos_ - at);
      continue;
    }
    if (c != '\\') {
      buffer_.push_back(static_cast<char>(c));
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= size_) return syntax_error("unterminated escape sequence");
    const uint8_t e = data_[pos_ + 1];
    static constexpr std::string_view kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
    if (const size_t k = kFrom.find(static_cast<char>(e)); k != std::string_view::npos) {
      buffer_.push_back(kTo[k]);
      pos_ += 2;
      continue;
    }
    if (e != 'u') return syntax_error(fmt::format("invalid escape '\\{}'", describe_byte(e)));
    auto read_hex4 = [&](size_t at, uint32_t& out) {
      if (size_ - at < 4) return false;
      out = 0;
      for (size_t k = 0; k < 4; ++k) {
        const int h = hex_value(data_[at + k]);
        if (h < 0) return false;
        out = out << 4 | static_cast<uint32_t>(h);
      }
      return true;
    };
    uint32_t cp;
    if (!read_hex4(pos_ + 2, cp)) return syntax_error("\\u must be followed by four hex digits");
    size_t used = 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return syntax_error(fmt::format("lone low surrogate \\u{:04x}", cp));
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low;
      if (size_ - pos_ < 12 || data_[pos_ + 6] != '\\' || data_[pos_ + 7] != 'u' || !read_hex4(pos_ + 8, low) ||
          low < 0xDC00 || low > 0xDFFF)
        return syntax_error(fmt::format("high surrogate \\u{:04x} is not followed by a low surrogate", cp));
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      used = 12;
    }
    append_utf8(buffer_, static_cast<char32_t>(cp));
    pos_ += used;
  }
}

bool JsonReader::read_number(JsonToken& tok) {
  const size_t start = pos_;
  tok.offset = base_ + start;
  tok.kind = JsonKind::number;
  const bool negative = data_[pos_] == '-';
  if (negative) ++pos_;
  if (pos_ >= size_ || data_[pos_] < '0' || data_[pos_] > '9') return syntax_error("a number needs digits after '-'");
  uint64_t mag = 0;
  bool fits = true;
  if (data_[pos_] == '0') {
    ++pos_;
    if (pos_ < size_ && data_[pos_] >= '0' && data_[pos_] <= '9')
      return syntax_error("numbers may not have leading zeros");
  } else {
    // Up to 19 digits cannot overflow 64 bits: accumulate without checks, then check the rest.
    const size_t digits_from = pos_;
    while (pos_ < size_ && pos_ - digits_from < 19 && static_cast<uint8_t>(data_[pos_] - '0') <= 9)
      mag = mag * 10 + (data_[pos_++] - '0');
    while (pos_ < size_ && static_cast<uint8_t>(data_[pos_] - '0') <= 9) {
      const uint64_t d = data_[pos_] - '0';
      if (mag > (UINT64_MAX - d) / 10) fits = false;
      else mag = mag * 10 + d;
      ++pos_;
    }
  }
  bool integral = true;
  if (pos_ < size_ && data_[pos_] == '.') {
    integral = false;
    ++pos_;
    if (pos_ >= size_ || data_[pos_] < '0' || data_[pos_] > '9') return syntax_error("a digit must follow '.'");
    while (pos_ < size_ && data_[pos_] >= '0' && data_[pos_] <= '9') ++pos_;
  }
  if (pos_ < size_ && (data_[pos_] == 'e' || data_[pos_] == 'E')) {
    integral = false;
    ++pos_;
    if (pos_ < size_ && (data_[pos_] == '+' || data_[pos_] == '-')) ++pos_;
    if (pos_ >= size_ || data_[pos_] < '0' || data_[pos_] > '9')
      return syntax_error("a digit must follow the exponent");
    while (pos_ < size_ && data_[pos_] >= '0' && data_[pos_] <= '9') ++pos_;
  }
  const char* first = reinterpret_cast<const char*>(data_ + start);
  tok.text = {first, pos_ - start};
  if (integral && fits) {
    if (!negative) {
      tok.num = JsonNumber::uint;
      tok.u = mag;
      tok.i = mag <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(mag) : 0;
      tok.f = static_cast<double>(mag);
      return true;
    }
    if (mag <= uint64_t{1} << 63) {
      tok.num = JsonNumber::sint;
      tok.i = static_cast<int64_t>(0 - mag);
      tok.u = 0;
      tok.f = -static_cast<double>(mag);
      return true;
    }
  }
  tok.num = JsonNumber::real;
  tok.u = 0;
  tok.i = 0;
  auto [end, ec] = std::from_chars(first, first + tok.text.size(), tok.f);
  (void)end;
  if (ec == std::errc::result_out_of_range) {
    // JSON has no range limit: overflow saturates to infinity and underflow to zero, as strtod does.
    std::string copy(tok.text);
    tok.f = std::strtod(copy.c_str(), nullptr);
  }
  return true;
}

bool JsonReader::skip_value(const JsonToken& first) {
  if (failed_) return false;
  if (first.kind != JsonKind::object_begin && first.kind != JsonKind::array_begin) return true;
  const int target = depth_ - 1;
  JsonToken tok;
  while (depth_ > target)
    if (!next(tok)) return false;
  return true;
}

}   // namespace akview
