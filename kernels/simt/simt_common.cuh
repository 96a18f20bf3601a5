// SPDX-License-Identifier: Apache-2.0
// Shared by the SIMT kernel .cu files.
//
// SIMT kernels accept any grid and block shape (1-D, 2-D or 3-D): they
// linearise both and walk their elements with a grid-stride loop, so any
// grid covers any length.
#pragma once

#include <cstdint>

#include "tandem/kernel_params.hpp"
#include "tandem/kernels/ctypes.hpp"
#include "tandem/kernels/instances.hpp"
#include "tandem/tile/numeric.cuh"

#define TANDEM_SIMT_T(DT) ::tandem::kernels::ctype_t<::tandem::kernels::dt::DT>
#define TANDEM_SIMT_S(DT) ::tandem::kernels::scalar_t<::tandem::kernels::dt::DT>
#define TANDEM_SIMT_BUF(DT) ::tandem::BufferParam<TANDEM_SIMT_T(DT)>
#define TANDEM_SIMT_CBUF(DT) ::tandem::BufferParam<const TANDEM_SIMT_T(DT)>
#define TANDEM_SIMT_KERNEL(K, DT) extern "C" __global__ void TANDEM_SIMT_ENTRY(K, DT)

// X for the module lists: K's definition macro must exist in the .cu.
#define TANDEM_SIMT_DEFINE(M, K, DT) TANDEM_SIMT_DEFINE_##K(DT)

namespace tandem::simt {

using tile::num;

__device__ __forceinline__ std::uint32_t block_threads() { return blockDim.x * blockDim.y * blockDim.z; }

__device__ __forceinline__ std::uint32_t thread_in_block() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ std::uint64_t block_in_grid() {
  return blockIdx.x + static_cast<std::uint64_t>(gridDim.x) *
                          (blockIdx.y + static_cast<std::uint64_t>(gridDim.y) * blockIdx.z);
}

__device__ __forceinline__ std::uint64_t grid_blocks() {
  return static_cast<std::uint64_t>(gridDim.x) * gridDim.y * gridDim.z;
}

__device__ __forceinline__ std::uint64_t global_thread() {
  return block_in_grid() * block_threads() + thread_in_block();
}

__device__ __forceinline__ std::uint64_t grid_threads() { return grid_blocks() * block_threads(); }

// Sum over the block of one value per thread, for any block shape and size
// (partial last warp included). The result is valid in thread 0 only.
// `scratch` holds one value per warp (32). Every thread of the block must call
// it; it synchronises the block.
template <class T, class Add>
__device__ __forceinline__ T block_reduce(T v, T (&scratch)[32], Add add) {
  const std::uint32_t n = block_threads();
  const std::uint32_t t = thread_in_block();
  const std::uint32_t lane = t % 32, warp = t / 32;
  const std::uint32_t warps = (n + 31) / 32;
  {
    const std::uint32_t width = min(32u, n - warp * 32);  // threads in this warp
    const unsigned mask = width == 32 ? 0xffffffffu : ((1u << width) - 1u);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
      const T o = __shfl_down_sync(mask, v, off);
      if (lane + off < width) v = add(v, o);
    }
  }
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? scratch[lane] : T{};
    const unsigned mask = n >= 32 ? 0xffffffffu : ((1u << n) - 1u);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
      const T o = __shfl_down_sync(mask, v, off);
      if (lane + off < warps) v = add(v, o);
    }
  }
  return v;
}

}  // namespace tandem::simt
