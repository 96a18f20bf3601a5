// SPDX-License-Identifier: Apache-2.0
// deadline.hpp — now + timeout without overflow.
#pragma once

#include <chrono>

namespace tandem::detail {

inline std::chrono::steady_clock::time_point deadline_after(std::chrono::nanoseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto now = Clock::now();
  if (timeout <= std::chrono::nanoseconds::zero()) return now;
  if (timeout > Clock::time_point::max() - now) return Clock::time_point::max();
  return now + std::chrono::duration_cast<Clock::duration>(timeout);
}

}  // namespace tandem::detail
