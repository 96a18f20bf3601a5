// SPDX-License-Identifier: Apache-2.0
#include "paired.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace tandem_bench {

void settle(const Env& e) {
  e.drain();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void TimePairs::report(benchmark::State& st, const char* raw_name, const char* tracked_name,
                       const char* ratio_name, const char* overhead_name) const {
  st.counters[ratio_name] = median(ratios_);
  if (overhead_name != nullptr) st.counters[overhead_name] = median(overheads_);
  st.counters[raw_name] = median(raws_);
  st.counters[tracked_name] = median(trackeds_);
  st.counters["pairs"] = static_cast<double>(ratios_.size());
}

void LanePairs::add(const LaneRun& raw, const LaneRun& tracked) {
  if (!raw.error.empty()) throw std::runtime_error(raw.error);
  if (!tracked.error.empty()) throw std::runtime_error(tracked.error);
  ratios_.push_back(tracked.launches_per_s / raw.launches_per_s);
  raws_.push_back(raw.launches_per_s);
  trackeds_.push_back(tracked.launches_per_s);
  raw_lane_ns_.push_back(1e9 / raw.launches_per_s);
  tracked_lane_ns_.push_back(1e9 / tracked.launches_per_s);
  raw_spreads_.push_back(lane_spread(raw));
  tracked_spreads_.push_back(lane_spread(tracked));
  seconds_ += raw.seconds + tracked.seconds;
}

void LanePairs::report(benchmark::State& st, int threads) const {
  st.counters["ratio"] = median(ratios_);
  st.counters["raw_launches_per_s"] = median(raws_);
  st.counters["tracked_launches_per_s"] = median(trackeds_);
  st.counters["pairs"] = static_cast<double>(ratios_.size());
  st.counters["threads"] = threads;
  std::vector<double> overheads;
  for (std::size_t i = 0; i < raw_lane_ns_.size(); ++i) {
    overheads.push_back(static_cast<double>(threads) * (tracked_lane_ns_[i] - raw_lane_ns_[i]));
  }
  st.counters["overhead_ns"] = median(overheads);
  st.counters["raw_lane_spread"] = median(raw_spreads_);
  st.counters["tracked_lane_spread"] = median(tracked_spreads_);
}

}  // namespace tandem_bench
