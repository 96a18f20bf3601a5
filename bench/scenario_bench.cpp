// SPDX-License-Identifier: Apache-2.0
// The scenario engine's launch step against the same kernels::launch called
// directly (issue 22): one process, one platform, the same catalog kernel
// (SIMT scale, x *= a, on 4096 f32) on one stream, N launches each way.
//
//   BM_ScenarioLaunchStep   per repetition, in alternating order: the direct
//                           loop (a context with the default options, the
//                           launches' futures dropped) and a scenario run on
//                           the same platform whose only step is a loop of N
//                           launch steps (the engine's own options, as
//                           `tandem run` has them), timed by the report's
//                           body_s. Counters: direct_ns and engine_ns (per
//                           launch), overhead_ns (engine - direct), ratio
//                           (engine / direct), engine_p50_ns (the report's
//                           step_latency_ns.launch.p50), direct_p50_ns (each
//                           direct launch timed as the engine times a step:
//                           the invariant TSC where there is one), p50_ratio
//                           (engine_p50 / direct_p50: the judged GPU figure)
//                           and direct_stamped_ns (the direct loop with
//                           measure_retirement_latency, which the engine turns
//                           on: the stamp's own cost), timeline_cost_ns
//                           (engine_ns less the engine run once more with
//                           RunOptions::timeline off: what the report's
//                           sampler thread costs a step).
//
// Under TANDEM_BENCH_BACKEND=host (host_only_backend.hpp) the device work
// costs nothing: the difference is the engine's own CPU path, judged
// <= 250 ns. On the GPU the judged figure is the p50 ratio (<= 1.10).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include <nlohmann/json.hpp>

#include "bench_env.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"

namespace tandem_bench {

namespace {

namespace k = tandem::kernels;

constexpr std::int64_t kElements = 4096;
constexpr int kRepetitions = 5;

// The engine's step clock, here too, so both sides pay the same for being
// timed: the invariant TSC where there is one, calibrated against
// steady_clock over the loop; steady_clock ns otherwise.
struct TickClock {
  bool tsc = false;
  TickClock() {
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    tsc = __get_cpuid(0x80000007u, &a, &b, &c, &d) != 0 && (d & (1u << 8)) != 0;
#endif
  }
  [[nodiscard]] std::uint64_t ticks() const {
#if defined(__x86_64__)
    if (tsc) return __rdtsc();
#endif
    return steady_ns();
  }
};

struct Direct {
  double mean_ns = 0, p50_ns = 0;
};

// N direct launches and the stream drained: the mean per launch over the
// loop, and the median of each launch timed on its own.
Direct direct_ns(const Env& e, std::int64_t n, bool stamped) {
  tandem::ContextOptions o;
  o.measure_retirement_latency = stamped;
  const tandem::Context ctx = tandem::Context::create(e.platform.device(0), o);
  const tandem::Stream s = tandem::Stream::create(ctx);
  const tandem::View x = tandem::allocate(s, tandem::DType::f32, kElements);
  const k::KernelEntry* scale = k::find(k::Model::simt, "scale", tandem::DType::f32);
  if (scale == nullptr) throw std::runtime_error("the catalog has no f32 scale kernel");
  ctx.load_kernel(*scale->symbol);
  const k::Arg args[] = {k::Arg::of(x), k::Arg::value(1.0)};
  (void)k::launch(s, *scale, args);  // warm
  (void)ctx.wait_for_retirement(std::chrono::seconds(60));
  const TickClock clock;
  std::vector<std::uint64_t> each(static_cast<std::size_t>(n));
  const auto t0 = Clock::now();
  const std::uint64_t k0 = clock.ticks();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t a = clock.ticks();
    (void)k::launch(s, *scale, args);
    each[static_cast<std::size_t>(i)] = clock.ticks() - a;
  }
  const std::uint64_t k1 = clock.ticks();
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  (void)ctx.wait_for_retirement(std::chrono::seconds(60));
  std::nth_element(each.begin(), each.begin() + n / 2, each.end());
  const double ns_per_tick = clock.tsc && k1 > k0 ? ns / static_cast<double>(k1 - k0) : 1.0;
  return {ns / static_cast<double>(n),
          static_cast<double>(each[static_cast<std::size_t>(n / 2)]) * ns_per_tick};
}

struct EngineRun {
  double ns = 0, p50_ns = 0;
};

EngineRun engine_ns(const Env& e, std::int64_t n, bool timeline = true) {
  const nlohmann::json doc = {{"format", "tandem.scenario/1"},
                              {"name", "launch-step"},
                              {"streams", {"s0"}},
                              {"steps",
                               {{{"op", "alloc"},
                                 {"id", "x"},
                                 {"dtype", "f32"},
                                 {"len", kElements},
                                 {"init", "zero"},
                                 {"stream", "s0"}},
                                {{"op", "wait"}, {"all", true}},
                                {{"op", "loop"},
                                 {"count", n},
                                 {"steps",
                                  {{{"op", "launch"},
                                    {"model", "simt"},
                                    {"kernel", "scale"},
                                    {"stream", "s0"},
                                    {"args", {{"x", "x"}}},
                                    {"scalars", {{"a", 1.0}}}}}}},
                                {{"op", "drop"}, {"id", "x"}}}}};
  const tandem::scenario::Scenario sc = tandem::scenario::load_text(doc.dump(), "launch-step.json");
  tandem::scenario::RunOptions o;
  o.platform = e.platform;
  o.timeline = timeline;
  const tandem::scenario::RunResult r = tandem::scenario::run(sc, o);
  if (r.outcome != tandem::scenario::Outcome::pass) {
    throw std::runtime_error("the launch-step scenario did not pass: " + r.report["errors"].dump());
  }
  EngineRun out;
  // The body also holds the alloc, the wait and the drop: a few µs against N launches.
  out.ns = r.report["body_s"].get<double>() * 1e9 / static_cast<double>(n);
  out.p50_ns = r.report["step_latency_ns"]["launch"]["p50"].get<double>();
  return out;
}

void BM_ScenarioLaunchStep(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  static int call = 0;
  const std::int64_t n = scaled(20000);
  guarded(st, [&] {
    Direct direct, stamped;
    EngineRun engine, untimed;
    for (auto _ : st) {
      if (call % 2 == 0) direct = direct_ns(*e, n, false);
      engine = engine_ns(*e, n);
      if (call % 2 == 1) direct = direct_ns(*e, n, false);
      stamped = direct_ns(*e, n, true);
      untimed = engine_ns(*e, n, false);
      st.SetIterationTime(engine.ns * 1e-9 * static_cast<double>(n));
    }
    ++call;
    st.counters["launches"] = static_cast<double>(n);
    st.counters["direct_ns"] = direct.mean_ns;
    st.counters["engine_ns"] = engine.ns;
    st.counters["overhead_ns"] = engine.ns - direct.mean_ns;
    st.counters["ratio"] = direct.mean_ns > 0 ? engine.ns / direct.mean_ns : 0.0;
    st.counters["engine_p50_ns"] = engine.p50_ns;
    st.counters["direct_p50_ns"] = direct.p50_ns;
    st.counters["p50_ratio"] = direct.p50_ns > 0 ? engine.p50_ns / direct.p50_ns : 0.0;
    st.counters["direct_stamped_ns"] = stamped.mean_ns;
    st.counters["timeline_cost_ns"] = engine.ns - untimed.ns;
  });
}

}  // namespace

BENCHMARK(BM_ScenarioLaunchStep)
    ->UseManualTime()
    ->Iterations(1)
    ->Repetitions(kRepetitions)
    ->Unit(benchmark::kMillisecond);

}  // namespace tandem_bench
