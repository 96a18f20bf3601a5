// SPDX-License-Identifier: Apache-2.0
// tandem/tile/config.hpp — compile-time tile configuration shared by the Tile
// kernels (nvcc) and the catalog (host compiler).
#pragma once

namespace tandem::tile {

// Threads per block of a Tile kernel with a TM x TN tile (rank 1: TM = 1).
// 16 elements per thread on the large tiles, 8 on the small ones: enough
// independent loads per thread (bytes in flight) to saturate HBM while
// several blocks stay resident per SM.
[[nodiscard]] constexpr int threads_for(int tm, int tn) noexcept { return tm * tn >= 4096 ? 256 : 128; }

// The documented default tile of every Tile kernel: rank 1 -> 4096,
// rank 2 -> 64x64.
[[nodiscard]] constexpr bool is_default_tile(int rank, int tm, int tn) noexcept {
  return rank == 1 ? tn == 4096 : (tm == 64 && tn == 64);
}

// matmul: depth of one k-step (the shared-memory slabs are BM x kMatmulBK
// and kMatmulBK x BN).
inline constexpr int kMatmulBK = 32;

}  // namespace tandem::tile
