// SPDX-License-Identifier: Apache-2.0
// stall_sampler.hpp — what a lane thread is doing when one of its launches
// has taken far too long (BM_LaneDetail's diagnostics, not a figure).
//
// Each lane brackets every launch with begin()/end(). A watchdog thread
// looks every half millisecond; a launch running past the threshold is
// sampled once: the thread's scheduler state, kernel wait channel and
// current system call (from /proc), and its user stack, taken by a signal
// the thread handles itself; and the same of the retirement thread
// ("tandem-retire") at that moment. Linux only; elsewhere it records nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tandem_bench {

// /proc helpers the lane diagnostics share (Linux; elsewhere empty / 0).
// The first line of a file; the tid of this process's thread named `name`.
std::string first_line(const std::string& path);
int thread_named(const std::string& name);
// The retirement thread ("tandem-retire"): the CPU it last ran on and its
// CPU seconds so far (-1 and 0 where there is none).
struct RetireThread {
  int cpu = -1;
  double cpu_s = 0;
};
RetireThread retire_thread();

class StallSampler {
 public:
  StallSampler(int lanes, std::chrono::microseconds threshold);
  ~StallSampler();
  StallSampler(const StallSampler&) = delete;
  StallSampler& operator=(const StallSampler&) = delete;

  // From lane `slot`'s own thread, before its first launch.
  void attach(int slot);
  void begin(int slot) noexcept;
  void end(int slot) noexcept;
  // One text per stall sampled (at most kMaxSamples).
  [[nodiscard]] std::vector<std::string> take_samples();

  static constexpr std::size_t kMaxSamples = 6;

  struct Lane;  // per-lane state, cache-line sized

 private:
  void watch();
  std::string sample(int slot);

  std::unique_ptr<Lane[]> lanes_;
  int count_;
  std::uint64_t threshold_ns_;
  std::atomic<bool> stop_{false};
  std::vector<std::string> samples_;  // written by the watchdog only, read after stop
  std::thread watchdog_;
};

}  // namespace tandem_bench
