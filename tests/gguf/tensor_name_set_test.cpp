// The tensor-name set used for duplicate detection: finds duplicates before and after it grows.
#include <deque>

#include <gtest/gtest.h>

#include "core/formats/tensor_name_set.hpp"

namespace akview {
namespace {

TEST(TensorNameSet, FindsDuplicatesAcrossGrowth) {
  std::deque<std::string> storage;   // stable addresses for the views
  std::vector<Tensor> tensors;
  auto add = [&](std::string name) {
    storage.push_back(std::move(name));
    Tensor t;
    t.name = storage.back();
    tensors.push_back(t);
    return static_cast<uint32_t>(tensors.size() - 1);
  };
  for (int i = 0; i < 5000; ++i) add("blk." + std::to_string(i / 10) + ".w" + std::to_string(i % 10));
  TensorNameSet set(tensors, 4);   // starts at 16 slots and doubles as names arrive
  for (uint32_t i = 0; i < 5000; ++i) ASSERT_EQ(set.insert(tensors[i].name, i), kNone) << i;
  // Every name is found again after all the growth, under its first index.
  for (uint32_t i = 0; i < 5000; i += 7) {
    const uint32_t again = add(std::string(tensors[i].name));
    EXPECT_EQ(set.insert(tensors[again].name, again), i);
  }
  const uint32_t fresh = add("blk.0.w10");
  EXPECT_EQ(set.insert(tensors[fresh].name, fresh), kNone);
  const uint32_t empty = add("");
  EXPECT_EQ(set.insert(tensors[empty].name, empty), kNone);
  const uint32_t empty_again = add("");
  EXPECT_EQ(set.insert(tensors[empty_again].name, empty_again), empty);
}

}   // namespace
}   // namespace akview
