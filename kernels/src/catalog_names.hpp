// SPDX-License-Identifier: Apache-2.0
// catalog_names.hpp — tells the runtime each catalog symbol's name
// (tandem/kernel_name.hpp), so a recording writes catalog launches by name.
#pragma once

#include <span>

#include "tandem/kernels/catalog.hpp"

namespace tandem::kernels::detail {

// Once, with the whole catalog; the names live as long as the process.
void register_catalog_names(std::span<const KernelEntry> all);

}  // namespace tandem::kernels::detail
