// The error table is complete and every code renders as file@offset: message.
#include <gtest/gtest.h>

#include "core/error.hpp"

namespace akview {
namespace {

TEST(Error, EveryCodeHasADistinctSlug) {
  for (int i = 0; i < static_cast<int>(ErrorCode::count_); ++i) {
    const auto& info = error_info(static_cast<ErrorCode>(i));
    EXPECT_EQ(static_cast<int>(info.code), i);
    for (int j = 0; j < i; ++j) EXPECT_STRNE(info.slug, error_info(static_cast<ErrorCode>(j)).slug);
  }
}

TEST(Error, RendersFileOffsetAndMessage) {
  auto e = make_error(ErrorCode::out_of_bounds, "model.gguf", 0x1f40, "tensor 'x': data ends past the end of the file");
  EXPECT_EQ(e.to_string(), "model.gguf@0x1f40: tensor 'x': data ends past the end of the file");
  auto n = make_error(ErrorCode::io, "dir", kNoOffset, "cannot open");
  EXPECT_EQ(n.to_string(), "dir: cannot open");
}

}   // namespace
}   // namespace akview
