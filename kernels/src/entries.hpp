// SPDX-License-Identifier: Apache-2.0
// The generated entry tables (internal to kernels/).
#pragma once

#include <span>

#include "tandem/kernels/catalog.hpp"

namespace tandem::kernels::detail {

std::span<const KernelEntry> simt_entries() noexcept;
std::span<const KernelEntry> tile_entries() noexcept;

}  // namespace tandem::kernels::detail
