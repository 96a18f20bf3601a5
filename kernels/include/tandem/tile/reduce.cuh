// SPDX-License-Identifier: Apache-2.0
// tandem/tile/reduce.cuh — reductions of a whole tile along its rows.
//
//   auto sums = tile::sum_rows(acc);         // per row of the tile
//   tile::store_rows(out, at, sums);         // out[at * TM + r] = sums(r)
//
// In a fragment the TN / V threads that own one row are consecutive lanes of
// one warp (aligned groups), so a row sum is an in-register sum followed by a
// butterfly over those lanes; no shared memory, no block synchronisation.
#pragma once

#include "tandem/tile/fragment.cuh"
#include "tandem/tile/view.cuh"

namespace tandem::tile {

// Row sums of a fragment: value k is the sum of the row of this thread's
// chunk k (the same on every lane of the row's group).
template <class F>
struct row_values {
  typename F::value_type v[F::chunks];
};

template <class T, int TM, int TN, int Th, int V>
__device__ __forceinline__ row_values<fragment<T, TM, TN, Th, V>> sum_rows(
    const fragment<T, TM, TN, Th, V>& f) {
  using F = fragment<T, TM, TN, Th, V>;
  constexpr int lanes_per_row = TN / V;
  static_assert(lanes_per_row <= 32 && 32 % lanes_per_row == 0, "a row must live inside one warp");
  row_values<F> s;
#pragma unroll
  for (int k = 0; k < F::chunks; ++k) {
    T x = f.v[k * V];
#pragma unroll
    for (int j = 1; j < V; ++j) x = num<T>::add(x, f.v[k * V + j]);
#pragma unroll
    for (int off = lanes_per_row / 2; off > 0; off /= 2) {
      x = num<T>::add(x, __shfl_xor_sync(0xffffffffu, x, off));
    }
    s.v[k] = x;
  }
  return s;
}

// out[at.col0<TM>() + r] = sums(r) for the rows inside `out`; written by the
// first lane of each row group. The sums are converted to out's element type.
template <int TM, class T, class F>
__device__ __forceinline__ void store_rows(const view<T, 1>& out, coord<1> at, const row_values<F>& s) {
  static_assert(F::rows == TM, "tile rows and fragment rows differ");
  constexpr int lanes_per_row = F::cols / F::vec;
  if (threadIdx.x % lanes_per_row != 0) return;
  const index_t r0 = at.template col0<TM>();
#pragma unroll
  for (int k = 0; k < F::chunks; ++k) {
    const index_t r = r0 + F::row(k);
    if (r < out.shape[0]) out.data[r * out.stride[0]] = convert_value<T>(s.v[k]);
  }
}

}  // namespace tandem::tile
