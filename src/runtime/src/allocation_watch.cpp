// SPDX-License-Identifier: Apache-2.0
#include "tandem/allocation_watch.hpp"

#include <utility>

#include "allocation_state.hpp"
#include "tandem/errors.hpp"
#include "tandem/view.hpp"

namespace tandem {

AllocationWatch::AllocationWatch(const View& view) : a_(view.allocation()) {
  if (!a_) throw Error(ErrorCode::invalid_handle, "cannot watch the allocation of an empty view handle");
  a_->add_record_ref();
}

AllocationWatch::AllocationWatch(const AllocationWatch& o) noexcept : a_(o.a_) {
  if (a_) a_->add_record_ref();
}

AllocationWatch& AllocationWatch::operator=(AllocationWatch o) noexcept {
  std::swap(a_, o.a_);
  return *this;
}

AllocationWatch::~AllocationWatch() {
  if (a_) a_->release_record_ref();
}

std::uint64_t AllocationWatch::allocation_id() const noexcept { return a_ ? a_->id : 0; }
bool AllocationWatch::freed() const noexcept { return a_ && a_->freed(); }
bool AllocationWatch::quarantined() const noexcept { return a_ && a_->quarantined(); }
bool AllocationWatch::owner_released() const noexcept { return a_ && a_->owner_released(); }

}  // namespace tandem
