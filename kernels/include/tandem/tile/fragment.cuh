// SPDX-License-Identifier: Apache-2.0
// tandem/tile/fragment.cuh — a whole tile held in registers across a block.
//
// fragment<T, TM, TN, Threads, V> is a TM x TN tile of T distributed over the
// Threads threads of a block: thread t owns `chunks` chunks of V consecutive
// row elements; chunk k of thread t starts at tile-linear element
// (k * Threads + t) * V, i.e. at row (that / TN), column (that % TN).
// Consecutive threads own consecutive chunks, so a warp's accesses to one
// row are contiguous (coalesced), and V-element chunks map onto 16-byte
// vector loads. V = 1 gives the classic "one lane per column" layout that
// the shared-memory transpose wants.
//
// Whole-tile arithmetic (+, -, *, scalar * tile, map, zip, convert) works on
// fragments of one layout and needs no synchronisation: each thread combines
// the elements it owns.
#pragma once

#include <cuda/std/type_traits>

#include "tandem/tile/config.hpp"
#include "tandem/tile/numeric.cuh"

namespace tandem::tile {

// The widest chunk (<= 16 bytes) that divides both a tile row and a
// thread's share of the tile.
template <class T, int TM, int TN, int Threads>
__host__ __device__ constexpr int default_vec() {
  int v = 16 / static_cast<int>(sizeof(T));
  if (v < 1) v = 1;
  const int per_thread = TM * TN / Threads;
  while (v > 1 && (TN % v != 0 || per_thread % v != 0)) v /= 2;
  return v;
}

template <class T, int TM, int TN, int Threads = threads_for(TM, TN),
          int V = default_vec<T, TM, TN, Threads>()>
struct fragment {
  static_assert(TM > 0 && TN > 0 && Threads > 0 && V > 0);
  static_assert((TM * TN) % (Threads * V) == 0, "the tile must split evenly into chunks per thread");
  static_assert(TN % V == 0, "a chunk must not cross a tile row");

  using value_type = T;
  static constexpr int rows = TM;
  static constexpr int cols = TN;
  static constexpr int threads = Threads;
  static constexpr int vec = V;
  static constexpr int size = TM * TN / Threads;  // elements per thread
  static constexpr int chunks = size / V;

  T v[size];

  // Position of this thread's chunk k inside the tile: (row(k), col(k)) =
  // (row0() + row_off(k), col0() + col_off(k)), the offsets compile-time
  // constants (tiles and thread counts are powers of two, so either a step
  // over all threads covers whole rows, or a row holds whole steps).
  static constexpr int step = Threads * V;  // elements covered by one chunk of every thread
  static_assert(step % TN == 0 || TN % step == 0, "a step must cover whole rows or divide a row");
  __host__ __device__ static constexpr int row_off(int k) {
    return step % TN == 0 ? k * (step / TN) : k / (TN / step);
  }
  __host__ __device__ static constexpr int col_off(int k) {
    return step % TN == 0 ? 0 : (k % (TN / step)) * step;
  }
  __device__ __forceinline__ static int row0() {
    return step % TN == 0 ? static_cast<int>(threadIdx.x * unsigned{V} / unsigned{TN}) : 0;
  }
  __device__ __forceinline__ static int col0() {
    return static_cast<int>(threadIdx.x * unsigned{V} % unsigned{TN});
  }
  __device__ __forceinline__ static int row(int k) { return row0() + row_off(k); }
  __device__ __forceinline__ static int col(int k) { return col0() + col_off(k); }

  __device__ __forceinline__ T& operator[](int i) { return v[i]; }
  __device__ __forceinline__ const T& operator[](int i) const { return v[i]; }

  // Every element set to x.
  __device__ __forceinline__ static fragment full(T x) {
    fragment f;
#pragma unroll
    for (int i = 0; i < size; ++i) f.v[i] = x;
    return f;
  }
};

template <class F>
inline constexpr bool is_fragment_v = false;
template <class T, int TM, int TN, int Th, int V>
inline constexpr bool is_fragment_v<fragment<T, TM, TN, Th, V>> = true;

// The same layout holding another element type.
template <class F, class U>
using rebind_t = fragment<U, F::rows, F::cols, F::threads, F::vec>;

// --- whole-tile arithmetic ------------------------------------------------------

template <class F, class Fn>
__device__ __forceinline__ F map(const F& a, Fn fn) {
  F r;
#pragma unroll
  for (int i = 0; i < F::size; ++i) r.v[i] = fn(a.v[i]);
  return r;
}

template <class F, class Fn>
__device__ __forceinline__ F zip(const F& a, const F& b, Fn fn) {
  F r;
#pragma unroll
  for (int i = 0; i < F::size; ++i) r.v[i] = fn(a.v[i], b.v[i]);
  return r;
}

template <class T, int TM, int TN, int Th, int V>
__device__ __forceinline__ fragment<T, TM, TN, Th, V> operator+(const fragment<T, TM, TN, Th, V>& a,
                                                                const fragment<T, TM, TN, Th, V>& b) {
  return zip(a, b, [](T x, T y) { return num<T>::add(x, y); });
}

template <class T, int TM, int TN, int Th, int V>
__device__ __forceinline__ fragment<T, TM, TN, Th, V>& operator+=(fragment<T, TM, TN, Th, V>& a,
                                                                  const fragment<T, TM, TN, Th, V>& b) {
  a = a + b;
  return a;
}

template <class T, int TM, int TN, int Th, int V>
__device__ __forceinline__ fragment<T, TM, TN, Th, V> operator*(const fragment<T, TM, TN, Th, V>& a,
                                                                const fragment<T, TM, TN, Th, V>& b) {
  return zip(a, b, [](T x, T y) { return num<T>::mul(x, y); });
}

// s * tile, with s in the element type's compute type (f32 for f16/bf16).
template <class T, int TM, int TN, int Th, int V>
__device__ __forceinline__ fragment<T, TM, TN, Th, V> operator*(typename num<T>::compute s,
                                                                const fragment<T, TM, TN, Th, V>& a) {
  return map(a, [s](T x) { return num<T>::scale(s, x); });
}

// Elementwise conversion into another element type, same layout.
template <class U, class T, int TM, int TN, int Th, int V>
__device__ __forceinline__ fragment<U, TM, TN, Th, V> convert(const fragment<T, TM, TN, Th, V>& a) {
  fragment<U, TM, TN, Th, V> r;
#pragma unroll
  for (int i = 0; i < a.size; ++i) r.v[i] = convert_value<U>(a.v[i]);
  return r;
}

}  // namespace tandem::tile
