// SPDX-License-Identifier: Apache-2.0
// tandem/kernels/instances.hpp — the one list of compiled kernel instantiations.
//
// Included by the device code (.cu, nvcc), the host references and the
// symbol tables (.cpp, host compiler). Every place that defines or names an
// instantiation expands the same X-macro list, so an entry point, its
// KernelSymbol, its host reference and its catalog entry cannot drift:
//
//   - one list per module (= one .cu file = one embedded fatbin):
//       TANDEM_MODULE_<stem>(X, M) calls X(M, K, DT)              for SIMT
//                                   or  X(M, K, DT, R, TM, TN)    for Tile
//     with M the module stem, K the kernel name, DT a dtype tag (f32, ..., or
//     `any` for dtype-agnostic kernels), R the tile rank and TM x TN the tile
//     (rank-1 tiles use TM = 1).
//   - the entry-point names are made by TANDEM_SIMT_ENTRY / TANDEM_TILE_ENTRY:
//       tandem_simt_axpy_f32, tandem_simt_checksum_any,
//       tandem_tile_add_f32_4096 (rank 1), tandem_tile_add_f32_64x64 (rank 2).
//
// Adding a dtype or a tile shape: add it to the list below; the .cu, the host
// reference and the catalog follow. The README describes adding a kernel.
#pragma once

#define TANDEM_KCAT_(a, b) a##b
#define TANDEM_KCAT(a, b) TANDEM_KCAT_(a, b)
#define TANDEM_KSTR_(x) #x
#define TANDEM_KSTR(x) TANDEM_KSTR_(x)

// --- entry-point names --------------------------------------------------------
#define TANDEM_SIMT_ENTRY(K, DT) tandem_simt_##K##_##DT
#define TANDEM_TILE_ENTRY(K, DT, R, TM, TN) TANDEM_KCAT(TANDEM_TILE_ENTRY_R, R)(K, DT, TM, TN)
#define TANDEM_TILE_ENTRY_R1(K, DT, TM, TN) tandem_tile_##K##_##DT##_##TN
#define TANDEM_TILE_ENTRY_R2(K, DT, TM, TN) tandem_tile_##K##_##DT##_##TM##x##TN

// X-macro lists, laid out by hand: clang-format 14 does not reach a fixed
// point on them.
// clang-format off
// --- SIMT dtype sets ----------------------------------------------------------
// memory-only kernels (fill, copy): every 1/2/4/8-byte DeviceCopy type we use
#define TANDEM_SIMT_DT_MEMORY(X, M, K) \
  X(M, K, f32) X(M, K, f64) X(M, K, f16) X(M, K, bf16) X(M, K, i32) X(M, K, u32) X(M, K, i64) X(M, K, u8)
#define TANDEM_SIMT_DT_IOTA(X, M, K) \
  X(M, K, f32) X(M, K, f64) X(M, K, i32) X(M, K, u32) X(M, K, i64) X(M, K, u8)
// arithmetic kernels
#define TANDEM_SIMT_DT_ARITH(X, M, K) \
  X(M, K, f32) X(M, K, f64) X(M, K, i32) X(M, K, u32) X(M, K, i64)

// module simt_basic: simt/simt_basic.cu
#define TANDEM_MODULE_simt_basic(X, M)                                               \
  TANDEM_SIMT_DT_MEMORY(X, M, fill) TANDEM_SIMT_DT_IOTA(X, M, iota)                  \
  TANDEM_SIMT_DT_ARITH(X, M, axpy) TANDEM_SIMT_DT_ARITH(X, M, scale)                 \
  TANDEM_SIMT_DT_MEMORY(X, M, copy) TANDEM_SIMT_DT_ARITH(X, M, add)

// module simt_reduce: simt/simt_reduce.cu (checksum and spin take any dtype)
#define TANDEM_MODULE_simt_reduce(X, M)                                              \
  TANDEM_SIMT_DT_ARITH(X, M, atomic_sum) TANDEM_SIMT_DT_ARITH(X, M, histogram)       \
  X(M, checksum, any) X(M, spin, any)

#define TANDEM_SIMT_MODULES(X) \
  TANDEM_MODULE_simt_basic(X, simt_basic) TANDEM_MODULE_simt_reduce(X, simt_reduce)

// --- Tile shape and dtype sets ------------------------------------------------
// Defaults (tandem::tile::is_default_tile): rank 1 -> 4096, rank 2 -> 64x64.
#define TANDEM_TILE_SHAPES_R12(X, M, K, DT) \
  X(M, K, DT, 1, 1, 1024) X(M, K, DT, 1, 1, 4096) X(M, K, DT, 2, 32, 32) X(M, K, DT, 2, 64, 64)
#define TANDEM_TILE_SHAPES_R2(X, M, K, DT) X(M, K, DT, 2, 32, 32) X(M, K, DT, 2, 64, 64)

#define TANDEM_TILE_DT_ELEMENTWISE(X, M, K)                                           \
  TANDEM_TILE_SHAPES_R12(X, M, K, f32) TANDEM_TILE_SHAPES_R12(X, M, K, f64)           \
  TANDEM_TILE_SHAPES_R12(X, M, K, i32) TANDEM_TILE_SHAPES_R12(X, M, K, f16)           \
  TANDEM_TILE_SHAPES_R12(X, M, K, bf16)

// module tile_elementwise: tile/tile_elementwise.cu
#define TANDEM_MODULE_tile_elementwise(X, M) \
  TANDEM_TILE_DT_ELEMENTWISE(X, M, add) TANDEM_TILE_DT_ELEMENTWISE(X, M, scale)
// module tile_copy: tile/tile_copy.cu (copy and transpose: the bandwidth kernels)
#define TANDEM_MODULE_tile_copy(X, M)                                                 \
  TANDEM_TILE_DT_ELEMENTWISE(X, M, copy)                                              \
  TANDEM_TILE_SHAPES_R2(X, M, transpose, f32) TANDEM_TILE_SHAPES_R2(X, M, transpose, f64) \
  TANDEM_TILE_SHAPES_R2(X, M, transpose, i32)
// module tile_reduce: tile/tile_reduce.cu (matmul, row_sum)
#define TANDEM_MODULE_tile_reduce(X, M)                                               \
  TANDEM_TILE_SHAPES_R2(X, M, matmul, f32)                                            \
  TANDEM_TILE_SHAPES_R2(X, M, row_sum, f32) TANDEM_TILE_SHAPES_R2(X, M, row_sum, f64) \
  TANDEM_TILE_SHAPES_R2(X, M, row_sum, i32)

#define TANDEM_TILE_MODULES(X)                                                        \
  TANDEM_MODULE_tile_elementwise(X, tile_elementwise) TANDEM_MODULE_tile_copy(X, tile_copy) \
  TANDEM_MODULE_tile_reduce(X, tile_reduce)

// Module stems, for the embedded images (one per .cu file).
#define TANDEM_KERNEL_MODULES(X) \
  X(simt_basic) X(simt_reduce) X(tile_elementwise) X(tile_copy) X(tile_reduce)
// clang-format on
