// SPDX-License-Identifier: Apache-2.0
// submit.hpp — the single path from "work + accesses" to a pending
// submission with leases (spec/runtime.md §4; design-notes "Leases").
#pragma once

#include <cstdint>
#include <memory>

#include "function_ref.hpp"
#include "submission.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::detail {

struct StreamState;

struct AccessRequest {
  AllocationState* alloc = nullptr;
  std::uint64_t offset = 0;  // bytes from the allocation's start
  std::uint64_t bytes = 0;   // > 0
  driver::AccessMode mode = driver::AccessMode::read;
};

struct SubmitSpec {
  SubmissionKind kind = SubmissionKind::kernel;
  AccessRequest* accesses = nullptr;  // sorted in place (sort_accesses), unless `sorted`
  std::uint32_t access_count = 0;
  // The driver call that enqueues the work on the given stream; runs with
  // the stream locked (the allocations' trackers are not).
  FunctionRef<driver::Result(driver::StreamHandle)> enqueue;
  const char* what = "";             // for error messages
  std::shared_ptr<void> keep_alive;  // held until retired
  bool want_future = true;
  // The accesses are in sort_accesses order already, and are not written:
  // a graph sorts its own once, and its replays share them.
  bool sorted = false;
};

// The order submit() takes tracker locks in: by allocation id, then offset.
void sort_accesses(AccessRequest* a, std::uint32_t n) noexcept;
[[nodiscard]] inline bool access_before(const AccessRequest& x, const AccessRequest& y) noexcept {
  return x.alloc->id < y.alloc->id || (x.alloc->id == y.alloc->id && x.offset < y.offset);
}

// Checks conflicts, orders or rejects, enqueues, records the completion
// event and queues the submission with its leases. Returns the submission
// with one extra reference for the caller's future (if want_future), else
// nullptr. On any throw nothing was enqueued and nothing is held.
Submission* submit(StreamState& s, SubmitSpec& spec);

}  // namespace tandem::detail
