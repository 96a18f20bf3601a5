// SPDX-License-Identifier: Apache-2.0
// Tile kernels: copy (rank 1 and 2) and transpose. Module tile_copy.
//
// These are the bandwidth kernels (target: >= 80 % of device-to-device copy
// bandwidth on 1 GiB f32 tensors). copy moves 16-byte vectors when the rows
// are contiguous and aligned; transpose reads src rows and writes dst rows
// coalesced, turning the tile around in padded shared memory.
#include "tile_common.cuh"

namespace {

namespace tile = ::tandem::tile;

template <class T, int R, int TM, int TN>
__device__ __forceinline__ void tile_copy(tile::view<const T, R> src, tile::view<T, R> dst) {
  tile::expect_block<tile::threads_for(TM, TN)>();
  const auto t = tile::this_tile<TM, TN>(dst);
  if (!t) return;
  tile::store(dst, *t, tile::load<TM, TN>(src, *t));
}

// dst = src^T, partitioned by dst: dst tile (i, j) is the transpose of src
// tile (j, i). One lane per column (V = 1) on both sides keeps the global
// accesses coalesced along the rows of each tensor and the shared-memory
// accesses conflict-free (pitch TN + 1).
template <class T, int TM, int TN>
__device__ __forceinline__ void tile_transpose(tile::view<const T, 2> src, tile::view<T, 2> dst) {
  constexpr int kThreads = tile::threads_for(TM, TN);
  tile::expect_block<kThreads>();
  __shared__ tile::shared_tile<T, TM, TN, 1> buf;
  const auto t = tile::this_tile<TM, TN>(dst);
  if (!t) return;
  const auto s = tile::load<TN, TM, kThreads, 1>(src, t->transposed());
  tile::store(dst, *t, tile::transpose(s, buf));
}

}  // namespace

#define TANDEM_TILE_DEFINE_copy(DT, R, TM, TN)                                                     \
  TANDEM_TILE_KERNEL(copy, DT, R, TM, TN)(TANDEM_TILE_IN(DT, R) src, TANDEM_TILE_OUT(DT, R) dst) { \
    tile_copy<TANDEM_TILE_T(DT), R, TM, TN>(src, dst);                                             \
  }
// 4-byte transposes: full occupancy (8 blocks of 256 or 16 of 128 per SM,
// 32 registers, no spills); 8-byte ones: half (<= 64 registers; at 32 they
// would spill).
#define TANDEM_TILE_DEFINE_transpose(DT, R, TM, TN)                                         \
  TANDEM_TILE_KERNEL_OCCUPANCY(                                                             \
      transpose, DT, R, TM, TN,                                                             \
      (sizeof(TANDEM_TILE_T(DT)) <= 4 ? 2048 : 1024) / ::tandem::tile::threads_for(TM, TN)) \
  (TANDEM_TILE_IN(DT, 2) src, TANDEM_TILE_OUT(DT, 2) dst) {                                 \
    tile_transpose<TANDEM_TILE_T(DT), TM, TN>(src, dst);                                    \
  }

TANDEM_MODULE_tile_copy(TANDEM_TILE_DEFINE, tile_copy)
