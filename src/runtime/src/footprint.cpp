#include "tandem/detail/footprint.hpp"

#include "allocation_state.hpp"
#include "submission.hpp"

namespace tandem::detail {

TrackerFootprint tracker_footprint() noexcept {
  return TrackerFootprint{sizeof(AllocationState), sizeof(Lease) + sizeof(Lease*)};
}

}  // namespace tandem::detail
