// SPDX-License-Identifier: Apache-2.0
// lanes.hpp — K host threads launching at once, each on its own lane stream.
//
// Each thread prepares its SIMT copy (its own two views on its own lane)
// before the clock starts; all start together on a latch; the clock stops
// when the last thread has submitted its launches and its stream has
// drained. Aggregate launches/s = K * per_thread / that wall time. Only the
// lanes are synchronized (never the whole context), so this runs under the
// loaded state too.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_env.hpp"

namespace tandem_bench {

// One lane's run, looked at closely (LaneProbe::detail): whether a slow
// lane was slow at every launch, stalled now and then, or off the CPU.
struct LaneDetail {
  double submit_s = 0;      // start latch to its last launch submitted
  double cpu_s = 0;         // the thread's CPU time over the same span
  std::int64_t stalls = 0;  // launches that took >= kStallUs
  double stall_s = 0;       // their time together
  double longest_us = 0;    // the slowest launch
  int cpu_first = -1;       // the CPU it started and ended on
  int cpu_last = -1;
  static constexpr double kStallUs = 20;
};

struct LaneRun {
  double seconds = 0;         // wall time, start latch to the last lane drained (rounds: their sum)
  double launches_per_s = 0;  // aggregate
  // When the fastest and the slowest lane had submitted their last launch,
  // from the start latch: their ratio says whether the aggregate is held
  // back by one starved lane or by all of them alike.
  double fastest_lane_s = 0;
  double slowest_lane_s = 0;
  std::string error;               // the first thread's failure, if any
  std::vector<LaneDetail> detail;  // per lane, when LaneProbe::detail asked for it
  // With detail: launches that ran past 5 ms (TANDEM_BENCH_STALL_US), each
  // sampled once (what the thread was doing: stall_sampler.hpp).
  std::vector<std::string> stall_samples;
};

// What a raw lane does besides launching: record an event on its stream
// after every `event_every`-th launch (0: never), and whether another
// thread keeps querying the lanes' events meanwhile (as tandem's retirement
// thread does). The driver-side half of a tracked launch, without tandem.
struct RawLaneOptions {
  int event_every = 0;
  bool querier = false;
};

// Diagnostics, off in every figure the report judges: `detail` times each
// launch (a clock read per launch) and fills LaneRun::detail; `pin` pins
// lane t to the first CPU of the t-th physical core.
struct LaneProbe {
  bool detail = false;
  bool pin = false;
};

// tracked: tandem::launch (future dropped); else raw cuLaunchKernel (the
// thread makes the context current first).
//
// drain_every > 0: the lanes launch in rounds of that many launches each,
// drain their streams between rounds and start the next round together;
// only the rounds' launching is timed (each round from its common start to
// the last lane's last launch), never a drain. For the loaded state, where
// the device runs these 1-block kernels slower than they are launched: a
// lane whose stream filled up would wait for the device, and the figure
// would time the device, not the launches. Not with probe.detail.
LaneRun run_lanes(Env& e, int threads, std::int64_t per_thread, bool tracked, RawLaneOptions raw = {},
                  LaneProbe probe = {}, std::int64_t drain_every = 0);

// The slowest lane's submitting time over the fastest's: 1 when the lanes
// kept pace with each other (0 when the run failed).
inline double lane_spread(const LaneRun& r) {
  return r.fastest_lane_s > 0 ? r.slowest_lane_s / r.fastest_lane_s : 0.0;
}

// K threads from a common start, for loops other than the lanes' launches
// (sustained_bench.cpp): each thread runs prepare(t) (untimed), all wait on
// one latch, then body(t, start) runs from the common start. `seconds` is
// the wall time from that start until the last body returned; `error` is
// the first exception a thread threw (a thread whose prepare threw skips
// its body; the others run to their end).
struct TogetherRun {
  double seconds = 0;
  std::string error;
};
TogetherRun run_together(int threads, const std::function<void(int)>& prepare,
                         const std::function<void(int, Clock::time_point)>& body);

// One benchmark iteration = one run_lanes; manual time = its wall time (or,
// with drain_every, its rounds' launching time); counters launches_per_s and
// threads.
void measure_lanes(benchmark::State& st, Env& e, int threads, std::int64_t per_thread, bool tracked,
                   std::int64_t drain_every = 0);

}  // namespace tandem_bench
