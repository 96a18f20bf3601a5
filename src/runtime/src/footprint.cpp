// SPDX-License-Identifier: Apache-2.0
#include "tandem/detail/footprint.hpp"

#include "allocation_state.hpp"
#include "submission.hpp"

namespace tandem::detail {

TrackerFootprint tracker_footprint() noexcept {
  // A tracked lease costs the Lease and the pointer slot that holds it.
  // NOLINTNEXTLINE(bugprone-sizeof-expression): sizeof(Lease*) is meant
  return TrackerFootprint{sizeof(AllocationState), sizeof(Lease) + sizeof(Lease*)};
}

}  // namespace tandem::detail
