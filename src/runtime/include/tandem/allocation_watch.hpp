// SPDX-License-Identifier: Apache-2.0
// tandem/allocation_watch.hpp — a weak observer of one allocation.
//
//   tandem::AllocationWatch w(buf);   // remember the allocation behind `buf`
//   buf = {};                         // drop every view
//   w.freed();                        // false while pending work still leases it
//
// It keeps only the allocation's small record alive (never its memory, never
// a view count), so it answers "freed yet?" after every handle is gone: the
// scenario engine's `check freed` and tests of retirement. All calls are
// lock-free reads; copying shares the record.
#pragma once

#include <cstdint>

namespace tandem {

class View;

namespace detail {
class AllocationState;
}

class AllocationWatch {
 public:
  AllocationWatch() noexcept = default;
  // Throws Error(invalid_handle) for an empty view.
  explicit AllocationWatch(const View& view);
  AllocationWatch(const AllocationWatch& o) noexcept;
  AllocationWatch& operator=(AllocationWatch o) noexcept;
  ~AllocationWatch();

  [[nodiscard]] bool valid() const noexcept { return a_ != nullptr; }
  [[nodiscard]] std::uint64_t allocation_id() const noexcept;
  // Its device memory has been returned (or, for adopted memory, its owner
  // released): freed with nothing in flight, freed after the host proved
  // its work done, or released in stream order behind that work and that
  // free proven executed (enqueued is not freed). An empty (zero-length) allocation holds none: it reads true
  // once its last view is gone.
  [[nodiscard]] bool freed() const noexcept;
  // Retained forever: a submission touching it has unknown completion.
  [[nodiscard]] bool quarantined() const noexcept;
  // Adopted memory: the owner object has run.
  [[nodiscard]] bool owner_released() const noexcept;

 private:
  detail::AllocationState* a_ = nullptr;
};

}  // namespace tandem
