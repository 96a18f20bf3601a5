// Host mirror of tandem/tile/numeric.cuh: the element arithmetic of the
// device code, reproduced bit for bit (integers wrap, f16/bf16 compute in f32
// and round to nearest even once, products feeding sums are std::fma).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tandem/dtype.hpp"

namespace tandem::kernels::host {

// --- f16 / bf16 <-> f32, round to nearest even (as __float2half_rn /
// __float2bfloat16_rn; NaN becomes the canonical 0x7fff like cvt.rn does) ---
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
  if (ax > 0x7f800000U) return half{0x7fff};                         // NaN
  if (ax >= 0x477ff000U) return half{static_cast<std::uint16_t>(sign | 0x7c00U)};  // >= 65520: inf
  if (ax >= 0x38800000U) {                                            // normal half
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

template <class T>
inline constexpr bool is_half16_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

template <class T, class Enable = void>
struct num;

template <class T>
struct num<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  using compute = T;
  using accum = double;
  static T add(T a, T b) { return a + b; }
  static T mul(T a, T b) { return a * b; }
  static T scale(compute s, T x) { return s * x; }
  static T fma(T a, T b, T c) { return std::fma(a, b, c); }
};

template <class T>
struct num<T, std::enable_if_t<std::is_integral_v<T>>> {
  using compute = T;
  using wide = std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>;
  using accum = std::make_unsigned_t<T>;
  static T add(T a, T b) { return static_cast<T>(static_cast<wide>(a) + static_cast<wide>(b)); }
  static T mul(T a, T b) { return static_cast<T>(static_cast<wide>(a) * static_cast<wide>(b)); }
  static T scale(compute s, T x) { return mul(s, x); }
  static T fma(T a, T b, T c) {
    return static_cast<T>(static_cast<wide>(a) * static_cast<wide>(b) + static_cast<wide>(c));
  }
};

template <class T>
struct num<T, std::enable_if_t<is_half16_v<T>>> {
  using compute = float;
  using accum = float;
  static float to_compute(T x) { return to_float(x); }
  static T from_compute(float x) {
    if constexpr (std::is_same_v<T, half>) {
      return to_half(x);
    } else {
      return to_bfloat16(x);
    }
  }
  static T add(T a, T b) { return from_compute(to_compute(a) + to_compute(b)); }
  static T mul(T a, T b) { return from_compute(to_compute(a) * to_compute(b)); }
  static T scale(float s, T x) { return from_compute(s * to_compute(x)); }
};

// Element conversion as tile::convert_value does it.
template <class To, class From>
[[nodiscard]] To convert_value(From x) {
  if constexpr (is_half16_v<From>) {
    return static_cast<To>(num<From>::to_compute(x));
  } else if constexpr (is_half16_v<To>) {
    return num<To>::from_compute(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace tandem::kernels::host
