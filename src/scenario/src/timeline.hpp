// SPDX-License-Identifier: Apache-2.0
// timeline.hpp — memory and work in flight over a run, sampled on a timer
// into a bounded series (the report's `timeline`, drawn by `tandem report`).
//
// A run may last a millisecond or an hour, so the series never grows past
// kMaxSamples: when full, every other sample goes and the interval doubles,
// which keeps the kept samples evenly spaced in time. The sampler is its own
// thread, so the steps' hot path pays nothing for it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace tandem::scenario::detail {

struct TimelineSample {
  double t_s = 0.0;  // since the sampler started
  std::uint64_t live_bytes = 0;
  // Bytes of allocations whose handles are all gone but which work in flight
  // still holds (awaiting release, or released and not yet proven freed).
  std::uint64_t in_flight_bytes = 0;
  std::uint64_t pending_submissions = 0;
};

// The bounded series; not synchronised (the sampler owns it while it runs).
class Timeline {
 public:
  static constexpr std::size_t kMaxSamples = 256;

  explicit Timeline(std::chrono::nanoseconds interval) : interval_(interval) {}

  // Appends the sample of tick next_tick() (ticks of the first interval,
  // tick(), from the start); when that fills the series, every other sample
  // goes and the kept interval doubles.
  void add(const TimelineSample& s);
  // The sample of the run's end, whatever its tick (the end is always shown).
  void add_last(const TimelineSample& s);
  // The tick the next sample belongs to: samples are ticks 0, stride, 2 stride...
  [[nodiscard]] std::uint64_t next_tick() const noexcept { return samples_.size() * stride_; }
  [[nodiscard]] std::chrono::nanoseconds tick() const noexcept { return interval_; }
  [[nodiscard]] std::chrono::nanoseconds interval() const noexcept { return interval_ * stride_; }
  [[nodiscard]] const std::vector<TimelineSample>& samples() const noexcept { return samples_; }
  // {"interval_s", "max_samples", "t_s": [...], "live_bytes": [...],
  //  "in_flight_bytes": [...], "pending_submissions": [...]}
  [[nodiscard]] nlohmann::ordered_json json() const;

 private:
  void decimate();

  std::chrono::nanoseconds interval_;
  std::uint64_t stride_ = 1;  // ticks per kept sample
  bool ended_ = false;        // the last sample is in
  std::vector<TimelineSample> samples_;
};

// Runs `read` every interval of `timeline` on a thread of its own, from
// construction until stop(), which takes a last sample.
class TimelineSampler {
 public:
  using Read = std::function<TimelineSample()>;
  TimelineSampler(Timeline& timeline, Read read);
  ~TimelineSampler();
  TimelineSampler(const TimelineSampler&) = delete;
  TimelineSampler& operator=(const TimelineSampler&) = delete;

  void stop();

 private:
  void loop();
  [[nodiscard]] TimelineSample read_now() const;

  Timeline& timeline_;
  Read read_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tandem::scenario::detail
