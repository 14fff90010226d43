// The streaming JSON writer: nlohmann::json::dump(2)'s layout, written as it goes.
#include "ui/batch/json_writer.hpp"

#include <cassert>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

namespace akview {
namespace {

constexpr size_t kIndent = 2;           // print_json's dump(2)
constexpr size_t kBufferBytes = 1 << 16;

// Bytes that go out as they are: printable ASCII other than the quote and the backslash. Anything
// else (controls, non-ASCII, invalid UTF-8) is escaped by nlohmann's own serializer.
bool plain(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

JsonWriter::JsonWriter(std::FILE* out) : out_(out) { buf_.reserve(kBufferBytes + 256); }

JsonWriter::~JsonWriter() { flush(); }

void JsonWriter::flush() {
  if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
  buf_.clear();
}

void JsonWriter::put(std::string_view s) {
  buf_.append(s);
  if (buf_.size() >= kBufferBytes) flush();
}

void JsonWriter::put(char c) {
  buf_.push_back(c);
  if (buf_.size() >= kBufferBytes) flush();
}

void JsonWriter::before_value() {
  if (after_key_) {   // a member's value follows its key on the same line
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  put(levels_.back().count++ == 0 ? std::string_view("\n") : std::string_view(",\n"));
  buf_.append(levels_.size() * kIndent, ' ');
}

void JsonWriter::begin(char open, char close) {
  before_value();
  put(open);
  levels_.push_back({close});
}

void JsonWriter::end() {
  assert(!levels_.empty() && !after_key_);
  const Level level = levels_.back();
  levels_.pop_back();
  if (level.count) {
    put('\n');
    buf_.append(levels_.size() * kIndent, ' ');
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
  assert(levels_.back().count == 0 || levels_.back().last_key < k);
  levels_.back().last_key = std::string(k);
#endif
  value(k);
  put(": ");
  after_key_ = true;
}

void JsonWriter::value(std::string_view s) {
  before_value();
  if (plain(s)) {
    put('"');
    put(s);
    put('"');
    return;
  }
  put(nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void JsonWriter::value(uint64_t v) {
  before_value();
  char tmp[24];
  put(std::string_view(tmp, std::to_chars(tmp, tmp + sizeof tmp, v).ptr - tmp));
}

void JsonWriter::value(int64_t v) {
  before_value();
  char tmp[24];
  put(std::string_view(tmp, std::to_chars(tmp, tmp + sizeof tmp, v).ptr - tmp));
}

void JsonWriter::value(double v) {
  if (!std::isfinite(v)) return value(nullptr);
  before_value();
  char tmp[64];
  put(std::string_view(tmp, nlohmann::detail::to_chars(tmp, tmp + sizeof tmp, v) - tmp));
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

}  // namespace akview
