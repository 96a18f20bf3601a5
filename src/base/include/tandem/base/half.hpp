// SPDX-License-Identifier: Apache-2.0
// tandem/base/half.hpp — f16 and bf16 <-> f32 conversion on the host.
//
// Round to nearest even, as the device's __float2half_rn / __float2bfloat16_rn
// (cvt.rn) do, so host references, scenario files and the device agree bit
// for bit; NaN becomes the canonical 0x7fff as cvt.rn makes it.
#pragma once

#include <bit>
#include <cstdint>

#include "tandem/base/dtype.hpp"

namespace tandem {

[[nodiscard]] inline float to_float(half h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000U) << 16;
  const std::uint32_t exp = (h.bits >> 10) & 0x1fU;
  std::uint32_t mant = h.bits & 0x3ffU;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000U | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // subnormal: mant * 2^-24
  const float v = static_cast<float>(mant) * 0x1p-24F;
  return sign != 0 ? -v : v;
}

[[nodiscard]] inline half to_half(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000U);
  const std::uint32_t ax = x & 0x7fffffffU;
  if (ax > 0x7f800000U) return half{0x7fff};                                       // NaN
  if (ax >= 0x477ff000U) return half{static_cast<std::uint16_t>(sign | 0x7c00U)};  // >= 65520: inf
  if (ax >= 0x38800000U) {                                                         // normal half
    const std::uint32_t mant = ax & 0x7fffffU;
    std::uint32_t h = (((ax >> 23) - 112) << 10) | (mant >> 13);
    const std::uint32_t rem = mant & 0x1fffU;
    if (rem > 0x1000U || (rem == 0x1000U && (h & 1U) != 0)) ++h;  // carries into the exponent correctly
    return half{static_cast<std::uint16_t>(sign | h)};
  }
  // subnormal half (or zero): round(|f| / 2^-24) to nearest even
  const std::uint32_t e = ax >> 23;
  if (e < 102) return half{sign};  // < 2^-25: rounds to 0
  const std::uint32_t m = (ax & 0x7fffffU) | 0x800000U;
  const std::uint32_t shift = 126 - e;  // 14..24
  std::uint32_t h = m >> shift;
  const std::uint32_t rem = m & ((1U << shift) - 1U);
  const std::uint32_t halfway = 1U << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1U) != 0)) ++h;
  return half{static_cast<std::uint16_t>(sign | h)};
}

[[nodiscard]] inline float to_float(bfloat16 b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16);
}

[[nodiscard]] inline bfloat16 to_bfloat16(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffU) > 0x7f800000U) return bfloat16{0x7fff};
  const std::uint32_t r = x + 0x7fffU + ((x >> 16) & 1U);
  return bfloat16{static_cast<std::uint16_t>(r >> 16)};
}

}  // namespace tandem
