// SPDX-License-Identifier: Apache-2.0
// Shared by the Tile kernel .cu files: entry-point signature helpers.
#pragma once

#include "tandem/kernel_params.hpp"
#include "tandem/kernels/ctypes.hpp"
#include "tandem/kernels/instances.hpp"
#include "tandem/tile/tile.cuh"

#define TANDEM_TILE_T(DT) ::tandem::kernels::ctype_t<::tandem::kernels::dt::DT>
#define TANDEM_TILE_S(DT) ::tandem::kernels::scalar_t<::tandem::kernels::dt::DT>
#define TANDEM_TILE_IN(DT, R) ::tandem::TensorParam<const TANDEM_TILE_T(DT), R>
#define TANDEM_TILE_OUT(DT, R) ::tandem::TensorParam<TANDEM_TILE_T(DT), R>
#define TANDEM_TILE_KERNEL(K, DT, R, TM, TN)                                        \
  extern "C" __global__ void __launch_bounds__(::tandem::tile::threads_for(TM, TN)) \
      TANDEM_TILE_ENTRY(K, DT, R, TM, TN)

// Same, with a minimum of MIN_BLOCKS resident blocks per SM (a register cap
// for ptxas): for bandwidth kernels, checked with -Xptxas -v to not spill.
#define TANDEM_TILE_KERNEL_OCCUPANCY(K, DT, R, TM, TN, MIN_BLOCKS)                              \
  extern "C" __global__ void __launch_bounds__(::tandem::tile::threads_for(TM, TN), MIN_BLOCKS) \
      TANDEM_TILE_ENTRY(K, DT, R, TM, TN)

// X for the module lists: K's definition macro must exist in the .cu.
#define TANDEM_TILE_DEFINE(M, K, DT, R, TM, TN) TANDEM_TILE_DEFINE_##K(DT, R, TM, TN)
