// SPDX-License-Identifier: Apache-2.0
// Raw and tracked launches measured in alternation, so that each ratio
// pairs two figures taken a few milliseconds apart. The lent H200 is a VM
// whose launch cost drifts by up to a third between runs and within one
// (two medians of BM_RawLaunch and BM_TrackedSimtLaunch taken seconds
// apart gave 1.10× in one run and 1.34× in the next, same build): a ratio
// of separately taken medians measures the drift as much as tandem. Here
// every pair is raw then tracked or tracked then raw (alternating, so order
// effects cancel), each segment starts from an idle runtime (drained,
// retirement asleep), and the figure is the median of the pair ratios.
//
//   BM_PairedSimtLaunch / BM_PairedTileLaunch   counters ratio, raw_ns, tracked_ns,
//                                               overhead_ns (median of the pairs'
//                                               tracked - raw ns per launch)
//   BM_PairedCatalogSimtLaunch / BM_PairedCatalogTileLaunch   the same with the
//                                               tracked side through kernels::launch
//                                               (argument checks + packing per call)
//   BM_PairedLaunchThreads/K                    counters ratio (tracked / raw launches/s),
//                                               overhead_ns (per launch on its thread)
#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench_env.hpp"
#include "driver_timing.hpp"
#include "lanes.hpp"
#include "paired.hpp"
#include "pmu_counters.hpp"
#include "prepared_launch.hpp"
#include "tandem/detail/launch_phases.hpp"

namespace tandem_bench {

namespace {

const std::int64_t kPairs = scaled(31);
const std::int64_t kSegment = scaled(2000);  // launches per segment
const std::int64_t kThreadPairs = scaled(9);
const std::int64_t kPerThread = scaled(10000);

// Counters of a run with TANDEM_BENCH_DRIVER_TIMING=1: per tracked launch,
// the driver's launch and event record on the calling thread, tandem's own
// part (the rest), and the retirement thread's event queries meanwhile.
void report_driver_split(benchmark::State& st, const DriverTimes& t, double tracked_total_ns) {
  const auto at = [](const auto& slots, DriverCall c) { return slots[static_cast<std::size_t>(c)]; };
  const DriverTime launch = at(t.main, DriverCall::launch);
  const DriverTime record = at(t.main, DriverCall::event_record);
  const DriverTime wait = at(t.main, DriverCall::stream_wait_event);
  const DriverTime query = at(t.other, DriverCall::event_query);
  if (launch.calls == 0) return;
  const auto per = [](std::uint64_t x, std::uint64_t n) {
    return n ? static_cast<double>(x) / static_cast<double>(n) : 0.0;
  };
  const double launches = static_cast<double>(launch.calls);
  st.counters["drv_launch_ns"] = per(launch.ns, launch.calls);
  st.counters["drv_record_ns"] = per(record.ns, record.calls);
  st.counters["drv_records_per_launch"] = per(record.calls, launch.calls);
  st.counters["drv_own_ns"] =
      (tracked_total_ns - static_cast<double>(launch.ns + record.ns + wait.ns)) / launches;
  st.counters["drv_retire_queries_per_launch"] = per(query.calls, launch.calls);
  st.counters["drv_retire_query_ns"] = per(query.ns, query.calls);
}

// Counters of a build with TANDEM_LAUNCH_PHASES=ON: per tracked launch, the
// ns of each step (launch_phases.hpp), the segments' time shared out in
// proportion to the steps' time stamp counter ticks.
void report_launch_phases(benchmark::State& st, const tandem::detail::LaunchPhaseTotals& t,
                          double tracked_total_ns) {
  std::uint64_t ticks = 0;
  for (const std::uint64_t x : t.ticks) ticks += x;
  if (ticks == 0 || t.launches == 0) return;
  const double ns_per_tick = tracked_total_ns / static_cast<double>(ticks);
  for (std::size_t i = 0; i < tandem::detail::kLaunchPhases; ++i) {
    st.counters[std::string("phase_") + tandem::detail::kLaunchPhaseNames[i] + "_ns"] =
        static_cast<double>(t.ticks[i]) * ns_per_tick / static_cast<double>(t.launches);
  }
}

// `catalog`: the tracked side launches through kernels::launch rather than
// tandem::launch with prepared parameters.
void paired_launch(benchmark::State& st, KernelKind kind, bool catalog = false) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    // TANDEM_BENCH_FRESH_STREAM (diagnostic): 1, a stream made for this
    // benchmark rather than the one the whole suite used before it; borrow,
    // a new tandem stream over that one's driver stream (which of the two
    // carries what the suite left behind).
    const char* fresh_env = std::getenv("TANDEM_BENCH_FRESH_STREAM");
    const std::string_view fresh = fresh_env ? fresh_env : "0";
    if (fresh != "0" && fresh != "1" && fresh != "borrow") {
      throw std::runtime_error("TANDEM_BENCH_FRESH_STREAM must be 0, 1 or borrow, not '" +
                               std::string(fresh) + "'");
    }
    const tandem::Stream stream = fresh == "1"        ? tandem::Stream::create(e->ctx)
                                  : fresh == "borrow" ? tandem::Stream::borrow(e->ctx, e->stream.native())
                                                      : e->stream;
    // TANDEM_BENCH_TRIM=1 (diagnostic): Context::trim first, which destroys
    // the idle events and records the suite left on its streams.
    if (env_flag("TANDEM_BENCH_TRIM")) {
      e->drain();
      e->ctx.trim();
    }
    PreparedLaunch k(*e, stream, kind);
    const LeakWatch leaks(*e);
    // TANDEM_BENCH_PMU: each kind's segments' CPU counters, this thread.
    std::optional<PmuCounters> pmu;
    if (env_flag("TANDEM_BENCH_PMU")) pmu.emplace();
    PmuCounts raw_pmu, tracked_pmu;
    auto counted = [&](PmuCounts& into, auto segment) {
      if (!pmu) return segment();
      const PmuCounts before = pmu->read();
      const double ns = segment();
      into += pmu->read().since(before);
      return ns;
    };
    auto raw_segment = [&] {
      return counted(raw_pmu, [&] { return per_call_ns(kSegment, [&] { k.raw(*d); }); });
    };
    DriverTimes driver;  // TANDEM_BENCH_DRIVER_TIMING: the tracked segments' driver calls
    double tracked_total_ns = 0;
    tandem::detail::LaunchPhaseTotals phases;  // TANDEM_LAUNCH_PHASES builds
    auto tracked_segment = [&] {
      const DriverTimes before = driver_times();
      tandem::detail::launch_phase_reset();
      const double ns = counted(tracked_pmu, [&] {
        return catalog ? per_call_ns(kSegment, [&] { (void)k.catalog(); })
                       : per_call_ns(kSegment, [&] { (void)k.tracked(); });
      });
      phases += tandem::detail::launch_phase_totals();
      driver += driver_times().since(before);
      tracked_total_ns += ns * static_cast<double>(kSegment);
      return ns;
    };
    TimePairs pairs;
    double total = 0;
    for (auto _ : st) {
      for (std::int64_t p = 0; p < kPairs; ++p) {
        const auto [raw, tracked] = run_pair([&] { settle(*e); }, p, raw_segment, tracked_segment);
        pairs.add(raw, tracked);
        total += (raw + tracked) * static_cast<double>(kSegment) * 1e-9;
      }
      st.SetIterationTime(total);
    }
    settle(*e);
    pairs.report(st, "raw_ns", "tracked_ns", "ratio", "overhead_ns");
    if (driver_timing_on()) report_driver_split(st, driver, tracked_total_ns);
    if (tandem::detail::kLaunchPhasesOn) report_launch_phases(st, phases, tracked_total_ns);
    if (pmu) {
      if (!pmu->any()) st.SetLabel("TANDEM_BENCH_PMU: no counter: " + pmu->refused());
      const double launches = static_cast<double>(pairs.size() * kSegment);
      report_pmu(st, "pmu_raw", raw_pmu, launches);
      report_pmu(st, "pmu_tracked", tracked_pmu, launches);
    }
    leaks.report(st);
  });
}

void BM_PairedSimtLaunch(benchmark::State& st) { paired_launch(st, KernelKind::simt_copy); }
void BM_PairedTileLaunch(benchmark::State& st) { paired_launch(st, KernelKind::tile_copy); }
void BM_PairedCatalogSimtLaunch(benchmark::State& st) { paired_launch(st, KernelKind::simt_copy, true); }
void BM_PairedCatalogTileLaunch(benchmark::State& st) { paired_launch(st, KernelKind::tile_copy, true); }

void BM_PairedLaunchThreads(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr || e->raw_or_skip(st) == nullptr) return;
  const int threads = static_cast<int>(st.range(0));
  guarded(st, [&] {
    const LeakWatch leaks(*e);
    LanePairs pairs;
    for (auto _ : st) {
      for (std::int64_t p = 0; p < kThreadPairs; ++p) {
        const auto [raw, tracked] =
            run_pair([&] { settle(*e); }, p, [&] { return run_lanes(*e, threads, kPerThread, false); },
                     [&] { return run_lanes(*e, threads, kPerThread, true); });
        pairs.add(raw, tracked);
      }
      st.SetIterationTime(pairs.seconds());
    }
    settle(*e);
    pairs.report(st, threads);
    leaks.report(st);
  });
}

}  // namespace

void register_paired_benchmarks() {
  for (auto [name, fn] : {std::pair{"BM_PairedSimtLaunch", &BM_PairedSimtLaunch},
                          std::pair{"BM_PairedTileLaunch", &BM_PairedTileLaunch},
                          std::pair{"BM_PairedCatalogSimtLaunch", &BM_PairedCatalogSimtLaunch},
                          std::pair{"BM_PairedCatalogTileLaunch", &BM_PairedCatalogTileLaunch}}) {
    benchmark::RegisterBenchmark(name, fn)->Iterations(1)->UseManualTime();
  }
  benchmark::RegisterBenchmark("BM_PairedLaunchThreads", BM_PairedLaunchThreads)
      ->RangeMultiplier(2)
      ->Range(1, kMaxLanes)
      ->Iterations(1)
      ->UseManualTime();
}

}  // namespace tandem_bench
