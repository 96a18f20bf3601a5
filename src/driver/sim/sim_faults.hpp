// SPDX-License-Identifier: Apache-2.0
// sim_faults.hpp — a one-shot countdown for the simulated device's injected
// failures (fail_nth_launch, fail_nth_copy): armed with n, the n-th take()
// from then on returns true, once; 0 disarms.
#pragma once

#include <cstdint>

#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"

namespace tandem::driver::sim {

class Countdown {
 public:
  void arm(std::uint64_t n) TANDEM_EXCLUDES(mu_) {
    base::Lock lock(mu_);
    left_ = n;
  }
  // One more call counted: true when it is the armed one.
  [[nodiscard]] bool take() TANDEM_EXCLUDES(mu_) {
    base::Lock lock(mu_);
    if (left_ == 0) {
      return false;
    }
    return --left_ == 0;
  }

 private:
  base::Mutex mu_;
  std::uint64_t left_ TANDEM_GUARDED_BY(mu_) = 0;  // 0: disarmed
};

}  // namespace tandem::driver::sim
