// SPDX-License-Identifier: Apache-2.0
// tandem/base/planted_slowdown.hpp — a test build only: a launch made
// slower on purpose, so that scripts/compare can be shown to catch a launch
// regression of a known size (issue 23). Compiled in only with
// -DTANDEM_PLANT_LAUNCH_SLOWDOWN=ON (CMake; default OFF): then
// tandem::launch and kernels::launch each open a guard at entry that, when
// the outermost of them returns (or throws), busy-waits a further
// TANDEM_PLANT_LAUNCH_SLOWDOWN_PERCENT (default 10) percent of the time the
// call took. A kernels::launch, which calls tandem::launch, is slowed once,
// by the percentage of its whole time. The guard's own clock reads (two or
// three of steady_clock, about 20-30 ns each on the lent VM) come on top:
// on a 4-5 µs GPU launch the planted slowdown is about 11-12 %.
// Otherwise the macro is nothing.
#pragma once

#ifdef TANDEM_PLANT_LAUNCH_SLOWDOWN
#include <chrono>

#ifndef TANDEM_PLANT_LAUNCH_SLOWDOWN_PERCENT
#define TANDEM_PLANT_LAUNCH_SLOWDOWN_PERCENT 10
#endif

namespace tandem::base {

inline constexpr bool kPlantedLaunchSlowdownOn = true;

class PlantedLaunchSlowdown {
 public:
  PlantedLaunchSlowdown() noexcept : outermost_(depth()++ == 0), start_(Clock::now()) {}
  ~PlantedLaunchSlowdown() {
    --depth();
    if (!outermost_) return;
    const Clock::time_point end = Clock::now();
    const Clock::time_point until = end + (end - start_) * TANDEM_PLANT_LAUNCH_SLOWDOWN_PERCENT / 100;
    while (Clock::now() < until) {
    }
  }
  PlantedLaunchSlowdown(const PlantedLaunchSlowdown&) = delete;
  PlantedLaunchSlowdown& operator=(const PlantedLaunchSlowdown&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  static int& depth() noexcept {
    thread_local int d = 0;
    return d;
  }
  bool outermost_;
  Clock::time_point start_;
};

}  // namespace tandem::base

#define TANDEM_PLANTED_LAUNCH_SLOWDOWN() \
  const ::tandem::base::PlantedLaunchSlowdown tandem_planted_launch_slowdown_ {}
#else
namespace tandem::base {
inline constexpr bool kPlantedLaunchSlowdownOn = false;
}  // namespace tandem::base
#define TANDEM_PLANTED_LAUNCH_SLOWDOWN() ((void)0)
#endif
