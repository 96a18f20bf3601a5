// SPDX-License-Identifier: Apache-2.0
// timeline.cpp — the bounded series and its sampling thread.
#include "timeline.hpp"

namespace tandem::scenario::detail {

void Timeline::decimate() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < samples_.size(); i += 2) samples_[kept++] = samples_[i];
  samples_.resize(kept);
  stride_ *= 2;
}

void Timeline::add(const TimelineSample& s) {
  if (ended_) return;
  samples_.push_back(s);
  if (samples_.size() == kMaxSamples) decimate();
}

void Timeline::add_last(const TimelineSample& s) {
  if (ended_) return;
  if (samples_.size() + 1 >= kMaxSamples) decimate();
  samples_.push_back(s);
  ended_ = true;
}

nlohmann::ordered_json Timeline::json() const {
  nlohmann::ordered_json t = nlohmann::ordered_json::array(), live = t, in_flight = t, pending = t;
  for (const TimelineSample& s : samples_) {
    t.push_back(s.t_s);
    live.push_back(s.live_bytes);
    in_flight.push_back(s.in_flight_bytes);
    pending.push_back(s.pending_submissions);
  }
  return {{"interval_s", std::chrono::duration<double>(interval()).count()},
          {"max_samples", kMaxSamples},
          {"t_s", std::move(t)},
          {"live_bytes", std::move(live)},
          {"in_flight_bytes", std::move(in_flight)},
          {"pending_submissions", std::move(pending)}};
}

TimelineSampler::TimelineSampler(Timeline& timeline, Read read)
    : timeline_(timeline), read_(std::move(read)), start_(std::chrono::steady_clock::now()) {
  timeline_.add(read_now());  // tick 0 here: a run shorter than a tick still shows its start
  thread_ = std::thread([this] { loop(); });
}

TimelineSampler::~TimelineSampler() { stop(); }

TimelineSample TimelineSampler::read_now() const {
  TimelineSample s = read_();
  s.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return s;
}

void TimelineSampler::loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    const auto due = start_ + timeline_.tick() * timeline_.next_tick();
    if (cv_.wait_until(lk, due, [this] { return stop_; })) return;
    timeline_.add(read_now());
  }
}

void TimelineSampler::stop() {
  {
    std::lock_guard lk(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  timeline_.add_last(read_now());
}

}  // namespace tandem::scenario::detail
