// SPDX-License-Identifier: Apache-2.0
// allocation_bin.hpp — a context's spare AllocationState blocks.
//
// An allocation's record is made on the thread that allocates and, once its
// memory is proven freed, destroyed on the retirement thread. Through
// malloc, every such pair crossed threads: the allocating thread's cache
// never held a block, and both threads took the same arena's lock (host-only
// perf of the sustained loop at 69c14a9: malloc, free and the futex waits
// on that lock came to about a fifth of the loop). The bin hands the block
// back instead: the thread that destroys a record gives its block here, the
// next allocation takes it. At most kCapacity blocks wait (about 40 KiB a
// context); more are freed. In front of the bins, each thread keeps one
// block of a record it destroyed for its next allocation, of any context
// (allocation_state.cpp, "the spare block"): an allocation dropped on its
// own thread with nothing in flight takes and gives no lock. Both are off
// under AddressSanitizer, which must see each record's memory freed to
// catch a use after it, and with TANDEM_ALLOCATION_BIN=0 (tuning.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#include "tandem/base/guard.hpp"
#include "tandem/base/spin_lock.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tuning.hpp"

namespace tandem::detail {

template <std::size_t BlockBytes>
class AllocationBin {
 public:
  static constexpr std::uint32_t kCapacity = 256;

  AllocationBin() = default;
  AllocationBin(const AllocationBin&) = delete;
  AllocationBin& operator=(const AllocationBin&) = delete;
  ~AllocationBin() {
    for (std::uint32_t i = 0; i < count_; ++i) ::operator delete(blocks_[i]);
  }

  // A block of BlockBytes: a spare one, else a new one (throws bad_alloc).
  [[nodiscard]] void* take() {
    if (on_) {
      base::Guard g(mu_);
      if (count_ != 0) return blocks_[--count_];
    }
    return ::operator new(BlockBytes);
  }
  // Whether blocks are kept at all (allocation_bin_on()).
  [[nodiscard]] bool on() const noexcept { return on_; }
  // Takes back a block from take() whose object is destroyed.
  void give(void* block) noexcept {
    if (on_) {
      base::Guard g(mu_);
      if (count_ != kCapacity) {
        blocks_[count_++] = block;
        return;
      }
    }
    ::operator delete(block);
  }

 private:
  // allocation_bin_on(), read once: not a call (and its static's guard) on
  // every allocation and every free.
  const bool on_ = allocation_bin_on();
  base::SpinLock mu_;
  std::uint32_t count_ TANDEM_GUARDED_BY(mu_) = 0;
  void* blocks_[kCapacity] TANDEM_GUARDED_BY(mu_);
};

}  // namespace tandem::detail
