// SPDX-License-Identifier: Apache-2.0
// tandem/detail/launch_phases.hpp — a diagnostic: the CPU's time stamp
// counter read at the boundaries of a launch's steps, summed per step on
// the launching thread. Compiled in only with -DTANDEM_LAUNCH_PHASES=ON
// (CMake); otherwise the marks are nothing. It says which step of a launch
// grows when the same launch costs more in one state than in another (the
// lent H200's VM gives no CPU performance counters to ask instead). The
// steps inside submit() are marked for copies and transfers too, which
// only `launch` counts: time a loop of kernel launches alone.
#pragma once

#include <array>
#include <cstdint>

namespace tandem::detail {

// The steps, in order. `between`: from the previous launch's return to this
// one's entry (the caller dropping the future, its loop).
enum class LaunchPhase : std::uint8_t {
  between,
  prepare,
  check,
  record,
  events,
  publish,
  driver_launch,
  driver_record,
  queue,
  finish
};
inline constexpr std::size_t kLaunchPhases = 10;
inline constexpr std::array<const char*, kLaunchPhases> kLaunchPhaseNames = {
    "between", "prepare",       "check",         "record", "events",
    "publish", "driver_launch", "driver_record", "queue",  "finish"};

struct LaunchPhaseTotals {
  std::array<std::uint64_t, kLaunchPhases> ticks{};  // time stamp counter ticks
  std::uint64_t launches = 0;

  LaunchPhaseTotals& operator+=(const LaunchPhaseTotals& more) noexcept {
    for (std::size_t i = 0; i < kLaunchPhases; ++i) ticks[i] += more.ticks[i];
    launches += more.launches;
    return *this;
  }
};

#ifdef TANDEM_LAUNCH_PHASES
inline constexpr bool kLaunchPhasesOn = true;
// This thread's totals since its last reset.
LaunchPhaseTotals launch_phase_totals() noexcept;
// Zeroes this thread's totals; the next launch's `between` counts from now.
void launch_phase_reset() noexcept;
// Ends step `p` (adds the ticks since the previous mark to it).
void launch_phase_mark(LaunchPhase p) noexcept;
#define TANDEM_LAUNCH_PHASE(p) ::tandem::detail::launch_phase_mark(::tandem::detail::LaunchPhase::p)
#else
inline constexpr bool kLaunchPhasesOn = false;
inline LaunchPhaseTotals launch_phase_totals() noexcept { return {}; }
inline void launch_phase_reset() noexcept {}
#define TANDEM_LAUNCH_PHASE(p) ((void)0)
#endif

}  // namespace tandem::detail
