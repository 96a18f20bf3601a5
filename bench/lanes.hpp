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
#include <string>

#include "bench_env.hpp"

namespace tandem_bench {

struct LaneRun {
  double seconds = 0;           // wall time, start latch to the last lane drained
  double launches_per_s = 0;    // aggregate
  // When the fastest and the slowest lane had submitted their last launch,
  // from the start latch: their ratio says whether the aggregate is held
  // back by one starved lane or by all of them alike.
  double fastest_lane_s = 0;
  double slowest_lane_s = 0;
  std::string error;            // the first thread's failure, if any
};

// What a raw lane does besides launching: record an event on its stream
// after every `event_every`-th launch (0: never), and whether another
// thread keeps querying the lanes' events meanwhile (as tandem's retirement
// thread does). The driver-side half of a tracked launch, without tandem.
struct RawLaneOptions {
  int event_every = 0;
  bool querier = false;
};

// tracked: tandem::launch (future dropped); else raw cuLaunchKernel (the
// thread makes the context current first).
LaneRun run_lanes(Env& e, int threads, std::int64_t per_thread, bool tracked, RawLaneOptions raw = {});

// One benchmark iteration = one run_lanes; manual time = its wall time;
// counters launches_per_s and threads.
void measure_lanes(benchmark::State& st, Env& e, int threads, std::int64_t per_thread, bool tracked);

}  // namespace tandem_bench
