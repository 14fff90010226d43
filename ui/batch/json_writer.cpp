// The streaming JSON writer: nlohmann::json::dump(2)'s layout, written as it goes.
#include "ui/batch/json_writer.hpp"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

namespace akview {
namespace {

// Bytes that go out as they are: printable ASCII other than the quote and the backslash. Anything
// else (controls, non-ASCII, invalid UTF-8) is escaped by nlohmann's own serializer. Eight bytes
// at a time: a word holds an unplain byte when one is below 0x20, at or above 0x7f, '"' or '\\'.
bool plain(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return ((v - kOnes) & ~v & kHigh) != 0; };
  auto unplain = [&](uint64_t w) {
    return ((w - kOnes * 0x20) & ~w & kHigh) != 0 ||   // a byte < 0x20 (the word's high bits are checked apart)
           (w & kHigh) != 0 || has_zero(w ^ (kOnes * 0x7f)) || has_zero(w ^ (kOnes * '"')) ||
           has_zero(w ^ (kOnes * '\\'));
  };
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (unplain(w)) return false;
  }
  for (; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

}   // namespace

JsonWriter::JsonWriter(std::FILE* out, MemberOrder order)
    : out_(out), order_(order), buf_(new char[kBufferBytes + kSlack]) {}

JsonWriter::JsonWriter(std::string* sink, MemberOrder order)
    : sink_(sink), order_(order), buf_(new char[kBufferBytes + kSlack]) {}

JsonWriter::~JsonWriter() { flush(); }

void JsonWriter::flush() {
  if (len_) write_out(std::string_view(buf_.get(), len_));
  len_ = 0;
}

void JsonWriter::continue_array(uint64_t elements_before) { levels_.emplace_back(']', elements_before); }

void JsonWriter::raw(std::string_view piece, uint64_t elements) {
  assert(!levels_.empty() && levels_.back().close == ']' && !after_key_);
  if (elements == 0) return;
  if (levels_.back().count == 0 && !piece.empty() && piece.front() == ',') piece.remove_prefix(1);
  put(piece);
  levels_.back().count += elements;
}

void JsonWriter::begin(char open, char close) {
  before_value();
  put(open);
  levels_.emplace_back(close);
}

void JsonWriter::end() {
  assert(!levels_.empty() && !after_key_);
  const Level level = levels_.back();
  levels_.pop_back();
  if (level.count) {
    const size_t spaces = levels_.size() * kIndent;
    reserve(1 + spaces);
    buf_[len_++] = '\n';
    indent(spaces);
  }
  put(level.close);
}

void JsonWriter::begin_object() { begin('{', '}'); }
void JsonWriter::end_object() { end(); }
void JsonWriter::begin_array() { begin('[', ']'); }
void JsonWriter::end_array() { end(); }

void JsonWriter::key(std::string_view k) {
  assert(!levels_.empty() && levels_.back().close == '}' && !after_key_);
#ifndef NDEBUG
  // nlohmann::json objects are sorted maps: the documented output has its members in key order.
  assert(order_ == MemberOrder::as_written || levels_.back().count == 0 || levels_.back().last_key < k);
  levels_.back().last_key = std::string(k);
#endif
  value(k);
  reserve(2);
  buf_[len_++] = ':';
  buf_[len_++] = ' ';
  after_key_ = true;
}

void JsonWriter::value(std::string_view s) {
  before_value();
  if (plain(s) && s.size() + 2 <= kBufferBytes) {
    reserve(s.size() + 2);
    buf_[len_++] = '"';
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
    buf_[len_++] = '"';
    return;
  }
  put(nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Numbers are written straight into the buffer (room for the longest first).
void JsonWriter::value(uint64_t v) {
  before_value();
  reserve(24);
  len_ = static_cast<size_t>(std::to_chars(buf_.get() + len_, buf_.get() + len_ + 24, v).ptr - buf_.get());
}

void JsonWriter::value(int64_t v) {
  before_value();
  reserve(24);
  len_ = static_cast<size_t>(std::to_chars(buf_.get() + len_, buf_.get() + len_ + 24, v).ptr - buf_.get());
}

void JsonWriter::value(double v) {
  if (!std::isfinite(v)) return value(nullptr);
  before_value();
  reserve(64);
  char* const start = buf_.get() + len_;
  char* at = start;
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {
    // A whole number of at most 15 digits: nlohmann writes its digits and ".0" (32.0, -0.0).
    if (std::signbit(v)) *at++ = '-';
    at = std::to_chars(at, start + 64, static_cast<uint64_t>(std::fabs(v))).ptr;
    *at++ = '.';
    *at++ = '0';
  } else {
    at = nlohmann::detail::to_chars(at, start + 64, v);
  }
  len_ += static_cast<size_t>(at - start);
}

void JsonWriter::value(bool v) {
  before_value();
  put(v ? std::string_view("true") : std::string_view("false"));
}

void JsonWriter::value(std::nullptr_t) {
  before_value();
  put("null");
}

void JsonWriter::value(const nlohmann::json& j) {
  using Kind = nlohmann::json::value_t;
  switch (j.type()) {   // one case per JSON kind; the walk mirrors nlohmann's serializer
    case Kind::object:
      begin_object();
      for (const auto& [k, v] : j.items()) {
        key(k);
        value(v);
      }
      return end_object();
    case Kind::array:
      begin_array();
      for (const auto& e : j) value(e);
      return end_array();
    case Kind::string: return value(j.get_ref<const std::string&>());
    case Kind::boolean: return value(j.get<bool>());
    case Kind::number_integer: return value(j.get<int64_t>());
    case Kind::number_unsigned: return value(j.get<uint64_t>());
    case Kind::number_float: return value(j.get<double>());
    default: return value(nullptr);   // null, and kinds akview never builds (binary, discarded)
  }
}

void JsonWriter::end_document() {
  assert(levels_.empty());
  put('\n');
  flush();
}

}   // namespace akview
