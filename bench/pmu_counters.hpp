// SPDX-License-Identifier: Apache-2.0
// pmu_counters.hpp — diagnostic (TANDEM_BENCH_PMU=1): the CPU's
// performance counters (perf_event_open, user mode, the calling thread
// only) over a stretch of the benchmark: cycles, instructions, L1 data read
// misses, last-level cache misses and data TLB read misses. They tell
// whether a tracked launch that grows inside the suite runs more
// instructions or waits on memory. Counters the machine (a VM's PMU, a
// container's seccomp profile) does not give read as absent, never as 0.
#pragma once

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace tandem_bench {

enum class PmuEvent : std::uint8_t { cycles, instructions, l1d_miss, llc_miss, dtlb_miss };
inline constexpr std::size_t kPmuEvents = 5;

// Counts since open(); one per event, absent where the kernel refused it.
struct PmuCounts {
  std::array<std::optional<std::uint64_t>, kPmuEvents> v{};
  [[nodiscard]] PmuCounts since(const PmuCounts& earlier) const;
  PmuCounts& operator+=(const PmuCounts& more);
};

// The calling thread's counters. Not copyable; closes them on destruction.
class PmuCounters {
 public:
  PmuCounters();
  ~PmuCounters();
  PmuCounters(const PmuCounters&) = delete;
  PmuCounters& operator=(const PmuCounters&) = delete;

  [[nodiscard]] bool any() const noexcept;
  [[nodiscard]] PmuCounts read() const;
  // Why the first refused event was refused ("" when none was).
  [[nodiscard]] const std::string& refused() const noexcept { return refused_; }

 private:
  std::array<int, kPmuEvents> fd_{};
  std::string refused_;
};

// Counters `prefix`_cycles, _instr, _l1d_miss, _llc_miss, _dtlb_miss per
// `per` operations, for the events present.
void report_pmu(benchmark::State& st, const std::string& prefix, const PmuCounts& c, double per);

}  // namespace tandem_bench
