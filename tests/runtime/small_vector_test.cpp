// SPDX-License-Identifier: Apache-2.0
// SmallVector (tandem/detail/small_vector.hpp): inline up to N elements,
// one heap block past that; reset() returns to inline storage.
#include "tandem/detail/small_vector.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace tandem::detail {
namespace {

TEST(SmallVector, ReserveMakesRoomForAllInOneBlockAndResetGoesBackInline) {
  SmallVector<std::uint64_t, 3> v;
  v.reserve(3);
  EXPECT_EQ(v.heap_bytes(), 0U) << "three fit inline";
  v.push_back(7);
  v.reserve(16);
  EXPECT_EQ(v.heap_bytes(), 16 * sizeof(std::uint64_t));
  for (std::uint64_t i = 1; i < 16; ++i) v.push_back(i);
  EXPECT_EQ(v.heap_bytes(), 16 * sizeof(std::uint64_t)) << "no second block for what was reserved";
  EXPECT_EQ(v[0], 7U);
  EXPECT_EQ(v[15], 15U);
  v.clear();
  EXPECT_EQ(v.heap_bytes(), 16 * sizeof(std::uint64_t)) << "clear keeps the block";
  v.reset();
  EXPECT_EQ(v.heap_bytes(), 0U);
  v.push_back(1);
  EXPECT_EQ(v.size(), 1U);
  EXPECT_EQ(v.heap_bytes(), 0U);
}

}  // namespace
}  // namespace tandem::detail
