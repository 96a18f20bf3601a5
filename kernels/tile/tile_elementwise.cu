// SPDX-License-Identifier: Apache-2.0
// Tile kernels: add, scale (rank 1 and 2). Module tile_elementwise.
#include "tile_common.cuh"

namespace {

namespace tile = ::tandem::tile;

template <class T, int R, int TM, int TN>
__device__ __forceinline__ void tile_add(tile::view<const T, R> a, tile::view<const T, R> b,
                                         tile::view<T, R> out) {
  tile::expect_block<tile::threads_for(TM, TN)>();
  const auto t = tile::this_tile<TM, TN>(out);
  if (!t) return;
  const auto x = tile::load<TM, TN>(a, *t);
  const auto y = tile::load<TM, TN>(b, *t);
  tile::store(out, *t, x + y);
}

template <class T, int R, int TM, int TN>
__device__ __forceinline__ void tile_scale(tile::view<T, R> x, typename tile::num<T>::compute a) {
  tile::expect_block<tile::threads_for(TM, TN)>();
  const auto t = tile::this_tile<TM, TN>(x);
  if (!t) return;
  tile::store(x, *t, a * tile::load<TM, TN>(x, *t));
}

}  // namespace

#define TANDEM_TILE_DEFINE_add(DT, R, TM, TN)                                      \
  TANDEM_TILE_KERNEL(add, DT, R, TM, TN)                                           \
  (TANDEM_TILE_IN(DT, R) a, TANDEM_TILE_IN(DT, R) b, TANDEM_TILE_OUT(DT, R) out) { \
    tile_add<TANDEM_TILE_T(DT), R, TM, TN>(a, b, out);                             \
  }
#define TANDEM_TILE_DEFINE_scale(DT, R, TM, TN)                                             \
  TANDEM_TILE_KERNEL(scale, DT, R, TM, TN)(TANDEM_TILE_OUT(DT, R) x, TANDEM_TILE_S(DT) a) { \
    tile_scale<TANDEM_TILE_T(DT), R, TM, TN>(x, a);                                         \
  }

TANDEM_MODULE_tile_elementwise(TANDEM_TILE_DEFINE, tile_elementwise)
