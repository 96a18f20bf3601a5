// SPDX-License-Identifier: Apache-2.0
// Host references of the Tile kernels (see host_refs.hpp). The tile shape
// does not change a Tile kernel's effect: every shape of one kernel, dtype
// and rank shares one implementation.
#include <cstdint>

#include "host_numeric.hpp"
#include "host_params.hpp"
#include "host_refs.hpp"
#include "host_span.hpp"
#include "tandem/kernels/ctypes.hpp"
#include "tandem/kernels/instances.hpp"

namespace tandem::kernels::host {

namespace {

// f(i, j) for every element of a rank-1 (j = 0) or rank-2 tensor.
template <class S, int R, class F>
void elementwise(const S& shape_of, F f) {
  const std::int64_t cols = R == 1 ? 1 : shape_of.shape(1);
  for (std::int64_t i = 0; i < shape_of.shape(0); ++i) {
    for (std::int64_t j = 0; j < cols; ++j) f(i, j);
  }
}

}  // namespace

template <int DT, int R, int TM, int TN>
void tile_add(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const TensorSpan<const T, R> a(p, 0);
  const TensorSpan<const T, R> b(p, 1);
  const TensorSpan<T, R> out(p, 2);
  elementwise<TensorSpan<T, R>, R>(
      out, [&](std::int64_t i, std::int64_t j) { out.set(i, j, num<T>::add(a.get(i, j), b.get(i, j))); });
}

template <int DT, int R, int TM, int TN>
void tile_scale(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const TensorSpan<T, R> x(p, 0);
  const auto a = param<scalar_t<DT>>(p, 1);
  elementwise<TensorSpan<T, R>, R>(
      x, [&](std::int64_t i, std::int64_t j) { x.set(i, j, num<T>::scale(a, x.get(i, j))); });
}

template <int DT, int R, int TM, int TN>
void tile_copy(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const TensorSpan<const T, R> src(p, 0);
  const TensorSpan<T, R> dst(p, 1);
  elementwise<TensorSpan<T, R>, R>(dst,
                                   [&](std::int64_t i, std::int64_t j) { dst.set(i, j, src.get(i, j)); });
}

template <int DT, int R, int TM, int TN>
void tile_transpose(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const TensorSpan<const T, 2> src(p, 0);
  const TensorSpan<T, 2> dst(p, 1);
  elementwise<TensorSpan<T, 2>, 2>(dst,
                                   [&](std::int64_t i, std::int64_t j) { dst.set(i, j, src.get(j, i)); });
}

// The device accumulates in f32 (fma, k ascending); this reference in f64,
// rounded once (tolerance in the README).
template <int DT, int R, int TM, int TN>
void tile_matmul(void* const* p, const LaunchDims& /*dims*/) {
  const TensorSpan<const float, 2> a(p, 0);
  const TensorSpan<const float, 2> b(p, 1);
  const TensorSpan<float, 2> c(p, 2);
  const std::int64_t k_len = a.shape(1);
  elementwise<TensorSpan<float, 2>, 2>(c, [&](std::int64_t i, std::int64_t j) {
    double s = 0.0;
    for (std::int64_t k = 0; k < k_len; ++k)
      s += static_cast<double>(a.get(i, k)) * static_cast<double>(b.get(k, j));
    c.set(i, j, static_cast<float>(s));
  });
}

// Floats accumulate in f64 like the device (only the summation order
// differs); integers wrap exactly.
template <int DT, int R, int TM, int TN>
void tile_row_sum(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  using A = typename num<T>::accum;
  const TensorSpan<const T, 2> x(p, 0);
  const TensorSpan<T, 1> out(p, 1);
  for (std::int64_t i = 0; i < x.shape(0); ++i) {
    A s{};
    for (std::int64_t j = 0; j < x.shape(1); ++j) s += static_cast<A>(x.get(i, j));
    out.set(i, 0, static_cast<T>(s));
  }
}

#define TANDEM_HOST_TILE_INSTANTIATE(M, K, DT, R, TM, TN) \
  template void tile_##K<dt::DT, R, TM, TN>(void* const*, const LaunchDims&);
TANDEM_TILE_MODULES(TANDEM_HOST_TILE_INSTANTIATE)
#undef TANDEM_HOST_TILE_INSTANTIATE

}  // namespace tandem::kernels::host
