// JsonWriter: writes one JSON document to a FILE* as it is made, value by value, through a small
// buffer, so a listing of a million tensors never holds its document (or one string per tensor).
// The bytes are those of nlohmann::json::dump(2) with invalid UTF-8 replaced (print_json): two-space
// indentation, members in the order given (callers give them in nlohmann's sorted key order, checked
// in debug builds, unless the document's own order is documented: MemberOrder::as_written, `run`'s
// {path, ref, runs, ...} whose runs stream before the summary), doubles in nlohmann's shortest
// round-trip form ("16.0"), non-finite as null.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace akview {

enum class MemberOrder : uint8_t { sorted, as_written };

class JsonWriter {
 public:
  explicit JsonWriter(std::FILE* out, MemberOrder order = MemberOrder::sorted);
  // Writes into `sink` (appended to at each flush) instead of a FILE*.
  explicit JsonWriter(std::string* sink, MemberOrder order = MemberOrder::sorted);
  ~JsonWriter();   // flushes
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The member whose value comes next (inside an object).
  void key(std::string_view k);

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(uint64_t v);
  void value(int64_t v);
  void value(uint32_t v) { value(static_cast<uint64_t>(v)); }
  void value(int32_t v) { value(static_cast<int64_t>(v)); }
  void value(uint8_t v) { value(static_cast<uint64_t>(v)); }
  void value(unsigned long long v) { value(static_cast<uint64_t>(v)); }
  void value(double v);           // null when not finite
  void value(float v) = delete;   // say which: a float widened to double prints its double digits
  void value(bool v);
  void value(std::nullptr_t);
  void value(const nlohmann::json& j);   // an embedded document, laid out at the current depth
  template <typename T>
  void value(const std::optional<T>& v) {
    if (v) value(*v);
    else value(nullptr);
  }
  template <typename T>
  void value(const std::vector<T>& v) {
    value(std::span<const T>(v));
  }
  template <typename T>
  void value(std::span<const T> v) {
    begin_array();
    for (const T& e : v) value(e);
    end_array();
  }

  // key(k) then value(v).
  template <typename T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }
  void field(std::string_view k, const char* v) {
    key(k);
    value(std::string_view(v));
  }

  // A piece of an array written by another writer: continue_array(1) there (the array's level, as
  // if an element came before, without its '['), and raw() here, which puts the piece's bytes (less
  // its leading comma when this array has no element yet) and counts its elements.
  void continue_array(uint64_t elements_before);
  void raw(std::string_view piece, uint64_t elements);

  // The newline that ends a document (print_json's), and the buffer handed to the FILE*.
  void end_document();
  void flush();

 private:
  struct Level {
    explicit Level(char closing, uint64_t elements = 0) : close(closing), count(elements) {}
    char close;
    uint64_t count = 0;
#ifndef NDEBUG
    std::string last_key;
#endif
  };
  static constexpr size_t kIndent = 2;   // print_json's dump(2)
  static constexpr size_t kBufferBytes = 1 << 16;
  static constexpr size_t kSlack = 64;   // allocated past kBufferBytes (indent)

  // Separator and indentation of the next array element or member (nothing after a key).
  void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (levels_.empty()) return;
    const size_t spaces = levels_.size() * kIndent;
    reserve(2 + spaces);
    if (levels_.back().count++) buf_[len_++] = ',';
    buf_[len_++] = '\n';
    indent(spaces);
  }
  // `spaces` blanks; up to kSlack of them as one fixed-size copy (the buffer has kSlack bytes of
  // room past kBufferBytes, so the copy may run past what is kept): a call to memset per member
  // cost as much as the rest of a tensor row.
  void indent(size_t spaces) {
    static constexpr char kBlanks[] = "                                                                ";
    static_assert(sizeof kBlanks - 1 == kSlack);
    if (spaces <= kSlack) std::memcpy(buf_.get() + len_, kBlanks, kSlack);
    else std::memset(buf_.get() + len_, ' ', spaces);
    len_ += spaces;
  }
  void begin(char open, char close);
  void end();
  // Room for `n` more bytes in the buffer (flushing it when full).
  void reserve(size_t n) {
    if (len_ + n > kBufferBytes) flush();
  }
  void put(std::string_view s) {
    reserve(s.size());
    if (s.size() > kBufferBytes) return write_out(s);
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }
  void write_out(std::string_view s) {
    if (sink_) sink_->append(s);
    else std::fwrite(s.data(), 1, s.size(), out_);
  }
  void put(char c) {
    reserve(1);
    buf_[len_++] = c;
  }

  std::FILE* out_ = nullptr;
  std::string* sink_ = nullptr;
  [[maybe_unused]] MemberOrder order_;   // checked in debug builds
  std::vector<Level> levels_;
  bool after_key_ = false;
  std::unique_ptr<char[]> buf_;
  size_t len_ = 0;
};

}   // namespace akview
