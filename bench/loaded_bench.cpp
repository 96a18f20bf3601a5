// SPDX-License-Identifier: Apache-2.0
// The launch benchmarks again, with the runtime under load: 100,000 live
// allocations and 10,000 tracked submissions in flight (loaded_state.hpp).
// The measured launches touch none of the loaded allocations, so what they
// pay for is the runtime's size, not conflicts.
//
//   BM_RawLaunchLoaded / BM_TrackedSimtLaunchLoaded / BM_TrackedTileLaunchLoaded
//   BM_RawLaunchThreadsLoaded/K / BM_TrackedLaunchThreadsLoaded/K
//   BM_PairedLaunchThreadsLoaded/K   raw and tracked lane runs in alternation
//                                    (paired.hpp); counter ratio
//   BM_PairedSimtLaunchLoaded / BM_PairedTileLaunchLoaded   tracked launch
//                                    loaded against empty, in alternation
//   BM_LoadedHeap   host heap per live allocation and per in-flight submission
//
// Each checks afterwards that the load was still held; when it was not,
// the benchmark fails rather than report a figure not taken under load.
// The measured streams are drained, untimed, every kDrainEvery launches
// (below): the figures are launch costs, not the device's pace.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_env.hpp"
#include "lanes.hpp"
#include "loaded_state.hpp"
#include "paired.hpp"
#include "prepared_launch.hpp"

namespace tandem_bench {

namespace {

const std::int64_t kLaunches = scaled(20000);
const std::int64_t kPerThread = scaled(10000);
const std::int64_t kLoadedPairs = scaled(7);
// Hold left that a loaded benchmark needs (its longest run is K = 8 threads,
// a few tenths of a second on the H200): re-armed below this.
constexpr std::chrono::milliseconds kNeed{1200};
// Under this load the H200 runs the measured 1-block kernels at one per
// 5-8 us, slower than they are launched (stop 12: without drains the
// measured stream filled up, every launch then waited for the device, and
// raw and tracked alike timed ~8.1 us, the device's pace). So the measured
// stream is drained, untimed, every kDrainEvery launches: its queue stays
// far below the driver's limit and the figure is the launch's cost.
constexpr std::int64_t kDrainEvery = 256;
// Draining kDrainEvery launches takes a few ms under the load. Waiting
// behind the held work (a shared hardware queue) would take most of the
// >= kNeed of hold left: this is between the two.
constexpr double kMaxDrainMs = 500;

void single(benchmark::State& st, KernelKind kind, bool tracked) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = tracked ? nullptr : e->raw_or_skip(st);
  if (!tracked && d == nullptr) return;
  guarded(st, [&] {
    // Before the hold: a kernel's first use loads its module, which may wait
    // for the device, and so for the whole hold (loaded_state.cpp).
    PreparedLaunch k(*e, e->stream, kind);
    const LoadedState& load = LoadedState::ready(*e, kNeed);
    const std::size_t at_start = load.in_flight();
    double longest_drain_ms = 0;
    std::int64_t since_drain = 0;
    auto drain = [&] {
      const auto t0 = Clock::now();
      e->stream.synchronize();
      longest_drain_ms =
          std::max(longest_drain_ms, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      since_drain = 0;
    };
    for (auto _ : st) {
      if (tracked) {
        (void)k.tracked();
      } else {
        k.raw(*d);
      }
      if (++since_drain == kDrainEvery) {
        st.PauseTiming();
        drain();
        st.ResumeTiming();
      }
    }
    drain();
    st.counters["drain_ms"] = longest_drain_ms;  // the longest drain of one round
    st.counters["drain_every"] = static_cast<double>(kDrainEvery);
    load.check_held(st, at_start);
    if (longest_drain_ms > kMaxDrainMs) {
      throw std::runtime_error("the measured stream waited " + std::to_string(longest_drain_ms) +
                               " ms behind the held work: not a figure of launch cost");
    }
  });
}

void BM_RawLaunchLoaded(benchmark::State& st) { single(st, KernelKind::simt_copy, false); }
void BM_TrackedSimtLaunchLoaded(benchmark::State& st) { single(st, KernelKind::simt_copy, true); }
void BM_TrackedTileLaunchLoaded(benchmark::State& st) { single(st, KernelKind::tile_copy, true); }

void threads(benchmark::State& st, bool tracked) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  if (!tracked && e->raw_or_skip(st) == nullptr) return;
  guarded(st, [&] {
    const LoadedState& load = LoadedState::ready(*e, kNeed);
    const std::size_t at_start = load.in_flight();
    measure_lanes(st, *e, static_cast<int>(st.range(0)), kPerThread, tracked, kDrainEvery);
    load.check_held(st, at_start);
  });
}

void BM_RawLaunchThreadsLoaded(benchmark::State& st) { threads(st, false); }
void BM_TrackedLaunchThreadsLoaded(benchmark::State& st) { threads(st, true); }

// Pairs of lane runs under the load. Each pair starts with kNeed of hold
// left (both runs of K = 8 take well under it), so no re-arm falls inside a
// pair, and is checked to have stayed under load.
// Between its two runs nothing waits for the context (the load would hold
// that up): the lanes are drained by run_lanes, and a short pause lets
// retirement take their submissions as it does between unloaded segments.
void BM_PairedLaunchThreadsLoaded(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr || e->raw_or_skip(st) == nullptr) return;
  const int k = static_cast<int>(st.range(0));
  guarded(st, [&] {
    LanePairs pairs;
    for (auto _ : st) {
      for (std::int64_t p = 0; p < kLoadedPairs; ++p) {
        const LoadedState& load = LoadedState::ready(*e, kNeed);
        const std::size_t at_start = load.in_flight();
        const auto [raw, tracked] =
            run_pair([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, p,
                     [&] { return run_lanes(*e, k, kPerThread, false, {}, {}, kDrainEvery); },
                     [&] { return run_lanes(*e, k, kPerThread, true, {}, {}, kDrainEvery); });
        load.check_held(st, at_start);
        pairs.add(raw, tracked);
      }
      st.SetIterationTime(pairs.seconds());
    }
    pairs.report(st, k);
  });
}

// Launch segments in the empty and the loaded state, in alternation, so
// that loaded against empty pairs figures taken moments apart (as
// paired_bench.cpp does for raw against tracked: the VM's launch cost
// drifts by up to a third within minutes, and two separate benchmarks
// minutes apart flipped this ratio between 0.97 and 1.39). Each pair loads
// the state with a short hold and takes it off again (loaded_state.hpp),
// idle first when p is even, loaded first when odd. Inside each state, raw
// and tracked segments alternate the same way, where the driver is reachable
// (not on the host-only backend): the raw figures are the driver's own
// share of the slow-down. Both states drain the measured stream, untimed,
// every kDrainEvery launches, as the loaded benchmarks above do.
//   counters: ratio (tracked loaded / tracked empty, median of the pairs),
//   empty_ns, loaded_ns, raw_ratio, raw_empty_ns, raw_loaded_ns, pairs
const std::int64_t kStatePairs = scaled(5);
const std::int64_t kStateSegment = scaled(2000);
// Covers arming (10,000 launches, a few tens of ms) and the loaded segments
// (under 0.1 s on the H200); each pair then waits out what is left of it.
constexpr std::chrono::milliseconds kPairHold{600};

void paired_loaded(benchmark::State& st, KernelKind kind) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_why.empty() ? &e->raw : nullptr;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, kind);
    LoadedState& load = LoadedState::empty(*e);
    double longest_drain_ms = 0;
    auto segment = [&](auto launch) {
      double ns = 0;
      for (std::int64_t done = 0; done < kStateSegment;) {
        const std::int64_t n = std::min(kDrainEvery, kStateSegment - done);
        const auto t0 = Clock::now();
        for (std::int64_t i = 0; i < n; ++i) launch();
        const auto t1 = Clock::now();
        e->stream.synchronize();
        ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
        longest_drain_ms =
            std::max(longest_drain_ms, std::chrono::duration<double, std::milli>(Clock::now() - t1).count());
        done += n;
      }
      return ns / static_cast<double>(kStateSegment);
    };
    // {raw, tracked} ns per launch in the present state; raw 0 without a driver.
    auto measure = [&](std::int64_t p) {
      const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
      const auto tracked = [&] { return segment([&] { (void)k.tracked(); }); };
      if (d == nullptr) {
        pause();
        return std::pair{0.0, tracked()};
      }
      return run_pair(
          pause, p, [&] { return segment([&] { k.raw(*d); }); }, tracked);
    };
    TimePairs tracked_pairs, raw_pairs;  // empty against loaded
    double seconds = 0;
    for (auto _ : st) {
      for (std::int64_t p = 0; p < kStatePairs; ++p) {
        const auto [empty, loaded] = run_pair([] {}, p,
                                              [&] {
                                                load.unload();
                                                return measure(p);
                                              },
                                              [&] {
                                                load.load(kPairHold);
                                                const std::size_t at_start = load.in_flight();
                                                const auto f = measure(p);
                                                load.check_held(st, at_start);
                                                return f;
                                              });
        tracked_pairs.add(empty.second, loaded.second);
        if (d != nullptr) raw_pairs.add(empty.first, loaded.first);
        seconds += (empty.first + empty.second + loaded.first + loaded.second) *
                   static_cast<double>(kStateSegment) * 1e-9;
      }
      st.SetIterationTime(seconds);
    }
    load.unload();
    if (d != nullptr) raw_pairs.report(st, "raw_empty_ns", "raw_loaded_ns", "raw_ratio");
    tracked_pairs.report(st, "empty_ns", "loaded_ns");
    st.counters["drain_ms"] = longest_drain_ms;
    if (longest_drain_ms > kMaxDrainMs) {
      throw std::runtime_error("the measured stream waited " + std::to_string(longest_drain_ms) +
                               " ms behind the held work: not a figure of launch cost");
    }
  });
}

void BM_PairedSimtLaunchLoaded(benchmark::State& st) { paired_loaded(st, KernelKind::simt_copy); }
void BM_PairedTileLaunchLoaded(benchmark::State& st) { paired_loaded(st, KernelKind::tile_copy); }

void BM_LoadedHeap(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    const LoadedState& load = LoadedState::ready(*e, std::chrono::milliseconds(0));
    for (auto _ : st) st.SetIterationTime(0.0);  // counters only (see BM_TrackerFootprint)
    st.counters["heap_per_allocation_bytes"] = load.heap_per_allocation();
    st.counters["heap_per_submission_bytes"] = load.heap_per_submission();
  });
}

}  // namespace

void register_loaded_benchmarks() {
  for (auto [name, fn] : {std::pair{"BM_RawLaunchLoaded", &BM_RawLaunchLoaded},
                          std::pair{"BM_TrackedSimtLaunchLoaded", &BM_TrackedSimtLaunchLoaded},
                          std::pair{"BM_TrackedTileLaunchLoaded", &BM_TrackedTileLaunchLoaded}}) {
    benchmark::RegisterBenchmark(name, fn)->Iterations(kLaunches)->UseRealTime();
  }
  for (auto [name, fn] : {std::pair{"BM_RawLaunchThreadsLoaded", &BM_RawLaunchThreadsLoaded},
                          std::pair{"BM_TrackedLaunchThreadsLoaded", &BM_TrackedLaunchThreadsLoaded}}) {
    benchmark::RegisterBenchmark(name, fn)
        ->RangeMultiplier(2)
        ->Range(1, kMaxLanes)
        ->Iterations(1)
        ->UseManualTime();
  }
  benchmark::RegisterBenchmark("BM_PairedLaunchThreadsLoaded", BM_PairedLaunchThreadsLoaded)
      ->RangeMultiplier(2)
      ->Range(1, kMaxLanes)
      ->Iterations(1)
      ->UseManualTime();
  for (auto [name, fn] : {std::pair{"BM_PairedSimtLaunchLoaded", &BM_PairedSimtLaunchLoaded},
                          std::pair{"BM_PairedTileLaunchLoaded", &BM_PairedTileLaunchLoaded}}) {
    benchmark::RegisterBenchmark(name, fn)->Iterations(1)->UseManualTime();
  }
  benchmark::RegisterBenchmark("BM_LoadedHeap", BM_LoadedHeap)
      ->Iterations(1)
      ->Repetitions(1)
      ->UseManualTime();
}

}  // namespace tandem_bench
