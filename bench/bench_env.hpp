// SPDX-License-Identifier: Apache-2.0
// bench_env.hpp — what every benchmark of tandem_bench shares: one device,
// context and stream, the lane streams of the threaded benchmarks, the raw
// driver, and small helpers (skip with a reason, latency percentiles, leak
// counters, iteration scaling).
//
// Backend: the CUDA device, unless TANDEM_BENCH_BACKEND=sim asks for the
// simulated device (a smoke run of the suite where no GPU is: the tracked
// benchmarks run, the raw ones skip, and no figure means anything) or
// TANDEM_BENCH_BACKEND=host for one whose device work costs nothing
// (host_only_backend.hpp: tandem's own CPU path, for profiling).
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "raw_driver.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/stream.hpp"

namespace tandem_bench {

using Clock = std::chrono::steady_clock;

// Clock's time as nanoseconds, for atomics shared between threads.
inline std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

// Host threads of the threaded benchmarks: 1, 2, 4, 8.
inline constexpr int kMaxLanes = 8;

struct Env {
  tandem::Platform platform;
  tandem::Context ctx;
  tandem::Stream stream;
  // One stream per host thread of the threaded benchmarks, made here, once,
  // right after `stream`: streams made later (the loaded state's holders)
  // then never share a hardware queue with a measured stream (main.cpp).
  std::vector<tandem::Stream> lanes;
  RawDriver raw;
  std::string raw_why;  // empty when `raw` is usable

  explicit Env(tandem::Platform p);

  // The shared environment, or null after SkipWithError saying why there is
  // none (no CUDA device, ...).
  static Env* get(benchmark::State& st);
  // The same without a benchmark (main: the report's context); `why` is set
  // when there is none.
  static Env* instance(std::string& why);

  [[nodiscard]] bool is_sim() const { return platform.is_sim(); }
  // The raw driver, or null after SkipWithError saying why not.
  const RawDriver* raw_or_skip(benchmark::State& st) const;
  // Blocks until `stream` is idle and everything submitted on the context
  // has retired. Never call it while the loaded state holds work in flight
  // (it would wait for that work): the loaded benchmarks synchronize their
  // own streams instead.
  void drain() const;
  // The driver function of a catalog kernel in this context.
  void* function(const tandem::kernels::KernelEntry& k) const;
};

// Runs `fn` at the end of the run, before the leak check (state that
// outlives one benchmark, such as the 1 GiB bandwidth tensors).
void at_teardown(std::function<void()> fn);
// Runs the teardown hooks (last registered first), waits for retirement,
// closes the environment, and returns the allocations tandem still held
// (0 = nothing leaked). main() calls it once, after the benchmarks.
std::uint64_t teardown_and_count_live();

// A diagnostic switch in the environment: "1" on, unset or "0" off;
// anything else throws, naming the variable and the value.
[[nodiscard]] bool env_flag(const char* name);

// Iteration counts scaled by TANDEM_BENCH_SCALE (default 1; a sim smoke
// run uses e.g. 0.01). Never below 1.
[[nodiscard]] std::int64_t scaled(std::int64_t n);

// Runs `body`; an exception becomes the benchmark's error (the run goes on).
template <class F>
void guarded(benchmark::State& st, F&& body) {
  try {
    body();
  } catch (const std::exception& ex) {
    st.SkipWithError(ex.what());
  }
}

// Per-iteration latencies; counters p50_<unit>, p99_<unit>, max_<unit>.
class Samples {
 public:
  explicit Samples(std::size_t expected) { v_.reserve(expected); }
  void add(double x) { v_.push_back(x); }
  void report(benchmark::State& st, const char* unit);

 private:
  std::vector<double> v_;
};

// Allocations tandem holds at the start of a benchmark vs after its work
// has retired: counter leaked_allocations (scripts/compare fails on > 0) and
// quarantined_submissions (completion unknown: also a failure).
class LeakWatch {
 public:
  explicit LeakWatch(const Env& e);  // drains first
  // Counters: leaked_allocations, quarantined_submissions, and how the
  // submissions shared completion events (shared_event_fraction,
  // quiet_tail_markers).
  void report(benchmark::State& st) const;  // drains first

 private:
  const Env& e_;
  std::uint64_t live_ = 0;
  std::uint64_t quarantined_ = 0;
  std::uint64_t submitted_ = 0;
  std::uint64_t shared_ = 0;
  std::uint64_t tail_markers_ = 0;
};

// Registration, in the order main() runs them (the loaded ones last: their
// in-flight work would hold up every drain()).
void register_launch_benchmarks();
void register_retirement_benchmarks();
void register_memory_benchmarks();
void register_release_benchmarks();     // release_bench.cpp
void register_host_bytes_benchmarks();  // host_bytes_bench.cpp
void register_graph_benchmarks();
void register_bandwidth_benchmarks();
void register_thread_benchmarks();
void register_paired_benchmarks();
void register_sustained_benchmarks();    // sustained_bench.cpp: with the two below
void register_launch_floor_benchmark();  // launch_floor_bench.cpp (TANDEM_BENCH_SUSTAINED_FLOOR)
void register_big_buffer_benchmarks();   // big_buffer_bench.cpp
void register_loaded_benchmarks();

}  // namespace tandem_bench
