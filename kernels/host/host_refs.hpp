// SPDX-License-Identifier: Apache-2.0
// Host references of every kernel instantiation (internal to kernels/).
//
// Each has the driver's HostKernelFn signature and reads its parameters
// exactly as the device entry point receives them (params[i] -> parameter
// i's value; pointer-led parameters already hold host pointers). They compute
// the kernel's whole effect regardless of the launch dimensions. Explicit
// instantiations come from the instance lists (instances.hpp).
#pragma once

#include "tandem/driver/types.hpp"

namespace tandem::kernels::host {

using driver::LaunchDims;

#define TANDEM_HOST_SIMT_DECL(K) \
  template <int DT>              \
  void simt_##K(void* const* params, const LaunchDims& dims);
TANDEM_HOST_SIMT_DECL(fill)
TANDEM_HOST_SIMT_DECL(iota)
TANDEM_HOST_SIMT_DECL(axpy)
TANDEM_HOST_SIMT_DECL(scale)
TANDEM_HOST_SIMT_DECL(copy)
TANDEM_HOST_SIMT_DECL(add)
TANDEM_HOST_SIMT_DECL(atomic_sum)
TANDEM_HOST_SIMT_DECL(histogram)
TANDEM_HOST_SIMT_DECL(checksum)
TANDEM_HOST_SIMT_DECL(spin)
#undef TANDEM_HOST_SIMT_DECL

#define TANDEM_HOST_TILE_DECL(K)           \
  template <int DT, int R, int TM, int TN> \
  void tile_##K(void* const* params, const LaunchDims& dims);
TANDEM_HOST_TILE_DECL(add)
TANDEM_HOST_TILE_DECL(scale)
TANDEM_HOST_TILE_DECL(copy)
TANDEM_HOST_TILE_DECL(transpose)
TANDEM_HOST_TILE_DECL(matmul)
TANDEM_HOST_TILE_DECL(row_sum)
#undef TANDEM_HOST_TILE_DECL

}  // namespace tandem::kernels::host
