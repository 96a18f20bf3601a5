// SPDX-License-Identifier: Apache-2.0
// The embedded device modules, one per .cu file (internal to kernels/).
// Defined by the generated <stem>_image.cpp files (see CMakeLists.txt).
#pragma once

#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/kernels/instances.hpp"

namespace tandem::kernels::detail {

#define TANDEM_DECLARE_MODULE(stem) extern const driver::ModuleImage module_##stem;
TANDEM_KERNEL_MODULES(TANDEM_DECLARE_MODULE)
#undef TANDEM_DECLARE_MODULE

}  // namespace tandem::kernels::detail
