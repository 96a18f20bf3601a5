// SPDX-License-Identifier: Apache-2.0
// declared.cpp — see tandem/kernels/declared.hpp.
#include "tandem/kernels/declared.hpp"

#include "modules.hpp"

namespace tandem::kernels {

namespace {

// The host reference of an empty kernel: nothing to compute.
void no_effect(void* const* /*params*/, const driver::LaunchDims& /*dims*/) {}

constinit const driver::KernelSymbol kDeclared{"tandem_declared_access", &detail::module_simt_basic,
                                               &no_effect, nullptr, 0};

}  // namespace

const driver::KernelSymbol& declared_access_kernel() noexcept { return kDeclared; }

}  // namespace tandem::kernels
