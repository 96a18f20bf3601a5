// SPDX-License-Identifier: Apache-2.0
// tandem/tile/memory.cuh — moving whole tiles between a view and registers.
//
//   auto x = tile::load<64, 64>(a, at);            // default layout
//   auto s = tile::load<64, 64, 256, 1>(src, at);  // explicit threads, V = 1
//   tile::store(out, at, x);
//
// Both are masked at the tensor's edges (a load yields 0 outside, a store
// writes nothing there), so tensor sizes need not be multiples of the tile.
// Paths, chosen per view (uniform across the block) and per chunk:
//   - vector: the view's rows are contiguous and V-aligned (see
//     view::vectorizable) and the chunk lies inside the tensor -> one
//     16-byte ld/st per chunk;
//   - contiguous interior: inner stride 1, tile inside the tensor -> plain
//     unmasked scalar accesses (coalesced across the warp);
//   - generic: any strides, masked per element.
#pragma once

#include <cuda/std/type_traits>

#include "tandem/tile/fragment.cuh"
#include "tandem/tile/view.cuh"

namespace tandem::tile {

namespace detail {

// One aligned access of V elements (V * sizeof(T) <= 16 bytes) through a
// builtin vector type. Global memory goes through the ld.global.ca /
// st.global.wb intrinsics (the default cache policy) so that it is always a
// single ld/st.v4 instruction; shared memory through plain C++.
template <int Bytes>
struct vec_bits;
template <>
struct vec_bits<16> {
  using type = uint4;
};
template <>
struct vec_bits<8> {
  using type = uint2;
};
template <>
struct vec_bits<4> {
  using type = unsigned int;
};
template <>
struct vec_bits<2> {
  using type = unsigned short;
};

template <int V, class T>
__device__ __forceinline__ void vload_global(const T* p, T* out) {
  using B = typename vec_bits<V * sizeof(T)>::type;
  const B bits = __ldca(reinterpret_cast<const B*>(p));
  memcpy(out, &bits, sizeof(B));
}

template <int V, class T>
__device__ __forceinline__ void vstore_global(T* p, const T* in) {
  using B = typename vec_bits<V * sizeof(T)>::type;
  B bits;
  memcpy(&bits, in, sizeof(B));
  __stwb(reinterpret_cast<B*>(p), bits);
}

template <int V, class T>
__device__ __forceinline__ void vload(const T* p, T* out) {
  using B = typename vec_bits<V * sizeof(T)>::type;
  const B bits = *reinterpret_cast<const B*>(p);
  memcpy(out, &bits, sizeof(B));
}

template <int V, class T>
__device__ __forceinline__ void vstore(T* p, const T* in) {
  using B = typename vec_bits<V * sizeof(T)>::type;
  B bits;
  memcpy(&bits, in, sizeof(B));
  *reinterpret_cast<B*>(p) = bits;
}

}  // namespace detail

// Loads tile `at` of `src` into `f` (f's shape is the tile shape).
template <class F, class T, int R>
__device__ __forceinline__ void load_into(F& f, const view<T, R>& src, coord<R> at) {
  using E = typename F::value_type;
  static_assert(cuda::std::is_same_v<E, cuda::std::remove_cv_t<T>>, "fragment and view element types differ");
  constexpr int TM = F::rows, TN = F::cols, V = F::vec;
  static_assert(R == 2 || TM == 1, "rank-1 tiles have TM = 1");
  const index_t r0 = at.template row0<TM>();
  const index_t c0 = at.template col0<TN>();
  const index_t rows = src.rows(), cols = src.cols();
  const index_t rs = src.row_stride(), cs = src.col_stride();
  const bool full = r0 + TM <= rows && c0 + TN <= cols;

  if (src.template vectorizable<V>()) {
#pragma unroll
    for (int k = 0; k < F::chunks; ++k) {
      const index_t r = r0 + F::row(k), c = c0 + F::col(k);
      if (full || (r < rows && c + V <= cols)) {
        detail::vload_global<V>(src.data + r * rs + c, &f.v[k * V]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
          f.v[k * V + j] = (r < rows && c + j < cols) ? src.data[r * rs + c + j] : E{};
      }
    }
  } else if (full && cs == 1) {
#pragma unroll
    for (int k = 0; k < F::chunks; ++k) {
      const index_t base = (r0 + F::row(k)) * rs + c0 + F::col(k);
#pragma unroll
      for (int j = 0; j < V; ++j) f.v[k * V + j] = src.data[base + j];
    }
  } else {
#pragma unroll
    for (int k = 0; k < F::chunks; ++k) {
      const index_t r = r0 + F::row(k), c = c0 + F::col(k);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        f.v[k * V + j] = (r < rows && c + j < cols) ? src.data[r * rs + (c + j) * cs] : E{};
      }
    }
  }
}

template <int TM, int TN, int Threads = threads_for(TM, TN), int V = 0, class T, int R>
__device__ __forceinline__ auto load(const view<T, R>& src, coord<R> at) {
  using E = cuda::std::remove_cv_t<T>;
  constexpr int VV = V > 0 ? V : default_vec<E, TM, TN, Threads>();
  fragment<E, TM, TN, Threads, VV> f;
  load_into(f, src, at);
  return f;
}

// Stores `f` into tile `at` of `dst`; elements outside the tensor are skipped.
template <class T, int R, class F>
__device__ __forceinline__ void store(const view<T, R>& dst, coord<R> at, const F& f) {
  static_assert(!cuda::std::is_const_v<T>, "store needs a writable view");
  static_assert(cuda::std::is_same_v<typename F::value_type, T>, "fragment and view element types differ");
  constexpr int TM = F::rows, TN = F::cols, V = F::vec;
  static_assert(R == 2 || TM == 1, "rank-1 tiles have TM = 1");
  const index_t r0 = at.template row0<TM>();
  const index_t c0 = at.template col0<TN>();
  const index_t rows = dst.rows(), cols = dst.cols();
  const index_t rs = dst.row_stride(), cs = dst.col_stride();
  const bool full = r0 + TM <= rows && c0 + TN <= cols;

  if (dst.template vectorizable<V>()) {
#pragma unroll
    for (int k = 0; k < F::chunks; ++k) {
      const index_t r = r0 + F::row(k), c = c0 + F::col(k);
      if (full || (r < rows && c + V <= cols)) {
        detail::vstore_global<V>(dst.data + r * rs + c, &f.v[k * V]);
      } else if (r < rows) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (c + j < cols) dst.data[r * rs + c + j] = f.v[k * V + j];
        }
      }
    }
  } else if (full && cs == 1) {
#pragma unroll
    for (int k = 0; k < F::chunks; ++k) {
      const index_t base = (r0 + F::row(k)) * rs + c0 + F::col(k);
#pragma unroll
      for (int j = 0; j < V; ++j) dst.data[base + j] = f.v[k * V + j];
    }
  } else {
#pragma unroll
    for (int k = 0; k < F::chunks; ++k) {
      const index_t r = r0 + F::row(k), c = c0 + F::col(k);
      if (r >= rows) continue;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (c + j < cols) dst.data[r * rs + (c + j) * cs] = f.v[k * V + j];
      }
    }
  }
}

}  // namespace tandem::tile
