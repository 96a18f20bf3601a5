// SPDX-License-Identifier: Apache-2.0
// tandem/detail/footprint.hpp — what the access tracker costs in host memory,
// for benchmarks and reports.
#pragma once

#include <cstddef>

namespace tandem::detail {

struct TrackerFootprint {
  // One allocation's record: identity, counters, lease tracker with its
  // inline slots. Nothing else is allocated per allocation (a tracker spills
  // to the heap only beyond two leases at once).
  std::size_t per_allocation_bytes = 0;
  // One lease: its record inside the submission plus its tracker slot.
  std::size_t per_lease_bytes = 0;
};

// From the sizes of the runtime's own internal types.
[[nodiscard]] TrackerFootprint tracker_footprint() noexcept;

}  // namespace tandem::detail
