// SPDX-License-Identifier: Apache-2.0
// SIMT kernels: fill, iota, axpy, scale, copy, add. Module simt_basic.
//
// Grid-stride loops; the streaming kernels issue ILP independent loads per
// thread before their stores so that several are in flight.
#include "simt_common.cuh"

namespace {

namespace simt = ::tandem::simt;
using simt::num;
using tandem::BufferParam;

constexpr int kIlp = 4;

// out[i] = f(i) for i < n, f's loads batched kIlp deep.
template <class T, class F>
__device__ __forceinline__ void generate(T* out, std::uint64_t n, F f) {
  const std::uint64_t stride = simt::grid_threads();
  std::uint64_t i = simt::global_thread();
  for (; i + (kIlp - 1) * stride < n; i += kIlp * stride) {
    T v[kIlp];
#pragma unroll
    for (int k = 0; k < kIlp; ++k) v[k] = f(i + k * stride);
#pragma unroll
    for (int k = 0; k < kIlp; ++k) out[i + k * stride] = v[k];
  }
  for (; i < n; i += stride) out[i] = f(i);
}

template <class T, class S>
__device__ __forceinline__ T from_scalar(S s) {
  return tandem::tile::convert_value<T>(s);
}

template <class T, class S>
__device__ __forceinline__ void fill(BufferParam<T> out, S value) {
  const T v = from_scalar<T>(value);
  const std::uint64_t stride = simt::grid_threads();
  for (std::uint64_t i = simt::global_thread(); i < out.len; i += stride) out.data[i] = v;
}

// out[i] = start + i * step: fma(T(i), step, start) for floats, wrapping for
// integers.
template <class T>
__device__ __forceinline__ void iota(BufferParam<T> out, T start, T step) {
  generate(out.data, out.len, [=](std::uint64_t i) { return num<T>::fma(static_cast<T>(i), step, start); });
}

template <class T>
__device__ __forceinline__ void axpy(BufferParam<const T> x, BufferParam<T> y, T a) {
  const std::uint64_t n = min(x.len, y.len);
  generate(y.data, n, [=](std::uint64_t i) { return num<T>::fma(a, x.data[i], y.data[i]); });
}

template <class T>
__device__ __forceinline__ void scale(BufferParam<T> x, T a) {
  generate(x.data, x.len, [=](std::uint64_t i) { return num<T>::scale(a, x.data[i]); });
}

template <class T>
__device__ __forceinline__ void copy(BufferParam<const T> src, BufferParam<T> dst) {
  generate(dst.data, min(src.len, dst.len), [=](std::uint64_t i) { return src.data[i]; });
}

template <class T>
__device__ __forceinline__ void add(BufferParam<const T> a, BufferParam<const T> b, BufferParam<T> out) {
  const std::uint64_t n = min(min(a.len, b.len), out.len);
  generate(out.data, n, [=](std::uint64_t i) { return num<T>::add(a.data[i], b.data[i]); });
}

}  // namespace

// The kernel with no body (tandem/kernels/declared.hpp): a recorded launch
// of a kernel outside the catalog is replayed as this, with the original's
// declared accesses, so that only its leases are replayed. No parameters:
// the accesses are the launch's, not the kernel's.
extern "C" __global__ void tandem_declared_access() {}

#define TANDEM_SIMT_DEFINE_fill(DT) \
  TANDEM_SIMT_KERNEL(fill, DT)(TANDEM_SIMT_BUF(DT) out, TANDEM_SIMT_S(DT) value) { fill(out, value); }
#define TANDEM_SIMT_DEFINE_iota(DT)                                                                        \
  TANDEM_SIMT_KERNEL(iota, DT)(TANDEM_SIMT_BUF(DT) out, TANDEM_SIMT_S(DT) start, TANDEM_SIMT_S(DT) step) { \
    iota(out, start, step);                                                                                \
  }
#define TANDEM_SIMT_DEFINE_axpy(DT)                                                                  \
  TANDEM_SIMT_KERNEL(axpy, DT)(TANDEM_SIMT_CBUF(DT) x, TANDEM_SIMT_BUF(DT) y, TANDEM_SIMT_S(DT) a) { \
    axpy(x, y, a);                                                                                   \
  }
#define TANDEM_SIMT_DEFINE_scale(DT) \
  TANDEM_SIMT_KERNEL(scale, DT)(TANDEM_SIMT_BUF(DT) x, TANDEM_SIMT_S(DT) a) { scale(x, a); }
#define TANDEM_SIMT_DEFINE_copy(DT) \
  TANDEM_SIMT_KERNEL(copy, DT)(TANDEM_SIMT_CBUF(DT) src, TANDEM_SIMT_BUF(DT) dst) { copy(src, dst); }
#define TANDEM_SIMT_DEFINE_add(DT)                                                                       \
  TANDEM_SIMT_KERNEL(add, DT)(TANDEM_SIMT_CBUF(DT) a, TANDEM_SIMT_CBUF(DT) b, TANDEM_SIMT_BUF(DT) out) { \
    add(a, b, out);                                                                                      \
  }

TANDEM_MODULE_simt_basic(TANDEM_SIMT_DEFINE, simt_basic)
