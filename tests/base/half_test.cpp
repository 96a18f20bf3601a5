// SPDX-License-Identifier: Apache-2.0
// f16 / bf16 <-> f32: round to nearest even, exact round trips.
#include "tandem/base/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tandem {
namespace {

TEST(Half, KnownValuesRoundToNearestEven) {
  EXPECT_EQ(to_half(1.0F).bits, 0x3C00);
  EXPECT_EQ(to_half(-2.0F).bits, 0xC000);
  EXPECT_EQ(to_half(65504.0F).bits, 0x7BFF);               // largest finite
  EXPECT_EQ(to_half(65520.0F).bits, 0x7C00);               // the tie at the top rounds to inf
  EXPECT_EQ(to_half(std::ldexp(1.0F, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(to_half(std::ldexp(1.0F, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(to_half(std::ldexp(1.0F, -25)).bits, 0x0000);  // tie -> even (0)
  EXPECT_EQ(to_half(std::ldexp(3.0F, -25)).bits, 0x0002);  // tie -> even (2)
  EXPECT_EQ(to_half(std::numeric_limits<float>::quiet_NaN()).bits, 0x7FFF);
  EXPECT_EQ(to_float(half{0x3555}), 0x1.554p-2F);
}

TEST(Half, EveryFiniteHalfRoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const half h{static_cast<std::uint16_t>(b)};
    const float f = to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_half(f).bits, h.bits) << std::hex << b;
  }
}

TEST(BFloat16, KnownValuesRoundToNearestEven) {
  EXPECT_EQ(to_bfloat16(1.0F).bits, 0x3F80);
  EXPECT_EQ(to_bfloat16(-1.5F).bits, 0xBFC0);
  EXPECT_EQ(to_bfloat16(std::bit_cast<float>(0x3F808000U)).bits, 0x3F80);  // tie -> even
  EXPECT_EQ(to_bfloat16(std::bit_cast<float>(0x3F818000U)).bits, 0x3F82);  // tie -> even (up)
  EXPECT_EQ(to_bfloat16(std::numeric_limits<float>::quiet_NaN()).bits, 0x7FFF);
}

TEST(BFloat16, EveryFiniteBFloat16RoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const bfloat16 h{static_cast<std::uint16_t>(b)};
    const float f = to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_bfloat16(f).bits, h.bits) << std::hex << b;
  }
}

}  // namespace
}  // namespace tandem
