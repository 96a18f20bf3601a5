// SPDX-License-Identifier: Apache-2.0
// driver_timing.hpp — diagnostic (TANDEM_BENCH_DRIVER_TIMING=1): the
// backend with the time spent in its per-launch calls counted, split by the
// calling thread (the benchmark's main thread, or any other: the
// retirement thread). It tells which part of a tracked launch grows when
// one does: the driver's launch, its event record, or tandem's own path
// (the tracked time less both). Each timed call costs two clock reads, so
// no ratio taken with it on is a figure.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "tandem/driver/backend.hpp"

namespace tandem_bench {

enum class DriverCall : std::uint8_t { launch, event_record, event_query, stream_wait_event };
inline constexpr std::size_t kDriverCalls = 4;

struct DriverTime {
  std::uint64_t calls = 0;
  std::uint64_t ns = 0;
};

// Totals since the backend was made; subtract two to time a stretch.
struct DriverTimes {
  std::array<DriverTime, kDriverCalls> main{};   // the thread that made the backend
  std::array<DriverTime, kDriverCalls> other{};  // every other thread
  [[nodiscard]] DriverTimes since(const DriverTimes& earlier) const;
  DriverTimes& operator+=(const DriverTimes& more);
};

// Wraps `inner`; while it lives, driver_times() reads its totals.
std::unique_ptr<tandem::driver::Backend> make_driver_timing_backend(
    std::unique_ptr<tandem::driver::Backend> inner);
// True when a timing backend is installed.
[[nodiscard]] bool driver_timing_on();
[[nodiscard]] DriverTimes driver_times();

// The call log (TANDEM_BENCH_DRIVER_LOG=path, on with the timing backend):
// mem_free_async and mem_alloc_async are logged as these; a benchmark adds
// marks of its own (the round trip's phases: 100 call, 101 launch returned,
// 102 retired, 103 freed). No-ops without the log.
inline constexpr std::uint32_t kLogFree = 10, kLogAlloc = 11;
inline constexpr std::uint32_t kMarkTripStart = 100, kMarkLaunched = 101, kMarkRetired = 102,
                               kMarkFreed = 103;
void driver_log_mark(std::uint32_t what);
// Writes the log to the path, one line per entry (a header line says what
// the columns hold).
void driver_log_dump();

}  // namespace tandem_bench
