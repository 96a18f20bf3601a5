// SPDX-License-Identifier: Apache-2.0
// tandem/kernels/ctypes.hpp — dtype tags of the instance lists and the C types
// behind them, on the host and on the device.
//
// A tag is an int: static_cast<int>(DType) for a concrete element type, or
// dt::any (-1) for dtype-agnostic kernels (checksum, spin), whose views are
// passed as raw bytes. Host code sees the storage wrappers of dtype.hpp
// (tandem::half, tandem::bfloat16), device code the CUDA types of the same
// size and layout (__half, __nv_bfloat16).
//
//   ctype_t<dt::f32>   element type              float
//   scalar_t<dt::f16>  type of value-like scalars float (the compute type)
#pragma once

#include <cstdint>

#include "tandem/dtype.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace tandem::kernels {

namespace dt {
inline constexpr int any = -1;
#define TANDEM_DT_TAG(name) inline constexpr int name = static_cast<int>(::tandem::DType::name)
TANDEM_DT_TAG(f32);
TANDEM_DT_TAG(f64);
TANDEM_DT_TAG(f16);
TANDEM_DT_TAG(bf16);
TANDEM_DT_TAG(i8);
TANDEM_DT_TAG(i32);
TANDEM_DT_TAG(i64);
TANDEM_DT_TAG(u8);
TANDEM_DT_TAG(u32);
TANDEM_DT_TAG(u64);
#undef TANDEM_DT_TAG
}  // namespace dt

template <int DT>
struct ctype;  // element type
template <>
struct ctype<dt::f32> {
  using type = float;
};
template <>
struct ctype<dt::f64> {
  using type = double;
};
template <>
struct ctype<dt::i8> {
  using type = std::int8_t;
};
template <>
struct ctype<dt::i32> {
  using type = std::int32_t;
};
template <>
struct ctype<dt::i64> {
  using type = std::int64_t;
};
template <>
struct ctype<dt::u8> {
  using type = std::uint8_t;
};
template <>
struct ctype<dt::u32> {
  using type = std::uint32_t;
};
template <>
struct ctype<dt::u64> {
  using type = std::uint64_t;
};
template <>
struct ctype<dt::any> {
  using type = std::uint8_t;
};  // raw bytes
#if defined(__CUDACC__)
template <>
struct ctype<dt::f16> {
  using type = __half;
};
template <>
struct ctype<dt::bf16> {
  using type = __nv_bfloat16;
};
#else
template <>
struct ctype<dt::f16> {
  using type = ::tandem::half;
};
template <>
struct ctype<dt::bf16> {
  using type = ::tandem::bfloat16;
};
#endif
template <int DT>
using ctype_t = typename ctype<DT>::type;

// The C type (and DType) of value-like scalar parameters (fill's value, axpy's
// a, ...): the element type itself, except 16-bit floats, which take an f32
// (their compute type).
[[nodiscard]] constexpr DType scalar_dtype(int tag) noexcept {
  const auto d = static_cast<DType>(tag);
  return (d == DType::f16 || d == DType::bf16) ? DType::f32 : d;
}
template <int DT>
struct scalar_type {
  using type = ctype_t<DT>;
};
template <>
struct scalar_type<dt::f16> {
  using type = float;
};
template <>
struct scalar_type<dt::bf16> {
  using type = float;
};
template <int DT>
using scalar_t = typename scalar_type<DT>::type;

static_assert(sizeof(ctype_t<dt::f16>) == 2 && sizeof(ctype_t<dt::bf16>) == 2);

}  // namespace tandem::kernels
