// SPDX-License-Identifier: Apache-2.0
// What issue 21's loops share (sustained_bench.cpp, launch_floor_bench.cpp,
// big_buffer_bench.cpp): the sustained loop's kernels resolved once, the
// raw driver's pool and streams made as tandem makes its own, one raw
// launch, and the totals of a loop run in slices by K threads.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "lanes.hpp"
#include "tandem/kernels/launch.hpp"

namespace tandem_bench::sustained {

namespace k = tandem::kernels;
namespace drv = tandem::driver;

constexpr std::int64_t kElements = 4096;
constexpr std::int64_t kShape[] = {64, 64};
constexpr std::size_t kBufferBytes = kElements * sizeof(float);
constexpr double kFillValue = 1.0;
constexpr double kScaleBy = 2.0;
constexpr float kExpected = 2.0F;  // fill 1, then scale by 2
constexpr int kCheckEvery = 16;    // iterations between two reads of the clock
constexpr int kSustainedRepetitions = 5;
inline const std::chrono::milliseconds kSustainedFor{scaled(1000)};  // per run, each thread

// Throws "<what>: CUresult <rc>" unless rc is 0.
void check_rc(int rc, const char* what);

// Both loops' kernels, dimensions and parameters, resolved once as
// kernels::launch resolves them; the raw loop patches the device pointer
// (the first 8 bytes of a BufferParam and of a TensorParam) per iteration.
struct SustainedKernels {
  const k::KernelEntry* fill = nullptr;
  const k::KernelEntry* scale = nullptr;
  drv::LaunchDims fill_dims, scale_dims;
  k::PackedParams fill_params, scale_params;

  SustainedKernels();

 private:
  static void prepare(const k::KernelEntry& e, std::span<const k::ArgShape> shapes, double value,
                      drv::LaunchDims& dims, k::PackedParams& packed);
};

const SustainedKernels& sustained_kernels();

// One raw launch of a prepared kernel with its device pointer set to `p`.
void raw_launch(const RawDriver& d, void* fn, const drv::LaunchDims& g, void** params, unsigned long long p,
                void* stream);

// Throws unless every element is kExpected (`which` names the loop).
void check_contents(const std::vector<float>& v, const char* which);

// The raw loop's driver objects: a pool made as tandem makes its own (the
// backend's pool_create; raw_driver.hpp's RawPool is made straight from
// libcuda), and non-blocking streams. Destroyed in reverse: the streams
// drained first, then the pool.
class BackendPool {
 public:
  BackendPool(drv::Backend& b, drv::ContextHandle ctx);
  ~BackendPool();
  BackendPool(const BackendPool&) = delete;
  BackendPool& operator=(const BackendPool&) = delete;
  [[nodiscard]] void* raw() const { return pool_.raw; }

 private:
  drv::Backend& b_;
  drv::ContextHandle ctx_;
  drv::PoolHandle pool_;
};

class RawStreams {
 public:
  RawStreams(drv::Backend& b, drv::ContextHandle ctx, int n);
  ~RawStreams();
  RawStreams(const RawStreams&) = delete;
  RawStreams& operator=(const RawStreams&) = delete;
  [[nodiscard]] void* raw(int i) const { return s_[static_cast<std::size_t>(i)].raw; }
  [[nodiscard]] drv::StreamHandle handle(int i) const { return s_[static_cast<std::size_t>(i)]; }

 private:
  drv::Backend& b_;
  drv::ContextHandle ctx_;
  std::vector<drv::StreamHandle> s_;
};

// Diagnostic (TANDEM_BENCH_SUSTAINED_SPLIT=1): each step of an iteration
// timed by the host clock on the looping thread, summed over threads. The
// tracked loop's steps are allocate (with the drain of the previous
// iteration's free), fill, to_tensor, scale, drop; the raw loop's are
// alloc, fill, -, scale, free. Both pay the same clock reads, so only the
// difference of a step between the two loops is a figure.
constexpr std::size_t kSteps = 5;
constexpr const char* kStepNames[kSteps] = {"alloc", "fill", "to_tensor", "scale", "release"};

struct alignas(64) StepSplit {  // one per thread, on lines of its own
  std::array<std::uint64_t, kSteps> ns{};
  std::int64_t iterations = 0;
  StepSplit& operator+=(const StepSplit& o) {
    for (std::size_t i = 0; i < kSteps; ++i) ns[i] += o.ns[i];
    iterations += o.iterations;
    return *this;
  }
};

// Laps of one iteration into a thread's StepSplit (null: off, no clock read).
class StepClock {
 public:
  explicit StepClock(StepSplit* into) : into_(into), t_(into ? Clock::now() : Clock::time_point{}) {}
  void lap(std::size_t step) {
    if (into_ == nullptr) return;
    const Clock::time_point now = Clock::now();
    into_->ns[step] += static_cast<std::uint64_t>(std::chrono::nanoseconds(now - t_).count());
    t_ = now;
  }
  ~StepClock() {
    if (into_ != nullptr) ++into_->iterations;
  }
  StepClock(const StepClock&) = delete;
  StepClock& operator=(const StepClock&) = delete;

 private:
  StepSplit* into_;
  Clock::time_point t_;
};

bool split_on();

struct LoopRun {
  double seconds = 0;               // common start -> the last thread's stream drained
  double iterations_per_s = 0;      // aggregate
  double lane_balance = 0;          // fewest iterations of a thread / most
  std::vector<double> slice_rates;  // each slice's aggregate iterations/s, in order
  StepSplit split;                  // all threads' (TANDEM_BENCH_SUSTAINED_SPLIT)
  std::string error;
};

// The split's counters, "<prefix>split_<step>_ns" per iteration (none when off).
void report_split(benchmark::State& st, const StepSplit& s, const char* prefix);

// A loop's totals over its slices (one slice unless
// TANDEM_BENCH_SUSTAINED_SLICES says more): per thread, the iterations and
// the step split; the slices' wall times summed.
class LoopTotals {
 public:
  explicit LoopTotals(int threads)
      : done_(static_cast<std::size_t>(threads), 0), splits_(static_cast<std::size_t>(threads)) {}
  std::int64_t& done(int t) { return done_[static_cast<std::size_t>(t)]; }
  StepSplit* split(int t) { return split_on() ? &splits_[static_cast<std::size_t>(t)] : nullptr; }
  void add(const TogetherRun& r);
  [[nodiscard]] bool failed() const { return !error_.empty(); }
  [[nodiscard]] LoopRun result() const;

 private:
  [[nodiscard]] std::int64_t iterations() const;  // every thread's, over the slices so far

  std::vector<std::int64_t> done_;
  std::vector<StepSplit> splits_;
  std::vector<double> slice_rates_;
  std::int64_t counted_ = 0;  // iterations of the slices added so far
  double seconds_ = 0;
  std::string error_;
};

// Runs `iteration` in batches of kCheckEvery from `start` until `length`
// has passed; returns the iterations done.
template <class F>
std::int64_t loop_for(Clock::time_point start, std::chrono::nanoseconds length, F iteration) {
  const Clock::time_point until = start + length;
  std::int64_t n = 0;
  do {
    for (int j = 0; j < kCheckEvery; ++j) iteration();
    n += kCheckEvery;
  } while (Clock::now() < until);
  return n;
}

// Registers `fn` as `name`/K for K = 1, 2, 4, 8: one iteration a repetition,
// kSustainedRepetitions of them, manual time.
void register_per_threads(const char* name, void (*fn)(benchmark::State&));

}  // namespace tandem_bench::sustained
