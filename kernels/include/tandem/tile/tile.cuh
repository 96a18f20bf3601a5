// SPDX-License-Identifier: Apache-2.0
// tandem/tile/tile.cuh — the Tile programming model for tandem kernels.
//
// A Tile kernel receives tensors (TensorParam), wraps them in tile::view,
// walks the tiles of its partition tensor (one block per tile), loads whole
// tiles into register fragments, computes on them whole, and stores them:
//
//   template <class T, int TM, int TN>
//   __device__ void tile_add(tile::view<const T, 2> a, tile::view<const T, 2> b,
//                            tile::view<T, 2> out) {
//     const auto t = tile::this_tile<TM, TN>(out);   // coordinates from blockIdx
//     if (!t) return;
//     auto x = tile::load<TM, TN>(a, *t);            // masked at the edges
//     auto y = tile::load<TM, TN>(b, *t);
//     tile::store(out, *t, x + y);                   // masked at the edges
//   }
//
//   view.cuh      view<T, R>, coord<R>, partitions, this_tile()
//   fragment.cuh  fragment<T, TM, TN, Threads, V> and whole-tile arithmetic
//   memory.cuh    load / store (vector fast path, strided generic path)
//   shared.cuh    shared_tile, transpose (padded), mma (matmul k-slab)
//   reduce.cuh    sum_rows / store_rows
#pragma once

#include "tandem/tile/config.hpp"
#include "tandem/tile/fragment.cuh"
#include "tandem/tile/memory.cuh"
#include "tandem/tile/numeric.cuh"
#include "tandem/tile/reduce.cuh"
#include "tandem/tile/shared.cuh"
#include "tandem/tile/view.cuh"
