// tandem/detail/locks.hpp — the two locks the runtime uses, annotated.
//
// SpinLock guards per-allocation lease lists and per-stream queues: held for
// a few hundred nanoseconds (a driver launch at most), almost never
// contended, one byte. It spins briefly, then yields, so a holder that was
// descheduled does not burn a core. Mutex wraps std::mutex for the cold paths
// (registries, condition variables) so clang can check its users.
#pragma once

#include <atomic>
#include <mutex>
#include <thread>

#include "tandem/detail/thread_annotations.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define TANDEM_CPU_RELAX() _mm_pause()
#else
#define TANDEM_CPU_RELAX() ((void)0)
#endif

namespace tandem::detail {

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
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept TANDEM_RELEASE() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

class TANDEM_CAPABILITY("mutex") Mutex {
 public:
  void lock() TANDEM_ACQUIRE() { mu_.lock(); }
  void unlock() TANDEM_RELEASE() { mu_.unlock(); }
  std::mutex& native() { return mu_; }  // for std::condition_variable

 private:
  std::mutex mu_;
};

// std::lock_guard, annotated.
template <class L>
class TANDEM_SCOPED_CAPABILITY Guard {
 public:
  explicit Guard(L& l) TANDEM_ACQUIRE(l) : l_(l) { l_.lock(); }
  ~Guard() TANDEM_RELEASE() { l_.unlock(); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  L& l_;
};

}  // namespace tandem::detail
