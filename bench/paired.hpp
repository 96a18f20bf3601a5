// SPDX-License-Identifier: Apache-2.0
// paired.hpp — raw and tracked segments measured in alternation, so that
// each ratio pairs two figures taken moments apart (paired_bench.cpp says
// why: the lent VM's launch cost drifts by up to a third within minutes).
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "bench_env.hpp"
#include "lanes.hpp"

namespace tandem_bench {

[[nodiscard]] double median(std::vector<double> v);

// Between segments, untimed: the device idle, every submission retired, and
// the retirement thread past its idle spin (asleep), as before either kind.
void settle(const Env& e);

// Nanoseconds per call over `n` calls of `f`.
template <class F>
double per_call_ns(std::int64_t n, F f) {
  const auto t0 = Clock::now();
  for (std::int64_t i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
}

// Pair `p`: raw then tracked when p is even, tracked then raw when odd (so
// order effects cancel), with `settle()` before each segment. Returns
// {raw, tracked}.
template <class Settle, class Raw, class Tracked>
auto run_pair(Settle settle, std::int64_t p, Raw raw, Tracked tracked) {
  settle();
  decltype(raw()) r{}, t{};
  if (p % 2 == 0) {
    r = raw();
    settle();
    t = tracked();
  } else {
    t = tracked();
    settle();
    r = raw();
  }
  return std::pair{r, t};
}

// Pairs of figures where lower is better (ns or us per operation): counters
// <ratio_name> (median of tracked / raw), <raw_name> and <tracked_name> (the
// medians of each), pairs, and with an <overhead_name> the median of the
// pairs' tracked - raw (tandem's absolute overhead per operation, in the
// figures' unit: the paired launches' `overhead_ns`).
class TimePairs {
 public:
  void add(double raw, double tracked) {
    ratios_.push_back(tracked / raw);
    raws_.push_back(raw);
    trackeds_.push_back(tracked);
    overheads_.push_back(tracked - raw);
  }
  void report(benchmark::State& st, const char* raw_name, const char* tracked_name,
              const char* ratio_name = "ratio", const char* overhead_name = nullptr) const;
  [[nodiscard]] std::size_t size() const { return ratios_.size(); }

 private:
  std::vector<double> ratios_, raws_, trackeds_, overheads_;
};

// Pairs of K-thread lane runs: counters ratio (median of tracked / raw
// launches/s), the raw and tracked medians, pairs, threads, the lanes'
// spreads (lanes.hpp), and overhead_ns: the median of the pairs' tracked -
// raw time per launch on its thread (K / launches_per_s each: what a launch
// costs its lane more, tracked).
class LanePairs {
 public:
  // Throws the first lane failure of either run.
  void add(const LaneRun& raw, const LaneRun& tracked);
  void report(benchmark::State& st, int threads) const;
  [[nodiscard]] double seconds() const { return seconds_; }

 private:
  std::vector<double> ratios_, raws_, trackeds_, raw_spreads_, tracked_spreads_;
  std::vector<double> raw_lane_ns_, tracked_lane_ns_;  // per launch on its lane: 1e9 K / launches_per_s
  double seconds_ = 0;
};

}  // namespace tandem_bench
