// SPDX-License-Identifier: Apache-2.0
// tandem/base/spin_lock.hpp — a one-byte annotated spin lock.
//
// For per-allocation lease lists and per-stream queues: held for a few
// hundred nanoseconds (a driver launch at most), almost never contended. It
// spins briefly, then yields, so a holder that was descheduled does not burn
// a core.
#pragma once

#include <atomic>
#include <thread>

#include "tandem/base/cpu_relax.hpp"
#include "tandem/base/thread_annotations.hpp"

namespace tandem::base {

class TANDEM_CAPABILITY("mutex") SpinLock {
 public:
  void lock() noexcept TANDEM_ACQUIRE() {
    for (unsigned spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins++ < 64) {
          TANDEM_CPU_RELAX();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() noexcept TANDEM_TRY_ACQUIRE(true) {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept TANDEM_RELEASE() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace tandem::base
