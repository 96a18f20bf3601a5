// SPDX-License-Identifier: Apache-2.0
// tandem/tile/view.cuh — tensors as Tile kernels see them, and their tiles.
//
//   tile::view<const float, 2> a = param;      // from a TensorParam
//   const auto t = tile::this_tile<64, 64>(out);   // from blockIdx.x
//   if (!t) return;
//   const tile::coord<2> at = *t;
//
// A view is a strided rank-1 or rank-2 tensor (strides in elements, any
// non-negative value: slices and transposed layouts are fine). A coord names
// one tile of a partition of a view into TM x TN tiles (rank 1: TM = 1); the
// launcher gives one block per tile of the partition tensor (a block beyond
// the tile count gets no tile and returns).
#pragma once

#include <cstdint>
#include <cuda/std/type_traits>

#include "tandem/kernel_params.hpp"
#include "tandem/tile/config.hpp"

namespace tandem::tile {

using index_t = std::int64_t;

template <class T, int R>
struct view {
  static_assert(R == 1 || R == 2, "tile::view supports rank 1 and rank 2");
  using element_type = T;
  using value_type = cuda::std::remove_cv_t<T>;
  static constexpr int rank = R;

  T* data;
  index_t shape[R];
  index_t stride[R];

  view() = default;
  __host__ __device__ view(const TensorParam<T, R>& p) : data(p.data) {  // NOLINT: implicit by design
#pragma unroll
    for (int k = 0; k < R; ++k) {
      shape[k] = p.shape[k];
      stride[k] = p.stride[k];
    }
  }

  // Rank 1 is one row.
  __device__ __forceinline__ index_t rows() const { return R == 2 ? shape[0] : 1; }
  __device__ __forceinline__ index_t cols() const { return shape[R - 1]; }
  __device__ __forceinline__ index_t row_stride() const { return R == 2 ? stride[0] : 0; }
  __device__ __forceinline__ index_t col_stride() const { return stride[R - 1]; }
  __device__ __forceinline__ T* ptr(index_t r, index_t c) const {
    return data + r * row_stride() + c * col_stride();
  }

  // Can chunks of V consecutive row elements starting at a column that is a
  // multiple of V be moved with one aligned V-element (<= 16-byte) access?
  template <int V>
  __device__ __forceinline__ bool vectorizable() const {
    if constexpr (V <= 1) {
      return false;
    } else {
      const auto addr = reinterpret_cast<std::uintptr_t>(data);
      return col_stride() == 1 && addr % (V * sizeof(value_type)) == 0 && (R == 1 || row_stride() % V == 0);
    }
  }
};

template <class T, int R>
view(const TensorParam<T, R>&) -> view<T, R>;

// Tile coordinates (tile indices, not elements) within a partition.
template <int R>
struct coord {
  index_t idx[R];

  // The first element of the tile.
  template <int TM>
  __device__ __forceinline__ index_t row0() const {
    return R == 2 ? idx[0] * TM : 0;
  }
  template <int TN>
  __device__ __forceinline__ index_t col0() const {
    return idx[R - 1] * TN;
  }

  // (i, j) -> (j, i): the source tile of a transpose.
  __device__ __forceinline__ coord transposed() const {
    static_assert(R == 2, "transposed() needs rank 2");
    return coord{{idx[1], idx[0]}};
  }
};

// A view cut into TM x TN tiles, row-major over tiles.
template <int TM, int TN, int R>
struct partition {
  index_t tiles[R];  // per dimension
  index_t count;

  __device__ __forceinline__ coord<R> at(index_t linear) const {
    if constexpr (R == 1) {
      return coord<1>{{linear}};
    } else {
      return coord<2>{{linear / tiles[1], linear % tiles[1]}};
    }
  }
};

__host__ __device__ constexpr index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

template <int TM, int TN, class T, int R>
__device__ __forceinline__ partition<TM, TN, R> partition_of(const view<T, R>& v) {
  static_assert(R == 2 || TM == 1, "rank-1 tiles have TM = 1");
  partition<TM, TN, R> p;
  if constexpr (R == 1) {
    p.tiles[0] = ceil_div(v.shape[0], TN);
    p.count = p.tiles[0];
  } else {
    p.tiles[0] = ceil_div(v.shape[0], TM);
    p.tiles[1] = ceil_div(v.shape[1], TN);
    p.count = p.tiles[0] * p.tiles[1];
  }
  return p;
}

// The tile of this block: the launcher gives one block per tile of the
// partition tensor (1-D grid, row-major over tiles). A block beyond the tile
// count (a larger grid) gets an empty result and must return; that decision
// is uniform across the block, so __syncthreads() after it is safe.
template <int R>
struct block_tile {
  coord<R> at;
  bool valid;
  __device__ __forceinline__ explicit operator bool() const { return valid; }
  __device__ __forceinline__ const coord<R>& operator*() const { return at; }
  __device__ __forceinline__ const coord<R>* operator->() const { return &at; }
};

template <int TM, int TN, class T, int R>
__device__ __forceinline__ block_tile<R> this_tile(const view<T, R>& v) {
  const auto p = partition_of<TM, TN>(v);
  const index_t linear = blockIdx.x;
  if (linear >= p.count) return block_tile<R>{coord<R>{}, false};  // also: no tiles at all
  return block_tile<R>{p.at(linear), true};
}

// Tile kernels are compiled for one block size; a mismatched launch traps
// rather than computing a wrong result.
template <int Threads>
__device__ __forceinline__ void expect_block() {
  if (blockDim.x != Threads || blockDim.y != 1 || blockDim.z != 1) __trap();
}

}  // namespace tandem::tile
