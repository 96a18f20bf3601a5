// SPDX-License-Identifier: Apache-2.0
// Tile kernels: matmul and row_sum. Module tile_reduce.
#include "tile_common.cuh"

namespace {

namespace tile = ::tandem::tile;

// c = a . b, partitioned by c into BM x BN tiles. Each k-step stages a
// BM x BK slab of a (transposed, k-major) and a BK x BN slab of b in shared
// memory; every thread accumulates its chunks of the c tile in f32 registers
// (a micro-tile of `chunks` rows x V columns). The next slabs are loaded into
// registers while the current ones are multiplied.
template <int BM, int BN>
__device__ __forceinline__ void tile_matmul(tile::view<const float, 2> a, tile::view<const float, 2> b,
                                            tile::view<float, 2> c) {
  constexpr int kThreads = tile::threads_for(BM, BN);
  constexpr int BK = tile::kMatmulBK;
  tile::expect_block<kThreads>();
  __shared__ tile::shared_tile<float, BK, BM, 1> as;  // a slab, transposed (pad: conflict-free stores)
  __shared__ tile::shared_tile<float, BK, BN, 0> bs;
  const auto t = tile::this_tile<BM, BN>(c);
  if (!t) return;
  const tile::index_t i = t->idx[0], j = t->idx[1];
  const tile::index_t k_tiles = tile::ceil_div(a.shape[1], BK);
  auto acc = tile::fragment<float, BM, BN, kThreads>::full(0.0F);
  auto fa = tile::load<BM, BK, kThreads>(a, tile::coord<2>{{i, 0}});
  auto fb = tile::load<BK, BN, kThreads>(b, tile::coord<2>{{0, j}});
  for (tile::index_t kt = 0; kt < k_tiles; ++kt) {
    __syncthreads();  // the previous slabs are consumed
    tile::store_shared_transposed(as, fa);
    tile::store_shared(bs, fb);
    __syncthreads();
    if (kt + 1 < k_tiles) {  // prefetch the next slabs while this one is multiplied
      tile::load_into(fa, a, tile::coord<2>{{i, kt + 1}});
      tile::load_into(fb, b, tile::coord<2>{{kt + 1, j}});
    }
    tile::mma(acc, as, bs);
  }
  tile::store(c, *t, acc);
}

// out[i] = sum_j x[i, j], partitioned by out into TM-row tiles; each block
// sweeps its TM rows of x in TM x TN tiles, accumulating whole tiles (f32 and
// f64 in f64, integers wrapping in their unsigned type), then sums each row.
template <class T, int TM, int TN>
__device__ __forceinline__ void tile_row_sum(tile::view<const T, 2> x, tile::view<T, 1> out) {
  using Acc = typename tile::num<T>::accum;
  tile::expect_block<tile::threads_for(TM, TN)>();
  const auto t = tile::this_tile<1, TM>(out);
  if (!t) return;
  const tile::index_t i = t->idx[0];
  const tile::index_t col_tiles = tile::ceil_div(x.shape[1], TN);
  using Frag = decltype(tile::load<TM, TN>(x, tile::coord<2>{}));
  auto acc = tile::rebind_t<Frag, Acc>::full(Acc{});
  for (tile::index_t jt = 0; jt < col_tiles; ++jt) {
    acc += tile::convert<Acc>(tile::load<TM, TN>(x, tile::coord<2>{{i, jt}}));
  }
  tile::store_rows<TM>(out, *t, tile::sum_rows(acc));
}

}  // namespace

#define TANDEM_TILE_DEFINE_matmul(DT, R, TM, TN)                                             \
  TANDEM_TILE_KERNEL(matmul, DT, R, TM, TN)                                                  \
  (TANDEM_TILE_IN(DT, 2) a, TANDEM_TILE_IN(DT, 2) b, TANDEM_TILE_OUT(DT, 2) c) {             \
    static_assert(::tandem::kernels::dt::DT == ::tandem::kernels::dt::f32, "matmul is f32"); \
    tile_matmul<TM, TN>(a, b, c);                                                            \
  }
#define TANDEM_TILE_DEFINE_row_sum(DT, R, TM, TN)                                                   \
  TANDEM_TILE_KERNEL(row_sum, DT, R, TM, TN)(TANDEM_TILE_IN(DT, 2) x, TANDEM_TILE_OUT(DT, 1) out) { \
    tile_row_sum<TANDEM_TILE_T(DT), TM, TN>(x, out);                                                \
  }

TANDEM_MODULE_tile_reduce(TANDEM_TILE_DEFINE, tile_reduce)
