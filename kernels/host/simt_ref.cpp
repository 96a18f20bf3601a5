// SPDX-License-Identifier: Apache-2.0
// Host references of the SIMT kernels (see host_refs.hpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "host_numeric.hpp"
#include "host_params.hpp"
#include "host_refs.hpp"
#include "host_span.hpp"
#include "tandem/kernels/ctypes.hpp"
#include "tandem/kernels/histogram_bin.hpp"
#include "tandem/kernels/instances.hpp"

namespace tandem::kernels::host {

namespace {

template <int DT>
using T_ = ctype_t<DT>;
template <int DT>
using S_ = scalar_t<DT>;

}  // namespace

template <int DT>
void simt_fill(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  const BufferSpan<T> out(p, 0);
  const T v = convert_value<T>(param<S_<DT>>(p, 1));
  for (std::uint64_t i = 0; i < out.len(); ++i) out.set(i, v);
}

template <int DT>
void simt_iota(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  const BufferSpan<T> out(p, 0);
  const T start = param<T>(p, 1), step = param<T>(p, 2);
  for (std::uint64_t i = 0; i < out.len(); ++i) out.set(i, num<T>::fma(static_cast<T>(i), step, start));
}

template <int DT>
void simt_axpy(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  const BufferSpan<const T> x(p, 0);
  const BufferSpan<T> y(p, 1);
  const T a = param<T>(p, 2);
  const std::uint64_t n = std::min(x.len(), y.len());
  for (std::uint64_t i = 0; i < n; ++i) y.set(i, num<T>::fma(a, x.get(i), y.get(i)));
}

template <int DT>
void simt_scale(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  const BufferSpan<T> x(p, 0);
  const T a = param<T>(p, 1);
  for (std::uint64_t i = 0; i < x.len(); ++i) x.set(i, num<T>::scale(a, x.get(i)));
}

template <int DT>
void simt_copy(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  const BufferSpan<const T> src(p, 0);
  const BufferSpan<T> dst(p, 1);
  const std::uint64_t n = std::min(src.len(), dst.len());
  if (n == 0) return;
  const T* from = src.range(0, n, false);
  T* to = dst.range(0, n, true);
  if (from != nullptr && to != nullptr && from != to) std::memmove(to, from, n * sizeof(T));
}

template <int DT>
void simt_add(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  const BufferSpan<const T> a(p, 0);
  const BufferSpan<const T> b(p, 1);
  const BufferSpan<T> out(p, 2);
  const std::uint64_t n = std::min({a.len(), b.len(), out.len()});
  for (std::uint64_t i = 0; i < n; ++i) out.set(i, num<T>::add(a.get(i), b.get(i)));
}

// The device sums floats in f64 per thread and block and adds each block's
// total to acc[0] in T; this reference sums everything in f64 and rounds once
// (within the tolerance documented in the README). Integers wrap exactly.
template <int DT>
void simt_atomic_sum(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  using A = typename num<T>::accum;
  const BufferSpan<const T> x(p, 0);
  const BufferSpan<T> acc(p, 1);
  A s = static_cast<A>(acc.get(0));
  for (std::uint64_t i = 0; i < x.len(); ++i) s += static_cast<A>(x.get(i));
  acc.set(0, static_cast<T>(s));
}

template <int DT>
void simt_histogram(void* const* p, const LaunchDims& /*dims*/) {
  using T = T_<DT>;
  const BufferSpan<const T> x(p, 0);
  const BufferSpan<std::uint32_t> bins(p, 1);
  const double lo = param<double>(p, 2), hi = param<double>(p, 3);
  for (std::uint64_t i = 0; i < x.len(); ++i) {
    std::uint64_t b = 0;
    if (histogram_bin(static_cast<double>(x.get(i)), lo, hi, bins.len(), b)) bins.set(b, bins.get(b) + 1);
  }
}

template <int DT>
void simt_checksum(void* const* p, const LaunchDims& /*dims*/) {
  const BufferSpan<const std::uint8_t> x(p, 0);
  const BufferSpan<std::uint32_t> out(p, 1);
  std::uint32_t s = 0;
  for (std::uint64_t w = 0; w * 4 < x.len(); ++w) {
    std::uint32_t word = 0;
    for (std::uint64_t b = 0; b < 4 && w * 4 + b < x.len(); ++b) {
      word |= static_cast<std::uint32_t>(x.get(w * 4 + b)) << (8 * b);
    }
    s += word;
  }
  if (out.len() > 0) out.set(0, s);
}

// Emulates device time: the simulated stream is busy for `ns`.
template <int DT>
void simt_spin(void* const* p, const LaunchDims& /*dims*/) {
  const auto ns = param<std::uint64_t>(p, 1);
  if (ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
}

#define TANDEM_HOST_SIMT_INSTANTIATE(M, K, DT) \
  template void simt_##K<dt::DT>(void* const*, const LaunchDims&);
TANDEM_SIMT_MODULES(TANDEM_HOST_SIMT_INSTANTIATE)
#undef TANDEM_HOST_SIMT_INSTANTIATE

}  // namespace tandem::kernels::host
