// SPDX-License-Identifier: Apache-2.0
// Host mirror of tandem/tile/numeric.cuh: the element arithmetic of the
// device code, reproduced bit for bit (integers wrap, f16/bf16 compute in f32
// and round to nearest even once, products feeding sums are std::fma).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tandem/base/dtype.hpp"
#include "tandem/base/half.hpp"

namespace tandem::kernels::host {

// f16 / bf16 <-> f32 are the base layer's (tandem/base/half.hpp): the same
// conversions the scenario files' element codec uses.
using tandem::to_bfloat16;
using tandem::to_float;
using tandem::to_half;

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
