// SPDX-License-Identifier: Apache-2.0
#include "tandem/detail/launch_phases.hpp"

#ifdef TANDEM_LAUNCH_PHASES
#include <x86intrin.h>

namespace tandem::detail {

namespace {
struct PhaseClock {
  LaunchPhaseTotals totals;
  std::uint64_t last = 0;
};
thread_local PhaseClock t_clock;
}  // namespace

LaunchPhaseTotals launch_phase_totals() noexcept { return t_clock.totals; }

void launch_phase_reset() noexcept {
  t_clock.totals = {};
  t_clock.last = __rdtsc();
}

void launch_phase_mark(LaunchPhase p) noexcept {
  const std::uint64_t now = __rdtsc();
  PhaseClock& c = t_clock;
  c.totals.ticks[static_cast<std::size_t>(p)] += now - c.last;
  c.last = now;
  if (p == LaunchPhase::finish) ++c.totals.launches;
}

}  // namespace tandem::detail
#endif
