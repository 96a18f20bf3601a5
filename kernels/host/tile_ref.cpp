// Host references of the Tile kernels (see host_refs.hpp). The tile shape
// does not change a Tile kernel's effect: every shape of one kernel, dtype
// and rank shares one implementation.
#include <cstdint>

#include "host_numeric.hpp"
#include "host_params.hpp"
#include "host_refs.hpp"
#include "tandem/kernels/ctypes.hpp"
#include "tandem/kernels/instances.hpp"

namespace tandem::kernels::host {

namespace {

template <class T, int R, class F>
void elementwise(const TensorParam<T, R>& shape_of, F f) {
  if constexpr (R == 1) {
    for (std::int64_t i = 0; i < shape_of.shape[0]; ++i) f(i, 0);
  } else {
    for_each_index(shape_of, f);
  }
}

template <class T, int R>
T& elem(const TensorParam<T, R>& t, std::int64_t i, std::int64_t j) {
  if constexpr (R == 1) {
    return at(t, i);
  } else {
    return at(t, i, j);
  }
}

}  // namespace

template <int DT, int R, int TM, int TN>
void tile_add(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const auto a = param<TensorParam<const T, R>>(p, 0);
  const auto b = param<TensorParam<const T, R>>(p, 1);
  const auto out = param<TensorParam<T, R>>(p, 2);
  elementwise(out, [&](std::int64_t i, std::int64_t j) {
    elem(out, i, j) = num<T>::add(elem(a, i, j), elem(b, i, j));
  });
}

template <int DT, int R, int TM, int TN>
void tile_scale(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const auto x = param<TensorParam<T, R>>(p, 0);
  const auto a = param<scalar_t<DT>>(p, 1);
  elementwise(x, [&](std::int64_t i, std::int64_t j) { elem(x, i, j) = num<T>::scale(a, elem(x, i, j)); });
}

template <int DT, int R, int TM, int TN>
void tile_copy(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const auto src = param<TensorParam<const T, R>>(p, 0);
  const auto dst = param<TensorParam<T, R>>(p, 1);
  elementwise(dst, [&](std::int64_t i, std::int64_t j) { elem(dst, i, j) = elem(src, i, j); });
}

template <int DT, int R, int TM, int TN>
void tile_transpose(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  const auto src = param<TensorParam<const T, 2>>(p, 0);
  const auto dst = param<TensorParam<T, 2>>(p, 1);
  for_each_index(dst, [&](std::int64_t i, std::int64_t j) { at(dst, i, j) = at(src, j, i); });
}

// The device accumulates in f32 (fma, k ascending); this reference in f64,
// rounded once (tolerance in the README).
template <int DT, int R, int TM, int TN>
void tile_matmul(void* const* p, const LaunchDims& /*dims*/) {
  const auto a = param<TensorParam<const float, 2>>(p, 0);
  const auto b = param<TensorParam<const float, 2>>(p, 1);
  const auto c = param<TensorParam<float, 2>>(p, 2);
  const std::int64_t k_len = a.shape[1];
  for_each_index(c, [&](std::int64_t i, std::int64_t j) {
    double s = 0.0;
    for (std::int64_t k = 0; k < k_len; ++k) s += static_cast<double>(at(a, i, k)) * static_cast<double>(at(b, k, j));
    at(c, i, j) = static_cast<float>(s);
  });
}

// Floats accumulate in f64 like the device (only the summation order
// differs); integers wrap exactly.
template <int DT, int R, int TM, int TN>
void tile_row_sum(void* const* p, const LaunchDims& /*dims*/) {
  using T = ctype_t<DT>;
  using A = typename num<T>::accum;
  const auto x = param<TensorParam<const T, 2>>(p, 0);
  const auto out = param<TensorParam<T, 1>>(p, 1);
  for (std::int64_t i = 0; i < x.shape[0]; ++i) {
    A s{};
    for (std::int64_t j = 0; j < x.shape[1]; ++j) s += static_cast<A>(at(x, i, j));
    at(out, i) = static_cast<T>(s);
  }
}

#define TANDEM_HOST_TILE_INSTANTIATE(M, K, DT, R, TM, TN) \
  template void tile_##K<dt::DT, R, TM, TN>(void* const*, const LaunchDims&);
TANDEM_TILE_MODULES(TANDEM_HOST_TILE_INSTANTIATE)
#undef TANDEM_HOST_TILE_INSTANTIATE

}  // namespace tandem::kernels::host
