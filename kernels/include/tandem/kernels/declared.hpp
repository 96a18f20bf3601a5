// SPDX-License-Identifier: Apache-2.0
// tandem/kernels/declared.hpp — the kernel with no body.
//
// A recording (docs/runtime.md "Recording") cannot replay a kernel that is
// not in the catalog, but it knows the accesses its launch declared. The
// scenario op `declared_launch` launches this kernel instead, with those
// accesses: the runtime takes, orders, conflicts on and releases the same
// leases as the original launch did, and nothing touches the memory.
//
//   tandem::ViewAccess acc[] = {{&x, tandem::Access::read}, {&y, tandem::Access::write}};
//   tandem::launch(stream, tandem::kernels::declared_access_kernel(), {{1, 1, 1}, {1, 1, 1}, 0},
//                  nullptr, acc);
//
// It takes no parameters (params may be null) and runs with any grid: an
// empty `extern "C" __global__` in module simt_basic on CUDA, a host
// reference that does nothing on the simulated device. It is not a catalog
// entry: `tandem kernels` does not list it and kernels::find cannot name it
// (a user launching it through the catalog would launch nothing).
#pragma once

#include "tandem/driver/kernel_symbol.hpp"

namespace tandem::kernels {

[[nodiscard]] const driver::KernelSymbol& declared_access_kernel() noexcept;

}  // namespace tandem::kernels
