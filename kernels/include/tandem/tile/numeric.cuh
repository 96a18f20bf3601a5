// SPDX-License-Identifier: Apache-2.0
// tandem/tile/numeric.cuh — element arithmetic with the exact semantics the
// host references reproduce bit for bit:
//   - integers wrap (computed in the unsigned type of the same width);
//   - f16/bf16 compute in f32 and round to nearest even once;
//   - f32/f64 use IEEE add/mul; products that feed an add are explicit fma().
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cuda/std/type_traits>

namespace tandem::tile {

template <class T, class Enable = void>
struct num;

template <class T>
struct num<T, cuda::std::enable_if_t<cuda::std::is_floating_point_v<T>>> {
  using compute = T;     // type of scalars
  using accum = double;  // reductions
  __device__ __forceinline__ static compute to_compute(T x) { return x; }
  __device__ __forceinline__ static T from_compute(compute x) { return x; }
  __device__ __forceinline__ static T add(T a, T b) { return a + b; }
  __device__ __forceinline__ static T mul(T a, T b) { return a * b; }
  __device__ __forceinline__ static T scale(compute s, T x) { return s * x; }
  __device__ __forceinline__ static T fma(T a, T b, T c) {
    if constexpr (sizeof(T) == 4) {
      return __fmaf_rn(a, b, c);
    } else {
      return __fma_rn(a, b, c);
    }
  }
};

template <class T>
struct num<T, cuda::std::enable_if_t<cuda::std::is_integral_v<T>>> {
  using compute = T;
  using wide = cuda::std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>;
  using accum = cuda::std::make_unsigned_t<T>;  // wrapping sums
  __device__ __forceinline__ static compute to_compute(T x) { return x; }
  __device__ __forceinline__ static T from_compute(compute x) { return x; }
  __device__ __forceinline__ static T add(T a, T b) {
    return static_cast<T>(static_cast<wide>(a) + static_cast<wide>(b));
  }
  __device__ __forceinline__ static T mul(T a, T b) {
    return static_cast<T>(static_cast<wide>(a) * static_cast<wide>(b));
  }
  __device__ __forceinline__ static T scale(compute s, T x) { return mul(s, x); }
  __device__ __forceinline__ static T fma(T a, T b, T c) {
    return static_cast<T>(static_cast<wide>(a) * static_cast<wide>(b) + static_cast<wide>(c));
  }
};

template <>
struct num<__half> {
  using compute = float;
  using accum = float;
  __device__ __forceinline__ static compute to_compute(__half x) { return __half2float(x); }
  __device__ __forceinline__ static __half from_compute(compute x) { return __float2half_rn(x); }
  __device__ __forceinline__ static __half add(__half a, __half b) {
    return from_compute(to_compute(a) + to_compute(b));
  }
  __device__ __forceinline__ static __half mul(__half a, __half b) {
    return from_compute(to_compute(a) * to_compute(b));
  }
  __device__ __forceinline__ static __half scale(compute s, __half x) {
    return from_compute(s * to_compute(x));
  }
};

template <>
struct num<__nv_bfloat16> {
  using compute = float;
  using accum = float;
  __device__ __forceinline__ static compute to_compute(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ __forceinline__ static __nv_bfloat16 from_compute(compute x) { return __float2bfloat16_rn(x); }
  __device__ __forceinline__ static __nv_bfloat16 add(__nv_bfloat16 a, __nv_bfloat16 b) {
    return from_compute(to_compute(a) + to_compute(b));
  }
  __device__ __forceinline__ static __nv_bfloat16 mul(__nv_bfloat16 a, __nv_bfloat16 b) {
    return from_compute(to_compute(a) * to_compute(b));
  }
  __device__ __forceinline__ static __nv_bfloat16 scale(compute s, __nv_bfloat16 x) {
    return from_compute(s * to_compute(x));
  }
};

// Value conversion between element types (used to widen into accumulators).
template <class To, class From>
__device__ __forceinline__ To convert_value(From x) {
  if constexpr (cuda::std::is_same_v<From, __half> || cuda::std::is_same_v<From, __nv_bfloat16>) {
    return static_cast<To>(num<From>::to_compute(x));
  } else if constexpr (cuda::std::is_same_v<To, __half> || cuda::std::is_same_v<To, __nv_bfloat16>) {
    return num<To>::from_compute(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace tandem::tile
