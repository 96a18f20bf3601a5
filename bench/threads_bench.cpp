// Launch throughput from K = 1, 2, 4, 8 host threads, each on its own
// stream: raw cuLaunchKernel against tracked launches (future dropped), the
// runtime otherwise idle. Counter launches_per_s is the aggregate.
//
//   BM_RawLaunchThreads/K   BM_TrackedLaunchThreads/K
// (the same under load: loaded_bench.cpp)
#include <stdexcept>
#include <utility>

#include "bench_env.hpp"
#include "lanes.hpp"

namespace tandem_bench {

namespace {

const std::int64_t kPerThread = scaled(10000);

void BM_RawLaunchThreads(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr || e->raw_or_skip(st) == nullptr) return;
  guarded(st, [&] { measure_lanes(st, *e, static_cast<int>(st.range(0)), kPerThread, false); });
}

void BM_TrackedLaunchThreads(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    const LeakWatch leaks(*e);
    measure_lanes(st, *e, static_cast<int>(st.range(0)), kPerThread, true);
    leaks.report(st);
  });
}

// Raw lanes with the driver work of a tracked launch: an event recorded
// every N-th launch (N = range(1)), with a thread querying the lanes' events
// every 2 µs when range(2) is 1. Says how much of a tracked figure the
// driver's own event work costs, and whether the pattern matters.
void BM_RawLaunchThreadsEvents(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr || e->raw_or_skip(st) == nullptr) return;
  const RawLaneOptions o{static_cast<int>(st.range(1)), st.range(2) != 0};
  guarded(st, [&] {
    double seconds = 0;
    std::int64_t rounds = 0;
    for (auto _ : st) {
      const LaneRun r = run_lanes(*e, static_cast<int>(st.range(0)), kPerThread, false, o);
      if (!r.error.empty()) throw std::runtime_error(r.error);
      st.SetIterationTime(r.seconds);
      seconds += r.seconds;
      ++rounds;
    }
    st.counters["launches_per_s"] = seconds > 0 ? static_cast<double>(rounds * st.range(0) * kPerThread) / seconds : 0;
  });
}

}  // namespace

void register_thread_benchmarks() {
  benchmark::RegisterBenchmark("BM_RawLaunchThreadsEvents", BM_RawLaunchThreadsEvents)
      ->ArgsProduct({{1, 8}, {1, 2, 8}, {0, 1}})
      ->Iterations(3)
      ->UseManualTime();
  for (auto [name, fn] : {std::pair{"BM_RawLaunchThreads", &BM_RawLaunchThreads},
                          std::pair{"BM_TrackedLaunchThreads", &BM_TrackedLaunchThreads}}) {
    benchmark::RegisterBenchmark(name, fn)->RangeMultiplier(2)->Range(1, kMaxLanes)->Iterations(1)->UseManualTime();
  }
}

}  // namespace tandem_bench
