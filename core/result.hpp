// Result<T>: a value or an Error (the subset of std::expected that akview needs, C++20).
#pragma once

#include <utility>
#include <variant>

#include "core/error.hpp"

namespace akview {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}       // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}   // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

// Status: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : err_(std::move(error)), failed_(true) {}   // NOLINT
  static Status ok_status() { return Status(); }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const& { return err_; }
  Error&& error() && { return std::move(err_); }

 private:
  Error err_;
  bool failed_ = false;
};

}   // namespace akview

// Propagate an error from a Result/Status expression: AKV_TRY(status_expr);
#define AKV_TRY(expr)                                \
  do {                                               \
    auto&& akv_try_r_ = (expr);                      \
    if (!akv_try_r_.ok()) return akv_try_r_.error(); \
  } while (0)
