// SPDX-License-Identifier: Apache-2.0
// view_factory.hpp — how runtime code makes a View from an allocation.
#pragma once

#include "tandem/view.hpp"

namespace tandem {
// Adopts one view count of `a` (the caller's) as a buffer view.
View make_view(detail::AllocationState* a, DType dtype, std::uint64_t offset, std::uint64_t count);
}  // namespace tandem
