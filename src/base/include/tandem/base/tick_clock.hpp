// SPDX-License-Identifier: Apache-2.0
// tick_clock.hpp — a cheap clock for timings taken on hot paths: the
// scenario engine's per-step and per-submission timings (each launch step
// reads it four times) and the runtime's submission stamp for
// ContextOptions::measure_retirement_latency (one read per submission).
// The CPU's time-stamp counter where it is invariant (x86 with an
// invariant TSC: ~9 ns a read in a VM, against ~30 ns for steady_clock
// there), else steady_clock. Ticks become ns with a factor measured against
// steady_clock since the clock was made.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define TANDEM_TICK_CLOCK_TSC 1
#endif

namespace tandem::base {

class TickClock {
 public:
  // Starts the calibration.
  TickClock() noexcept : tsc_(invariant_tsc()), steady0_(steady_ns()), ticks0_(ticks()) {}

  [[nodiscard]] std::uint64_t ticks() const noexcept {
#ifdef TANDEM_TICK_CLOCK_TSC
    if (tsc_) return __rdtsc();
#endif
    return steady_ns();
  }

  // ns per tick since construction (1 on steady_clock). Reads steady_clock:
  // ask once per batch of conversions, not per tick.
  [[nodiscard]] double ns_per_tick() const noexcept {
    if (!tsc_) return 1.0;
    const std::uint64_t dt = ticks() - ticks0_;
    const std::uint64_t dn = steady_ns() - steady0_;
    return dt == 0 ? 1.0 : static_cast<double>(dn) / static_cast<double>(dt);
  }

  [[nodiscard]] bool uses_tsc() const noexcept { return tsc_; }

 private:
  static std::uint64_t steady_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }
  static bool invariant_tsc() noexcept {
#ifdef TANDEM_TICK_CLOCK_TSC
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0x80000007u, &a, &b, &c, &d) == 0) return false;
    return (d & (1u << 8)) != 0;  // CPUID.80000007H:EDX[8], invariant TSC
#else
    return false;
#endif
  }

  bool tsc_;
  std::uint64_t steady0_;
  std::uint64_t ticks0_;
};

}  // namespace tandem::base
