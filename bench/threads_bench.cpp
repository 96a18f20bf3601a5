// SPDX-License-Identifier: Apache-2.0
// Launch throughput from K = 1, 2, 4, 8 host threads, each on its own
// stream: raw cuLaunchKernel against tracked launches (future dropped), the
// runtime otherwise idle. Counter launches_per_s is the aggregate.
//
//   BM_RawLaunchThreads/K   BM_TrackedLaunchThreads/K
// (the same under load: loaded_bench.cpp)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_env.hpp"
#include "lanes.hpp"
#include "stall_sampler.hpp"

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
    st.counters["launches_per_s"] =
        seconds > 0 ? static_cast<double>(rounds * st.range(0) * kPerThread) / seconds : 0;
  });
}

// Diagnostics of the lanes (not a judged figure): K lanes, raw or tracked
// (range(1)), pinned one per physical core or not (range(2)), each launch
// timed. Five runs; counters for the median run by spread, and the
// per-lane table of the worst run on stderr: is the slowest lane slow at
// every launch, stalled now and then, or off the CPU?
void BM_LaneDetail(benchmark::State& st) {
  Env* e = Env::get(st);
  const bool tracked = st.range(1) != 0;
  if (e == nullptr || (!tracked && e->raw_or_skip(st) == nullptr)) return;
  const int threads = static_cast<int>(st.range(0));
  const LaneProbe probe{true, st.range(2) != 0};
  guarded(st, [&] {
    std::vector<LaneRun> runs;
    std::vector<double> retire_cpu;
    double seconds = 0;
    for (auto _ : st) {
      for (int r = 0; r < 5; ++r) {
        e->drain();
        const RetireThread before = retire_thread();
        LaneRun run = run_lanes(*e, threads, kPerThread, tracked, {}, probe);
        if (!run.error.empty()) throw std::runtime_error(run.error);
        retire_cpu.push_back(retire_thread().cpu_s - before.cpu_s);
        seconds += run.seconds;
        runs.push_back(std::move(run));
      }
      st.SetIterationTime(seconds);
    }
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return lane_spread(runs[a]) < lane_spread(runs[b]); });
    const LaneRun& mid = runs[order[order.size() / 2]];
    const LaneRun& worst = runs[order.back()];
    auto slowest = [](const LaneRun& r) {
      return *std::max_element(
          r.detail.begin(), r.detail.end(),
          [](const LaneDetail& a, const LaneDetail& b) { return a.submit_s < b.submit_s; });
    };
    const LaneDetail s = slowest(mid);
    st.counters["launches_per_s"] = mid.launches_per_s;
    st.counters["lane_spread"] = lane_spread(mid);
    st.counters["slowest_stall_fraction"] = s.submit_s > 0 ? s.stall_s / s.submit_s : 0;
    st.counters["slowest_cpu_fraction"] = s.submit_s > 0 ? s.cpu_s / s.submit_s : 0;
    st.counters["retire_cpu_s"] = retire_cpu[order[order.size() / 2]];
    std::fprintf(stderr,
                 "# BM_LaneDetail/%d/%s/%s worst run of 5: %.0f launches/s, spread %.2f, retirement thread "
                 "on cpu %d\n",
                 threads, tracked ? "tracked" : "raw", probe.pin ? "pinned" : "free", worst.launches_per_s,
                 lane_spread(worst), retire_thread().cpu);
    std::size_t sampled = 0;
    for (const LaneRun& r : runs) sampled += r.stall_samples.size();
    std::fprintf(stderr, "#   stalled launches sampled in the 5 runs: %zu\n", sampled);
    for (const std::string& text : worst.stall_samples) std::fprintf(stderr, "#   stall: %s\n", text.c_str());
    std::fprintf(stderr, "#   lane  submit_ms  cpu_ms  stalls  stall_ms  longest_us  cpu\n");
    for (std::size_t t = 0; t < worst.detail.size(); ++t) {
      const LaneDetail& d = worst.detail[t];
      std::fprintf(stderr, "#   %4zu  %9.2f  %6.2f  %6lld  %8.2f  %10.1f  %d->%d\n", t, d.submit_s * 1e3,
                   d.cpu_s * 1e3, static_cast<long long>(d.stalls), d.stall_s * 1e3, d.longest_us,
                   d.cpu_first, d.cpu_last);
    }
  });
}

}  // namespace

void register_thread_benchmarks() {
  benchmark::RegisterBenchmark("BM_LaneDetail", BM_LaneDetail)
      ->ArgsProduct({{4, 8}, {0, 1}, {0, 1}})
      ->Iterations(1)
      ->UseManualTime();
  benchmark::RegisterBenchmark("BM_RawLaunchThreadsEvents", BM_RawLaunchThreadsEvents)
      ->ArgsProduct({{1, 8}, {1, 2, 8}, {0, 1}})
      ->Iterations(3)
      ->UseManualTime();
  for (auto [name, fn] : {std::pair{"BM_RawLaunchThreads", &BM_RawLaunchThreads},
                          std::pair{"BM_TrackedLaunchThreads", &BM_TrackedLaunchThreads}}) {
    benchmark::RegisterBenchmark(name, fn)
        ->RangeMultiplier(2)
        ->Range(1, kMaxLanes)
        ->Iterations(1)
        ->UseManualTime();
  }
}

}  // namespace tandem_bench
