// SPDX-License-Identifier: Apache-2.0
// tandem/tile/shared.cuh — tiles in shared memory: staging, transpose and
// the matmul inner product.
//
//   __shared__ tile::shared_tile<float, 64, 64, 1> buf;   // 64 x (64 + 1)
//   auto t = tile::transpose(f, buf);                     // f: 64 x 64
//
// Padding: a transpose writes a fragment whose lanes run along a row into a
// column of the buffer; with a row pitch of (Cols + 1) elements the 32 lanes
// of a warp hit 32 different banks on the write and on the read.
#pragma once

#include "tandem/tile/fragment.cuh"
#include "tandem/tile/memory.cuh"

namespace tandem::tile {

template <class T, int Rows, int Cols, int Pad = 0>
struct alignas(16) shared_tile {
  static constexpr int rows = Rows;
  static constexpr int cols = Cols;
  static constexpr int pitch = Cols + Pad;
  T data[Rows][Cols + Pad];
};

// s(r, c) = f(r, c)
template <class T, int TM, int TN, int Th, int V, int Pad>
__device__ __forceinline__ void store_shared(shared_tile<T, TM, TN, Pad>& s,
                                             const fragment<T, TM, TN, Th, V>& f) {
  using F = fragment<T, TM, TN, Th, V>;
#pragma unroll
  for (int k = 0; k < F::chunks; ++k) {
    T* p = &s.data[F::row(k)][F::col(k)];
    if constexpr (V > 1 && (TN + Pad) % V == 0) {
      detail::vstore<V>(p, &f.v[k * V]);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) p[j] = f.v[k * V + j];
    }
  }
}

// s(c, r) = f(r, c)
template <class T, int TM, int TN, int Th, int V, int Pad>
__device__ __forceinline__ void store_shared_transposed(shared_tile<T, TN, TM, Pad>& s,
                                                        const fragment<T, TM, TN, Th, V>& f) {
  using F = fragment<T, TM, TN, Th, V>;
#pragma unroll
  for (int k = 0; k < F::chunks; ++k) {
    const int r = F::row(k), c = F::col(k);
#pragma unroll
    for (int j = 0; j < V; ++j) s.data[c + j][r] = f.v[k * V + j];
  }
}

// f(r, c) = s(r, c), in the layout of F.
template <class F, class T, int Pad>
__device__ __forceinline__ F load_shared(const shared_tile<T, F::rows, F::cols, Pad>& s) {
  F f;
  constexpr int V = F::vec;
#pragma unroll
  for (int k = 0; k < F::chunks; ++k) {
    const T* p = &s.data[F::row(k)][F::col(k)];
    if constexpr (V > 1 && (F::cols + Pad) % V == 0) {
      detail::vload<V>(p, &f.v[k * V]);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) f.v[k * V + j] = p[j];
    }
  }
  return f;
}

// The transpose of a whole tile (TM x TN -> TN x TM) through `buf`; the result
// has the same threads and chunk width. Synchronises the block twice (the
// first protects `buf` from a previous use), so every thread must call it.
template <class T, int TM, int TN, int Th, int V, int Pad>
__device__ __forceinline__ fragment<T, TN, TM, Th, V> transpose(const fragment<T, TM, TN, Th, V>& f,
                                                                shared_tile<T, TN, TM, Pad>& buf) {
  __syncthreads();
  store_shared_transposed(buf, f);
  __syncthreads();
  return load_shared<fragment<T, TN, TM, Th, V>>(buf);
}

// acc(m, n) += sum_k at(k, m) * b(k, n): one k-slab of a matrix product, with
// A stored transposed (k-major) so that a thread's rows are read as
// broadcasts and B's rows as vectors. Every thread computes the chunks of
// `acc` it owns (a register micro-tile of `chunks` rows x V columns).
template <class T, int BM, int BN, int Th, int V, int BK, int PA, int PB>
__device__ __forceinline__ void mma(fragment<T, BM, BN, Th, V>& acc, const shared_tile<T, BK, BM, PA>& at,
                                    const shared_tile<T, BK, BN, PB>& b) {
  using F = fragment<T, BM, BN, Th, V>;
  static_assert((Th * V) % BN == 0, "a thread's chunks must share their columns");
  const int c = F::col(0);
#pragma unroll
  for (int kk = 0; kk < BK; ++kk) {
    T bv[V];
    if constexpr (V > 1 && (BN + PB) % V == 0) {
      detail::vload<V>(&b.data[kk][c], bv);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) bv[j] = b.data[kk][c + j];
    }
#pragma unroll
    for (int k = 0; k < F::chunks; ++k) {
      const T a = at.data[kk][F::row(k)];
#pragma unroll
      for (int j = 0; j < V; ++j) acc.v[k * V + j] = num<T>::fma(a, bv[j], acc.v[k * V + j]);
    }
  }
}

}  // namespace tandem::tile
