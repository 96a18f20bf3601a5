// Launch throughput from K = 1, 2, 4, 8 host threads, each on its own
// stream: raw cuLaunchKernel against tracked launches (future dropped), the
// runtime otherwise idle. Counter launches_per_s is the aggregate.
//
//   BM_RawLaunchThreads/K   BM_TrackedLaunchThreads/K
// (the same under load: loaded_bench.cpp)
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

}  // namespace

void register_thread_benchmarks() {
  for (auto [name, fn] : {std::pair{"BM_RawLaunchThreads", &BM_RawLaunchThreads},
                          std::pair{"BM_TrackedLaunchThreads", &BM_TrackedLaunchThreads}}) {
    benchmark::RegisterBenchmark(name, fn)->RangeMultiplier(2)->Range(1, kMaxLanes)->Iterations(1)->UseManualTime();
  }
}

}  // namespace tandem_bench
