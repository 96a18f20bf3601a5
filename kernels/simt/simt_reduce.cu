// SPDX-License-Identifier: Apache-2.0
// SIMT kernels: atomic_sum, histogram, checksum, spin. Module simt_reduce.
#include "simt_common.cuh"
#include "tandem/kernels/histogram_bin.hpp"

namespace {

namespace simt = ::tandem::simt;
using simt::num;
using tandem::BufferParam;

template <class T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (cuda::std::is_floating_point_v<T>) {
    atomicAdd(p, v);
  } else if constexpr (sizeof(T) == 4) {
    atomicAdd(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(v));
  } else {
    static_assert(sizeof(T) == 8);
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  }
}

// acc[0] += sum x[i]: each thread sums its grid-stride share (floats in f64,
// integers wrapping), the block reduces, and one atomic per block lands in
// acc[0].
template <class T>
__device__ __forceinline__ void atomic_sum(BufferParam<const T> x, BufferParam<T> acc) {
  using A = typename num<T>::accum;
  const std::uint64_t stride = simt::grid_threads();
  std::uint64_t i = simt::global_thread();
  A s[4] = {A{}, A{}, A{}, A{}};
  for (; i + 3 * stride < x.len; i += 4 * stride) {
#pragma unroll
    for (int k = 0; k < 4; ++k) s[k] += static_cast<A>(x.data[i + k * stride]);
  }
  for (; i < x.len; i += stride) s[0] += static_cast<A>(x.data[i]);
  A total = (s[0] + s[1]) + (s[2] + s[3]);
  __shared__ A scratch[32];
  total = simt::block_reduce(total, scratch, [](A a, A b) { return a + b; });
  if (simt::thread_in_block() == 0) atomic_add(acc.data, static_cast<T>(total));
}

// Counts per bin; bins up to kSharedBins are counted in shared memory first
// (one global atomic per non-empty bin per block).
constexpr std::uint32_t kSharedBins = 2048;

template <class T>
__device__ __forceinline__ void histogram(BufferParam<const T> x, BufferParam<std::uint32_t> bins, double lo,
                                          double hi) {
  __shared__ std::uint32_t local[kSharedBins];
  const std::uint64_t nb = bins.len;
  const std::uint64_t stride = simt::grid_threads();
  const std::uint32_t t = simt::thread_in_block(), nt = simt::block_threads();
  if (nb <= kSharedBins) {
    for (std::uint32_t b = t; b < nb; b += nt) local[b] = 0;
    __syncthreads();
    for (std::uint64_t i = simt::global_thread(); i < x.len; i += stride) {
      std::uint64_t b;
      if (tandem::kernels::histogram_bin(static_cast<double>(x.data[i]), lo, hi, nb, b))
        atomicAdd(&local[b], 1u);
    }
    __syncthreads();
    for (std::uint32_t b = t; b < nb; b += nt) {
      if (local[b] != 0) atomicAdd(&bins.data[b], local[b]);
    }
  } else {
    for (std::uint64_t i = simt::global_thread(); i < x.len; i += stride) {
      std::uint64_t b;
      if (tandem::kernels::histogram_bin(static_cast<double>(x.data[i]), lo, hi, nb, b))
        atomicAdd(&bins.data[b], 1u);
    }
  }
}

// out[0] = wrapping sum of the little-endian 32-bit words of x's bytes (the
// last word zero-padded). Every block computes the whole sum (so any grid is
// correct; the default grid is one block) and thread 0 writes it: no atomics,
// so out needs no initialisation.
__device__ __forceinline__ void checksum(BufferParam<const std::uint8_t> x, BufferParam<std::uint32_t> out) {
  const std::uint8_t* p = x.data;
  const std::uint64_t n = x.len;
  const std::uint32_t t = simt::thread_in_block(), nt = simt::block_threads();
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t s = 0;
  std::uint64_t done = 0;  // bytes summed by the aligned paths (a multiple of 4)
  if (addr % 16 == 0) {
    const std::uint64_t n16 = n / 16;
    const auto* q = reinterpret_cast<const uint4*>(p);
    for (std::uint64_t j = t; j < n16; j += nt) {
      const uint4 w = q[j];
      s += w.x + w.y + w.z + w.w;
    }
    done = n16 * 16;
  } else if (addr % 4 == 0) {
    const std::uint64_t n4 = n / 4;
    const auto* q = reinterpret_cast<const std::uint32_t*>(p);
    for (std::uint64_t j = t; j < n4; j += nt) s += q[j];
    done = n4 * 4;
  }
  for (std::uint64_t w = done / 4 + t; w * 4 < n; w += nt) {  // byte by byte
    std::uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      if (w * 4 + b < n) word |= static_cast<std::uint32_t>(p[w * 4 + b]) << (8 * b);
    }
    s += word;
  }
  __shared__ std::uint32_t scratch[32];
  s = simt::block_reduce(s, scratch, [](std::uint32_t a, std::uint32_t b) { return a + b; });
  if (t == 0 && out.len > 0) out.data[0] = s;
}

__device__ __forceinline__ std::uint64_t globaltimer() {
  std::uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// Busy-waits `ns` nanoseconds of device time in one thread; x is untouched.
__device__ __forceinline__ void spin(BufferParam<std::uint8_t> /*x*/, std::uint64_t ns) {
  if (simt::global_thread() != 0) return;
  const std::uint64_t t0 = globaltimer();
  while (globaltimer() - t0 < ns) {
  }
}

}  // namespace

#define TANDEM_SIMT_DEFINE_atomic_sum(DT) \
  TANDEM_SIMT_KERNEL(atomic_sum, DT)(TANDEM_SIMT_CBUF(DT) x, TANDEM_SIMT_BUF(DT) acc) { atomic_sum(x, acc); }
#define TANDEM_SIMT_DEFINE_histogram(DT)                                                      \
  TANDEM_SIMT_KERNEL(histogram, DT)                                                           \
  (TANDEM_SIMT_CBUF(DT) x, ::tandem::BufferParam<std::uint32_t> bins, double lo, double hi) { \
    histogram(x, bins, lo, hi);                                                               \
  }
#define TANDEM_SIMT_DEFINE_checksum(DT)                                                     \
  TANDEM_SIMT_KERNEL(checksum, DT)                                                          \
  (::tandem::BufferParam<const std::uint8_t> x, ::tandem::BufferParam<std::uint32_t> out) { \
    checksum(x, out);                                                                       \
  }
#define TANDEM_SIMT_DEFINE_spin(DT) \
  TANDEM_SIMT_KERNEL(spin, DT)(::tandem::BufferParam<std::uint8_t> x, std::uint64_t ns) { spin(x, ns); }

TANDEM_MODULE_simt_reduce(TANDEM_SIMT_DEFINE, simt_reduce)
