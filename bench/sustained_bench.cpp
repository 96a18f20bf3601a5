// SPDX-License-Identifier: Apache-2.0
// Memory reused at the device's pace while work keeps coming (issue 21):
// a sustained multi-threaded loop of allocate, launch, drop, and a loop of
// buffers too large for two to fit at once.
//
//   BM_SustainedLoad/K     K = 1, 2, 4, 8 threads, each on its own stream of a
//                          context made for the repetition (with
//                          measure_retirement_latency, otherwise the default
//                          options), each looping for >= 1 s over
//                          {allocate 4096 f32 on its stream; SIMT fill;
//                          to_tensor 64x64 (no copy); Tile scale; drop (no
//                          wait)}, both launches through kernels::launch.
//                          Each of the 5 repetitions also runs the raw loop
//                          below with the same K, just before it or just
//                          after (alternating), so that every repetition has
//                          a ratio of two runs taken moments apart
//                          (paired_bench.cpp says why).
//   BM_RawSustainedLoad/K  the same loop on the raw driver alone, 5
//                          repetitions: cuMemAllocFromPoolAsync from a pool of
//                          its own made as tandem makes its pool (release
//                          threshold UINT64_MAX), cuLaunchKernel of the same
//                          fill and Tile scale entry points with the same
//                          dimensions and parameters, cuMemFreeAsync on the
//                          stream right after the second launch; no tracking.
//   BM_BigBufferLoop       one stream of a context of its own (default
//                          options): 10 x {allocate 60 % of the device's free
//                          memory; the catalog's SIMT spin for 1 ms on it;
//                          drop}, timed from before the first allocation to the
//                          stream drained after the tenth drop (setup, the
//                          free-memory query and the clean-up after are not
//                          timed). An allocation that fails fails the
//                          benchmark with "big-buffer loop failed at iteration
//                          N of 10 ...: <the error>" (scripts/bench_report.py
//                          judges that prefix as a miss).
//   BM_RawBigBufferLoop    the same with cuMemAllocFromPoolAsync /
//                          cuLaunchKernel / cuMemFreeAsync on a pool made like
//                          tandem's.
//
//   BM_RawLaunchFloor/K    diagnostic, with TANDEM_BENCH_SUSTAINED_FLOOR=1: the
//                          device's own queue under this work (below).
//   BM_SustainedLoadAA/K   diagnostic, with TANDEM_BENCH_SUSTAINED_AA=1: the
//                          raw loop paired with itself (the method's spread).
//
// Each pair runs as 10 alternating slices of each loop (100 ms each), not
// one whole second of each: TANDEM_BENCH_SUSTAINED_SLICES=N sets N, and 1
// is the method before (sustained_slices below).
// TANDEM_BENCH_SUSTAINED_BACKLOG=1 adds backlog_peak, device_lag_max_ms,
// retire_stall_max_ms and sample_gap_max_ms, each with when it came, to the
// tracked loop's counters (backlog_sampler.hpp).
//
// Counters (per repetition): iterations_per_s (aggregate: all threads'
// iterations over the wall time from the common start to the last stream
// drained), and for the tracked loop raw_iterations_per_s and ratio (its
// pair), retire_p50_us / retire_p99_us / retire_max_us (submit -> retired,
// the context's own histogram; absent when it recorded nothing),
// held_bytes_peak (RuntimeStats: what tandem kept from the device at its
// highest; reset at the start; absent when 0) beside inflight_bytes (the
// loop's own: K x 4096 x 4), leaked_allocations and quarantined_submissions
// after a wait_for_retirement, and the release counters (information).
// lane_balance: the fewest iterations of a thread over the most.
// retire_cpu_fraction: the retirement thread's CPU seconds over the pair
// (/proc, 10 ms ticks) over the tracked loop's seconds (information: a
// thread that spins beside the loop can slow it on a shared core).
// slice_ratio_min / _median / _max (sliced pairs): each tracked slice's
// iterations/s over the raw slice beside it (information: one slow slice
// or a loop slower throughout).
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backlog_sampler.hpp"
#include "bench_env.hpp"
#include "lanes.hpp"
#include "paired.hpp"
#include "stall_sampler.hpp"
#include "tandem/base/cpu_relax.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

namespace {

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
const std::chrono::milliseconds kSustainedFor{scaled(1000)};  // per run, each thread

constexpr int kBigIterations = 10;
constexpr double kBigFraction = 0.6;
constexpr std::uint64_t kSpinNs = 1'000'000;  // 1 ms
constexpr std::size_t kBigAlign = std::size_t{1} << 20;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void check_rc(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + ": CUresult " + std::to_string(rc));
}

// Both loops' kernels, dimensions and parameters, resolved once as
// kernels::launch resolves them; the raw loop patches the device pointer
// (the first 8 bytes of a BufferParam and of a TensorParam) per iteration.
struct SustainedKernels {
  const k::KernelEntry* fill = nullptr;
  const k::KernelEntry* scale = nullptr;
  drv::LaunchDims fill_dims, scale_dims;
  k::PackedParams fill_params, scale_params;

  SustainedKernels() {
    fill = k::find(k::Model::simt, "fill", tandem::DType::f32);
    scale = k::find(k::Model::tile, "scale", tandem::DType::f32, nullptr, 2);
    if (fill == nullptr || scale == nullptr)
      throw std::runtime_error("the catalog has no f32 fill or rank-2 Tile scale");
    const k::ArgShape fill_shapes[] = {k::ArgShape::buffer(tandem::DType::f32, kElements), k::ArgShape{}};
    const k::ArgShape scale_shapes[] = {k::ArgShape::tensor(tandem::DType::f32, kShape), k::ArgShape{}};
    prepare(*fill, fill_shapes, kFillValue, fill_dims, fill_params);
    prepare(*scale, scale_shapes, kScaleBy, scale_dims, scale_params);
  }

 private:
  static void prepare(const k::KernelEntry& e, std::span<const k::ArgShape> shapes, double value,
                      drv::LaunchDims& dims, k::PackedParams& packed) {
    std::string why = k::check_args(e, shapes);
    if (why.empty()) why = k::launch_dims(e, shapes, std::nullopt, std::nullopt, dims);
    const k::LaunchArg args[] = {k::LaunchArg::view(0, shapes[0]), k::LaunchArg::value(value)};
    if (why.empty()) why = k::pack_params(e, args, packed);
    if (!why.empty()) throw std::runtime_error(std::string(e.name) + ": " + why);
  }
};

const SustainedKernels& sustained_kernels() {
  static const SustainedKernels kk;
  return kk;
}

// One raw launch of a prepared kernel with its device pointer set to `p`.
void raw_launch(const RawDriver& d, void* fn, const drv::LaunchDims& g, void** params, unsigned long long p,
                void* stream) {
  std::memcpy(params[0], &p, sizeof p);
  check_rc(d.launch(fn, g.grid.x, g.grid.y, g.grid.z, g.block.x, g.block.y, g.block.z, g.shared_bytes, stream,
                    params, nullptr),
           "cuLaunchKernel");
}

void check_contents(const std::vector<float>& v, const char* which) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != kExpected) {
      throw std::runtime_error(std::string(which) + " loop's kernels left " + std::to_string(v[i]) +
                               " at element " + std::to_string(i) + ", expected " +
                               std::to_string(kExpected));
    }
  }
}

// The raw loop's driver objects: a pool made as tandem makes its own (the
// backend's pool_create), and non-blocking streams. Destroyed in reverse:
// the streams drained first, then the pool.
class RawPool {
 public:
  RawPool(drv::Backend& b, drv::ContextHandle ctx) : b_(b), ctx_(ctx) {
    if (const drv::Result r = b.pool_create(ctx, pool_); !r.ok()) throw std::runtime_error(b.describe(r));
  }
  ~RawPool() {
    (void)b_.pool_trim(ctx_, pool_, 0);
    (void)b_.pool_destroy(ctx_, pool_);
  }
  RawPool(const RawPool&) = delete;
  RawPool& operator=(const RawPool&) = delete;
  [[nodiscard]] void* raw() const { return pool_.raw; }

 private:
  drv::Backend& b_;
  drv::ContextHandle ctx_;
  drv::PoolHandle pool_;
};

class RawStreams {
 public:
  RawStreams(drv::Backend& b, drv::ContextHandle ctx, int n) : b_(b), ctx_(ctx) {
    for (int i = 0; i < n; ++i) {
      drv::StreamHandle s;
      if (const drv::Result r = b.stream_create(ctx, s); !r.ok()) throw std::runtime_error(b.describe(r));
      s_.push_back(s);
    }
  }
  ~RawStreams() {
    for (const drv::StreamHandle& s : s_) {
      (void)b_.stream_synchronize(ctx_, s);
      (void)b_.stream_destroy(ctx_, s);
    }
  }
  RawStreams(const RawStreams&) = delete;
  RawStreams& operator=(const RawStreams&) = delete;
  [[nodiscard]] void* raw(int i) const { return s_[static_cast<std::size_t>(i)].raw; }
  [[nodiscard]] drv::StreamHandle handle(int i) const { return s_[static_cast<std::size_t>(i)]; }

 private:
  drv::Backend& b_;
  drv::ContextHandle ctx_;
  std::vector<drv::StreamHandle> s_;
};

// --- the sustained loop ------------------------------------------------------------

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

bool split_on() {
  static const bool on = env_flag("TANDEM_BENCH_SUSTAINED_SPLIT");
  return on;
}

struct LoopRun {
  double seconds = 0;               // common start -> the last thread's stream drained
  double iterations_per_s = 0;      // aggregate
  double lane_balance = 0;          // fewest iterations of a thread / most
  std::vector<double> slice_rates;  // each slice's aggregate iterations/s, in order
  StepSplit split;                  // all threads' (TANDEM_BENCH_SUSTAINED_SPLIT)
  std::string error;
};

void report_split(benchmark::State& st, const StepSplit& s, const char* prefix) {
  if (s.iterations == 0) return;
  for (std::size_t i = 0; i < kSteps; ++i) {
    st.counters[std::string(prefix) + "split_" + kStepNames[i] + "_ns"] =
        static_cast<double>(s.ns[i]) / static_cast<double>(s.iterations);
  }
}

// A loop's totals over its slices (one slice unless
// TANDEM_BENCH_SUSTAINED_SLICES says more): per thread, the iterations and
// the step split; the slices' wall times summed.
class LoopTotals {
 public:
  explicit LoopTotals(int threads)
      : done_(static_cast<std::size_t>(threads), 0), splits_(static_cast<std::size_t>(threads)) {}
  std::int64_t& done(int t) { return done_[static_cast<std::size_t>(t)]; }
  StepSplit* split(int t) { return split_on() ? &splits_[static_cast<std::size_t>(t)] : nullptr; }
  void add(const TogetherRun& r) {
    seconds_ += r.seconds;
    const std::int64_t total = iterations();
    slice_rates_.push_back(r.seconds > 0 ? static_cast<double>(total - counted_) / r.seconds : 0.0);
    counted_ = total;
    if (error_.empty()) error_ = r.error;
  }
  [[nodiscard]] bool failed() const { return !error_.empty(); }
  [[nodiscard]] LoopRun result() const {
    LoopRun out;
    for (const StepSplit& x : splits_) out.split += x;
    out.seconds = seconds_;
    out.slice_rates = slice_rates_;
    out.error = error_;
    const auto [few, most] = std::minmax_element(done_.begin(), done_.end());
    out.iterations_per_s = seconds_ > 0 ? static_cast<double>(iterations()) / seconds_ : 0.0;
    out.lane_balance = *most > 0 ? static_cast<double>(*few) / static_cast<double>(*most) : 0.0;
    return out;
  }

 private:
  [[nodiscard]] std::int64_t iterations() const {  // every thread's, over the slices so far
    std::int64_t total = 0;
    for (const std::int64_t n : done_) total += n;
    return total;
  }

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

// The user's loop: every step through the public API, the futures dropped;
// returns the tensor (the loop drops it with its work in flight).
tandem::View tracked_iteration(const tandem::Stream& s, const SustainedKernels& kk, StepClock& c) {
  tandem::View a = tandem::allocate(s, tandem::DType::f32, kElements);
  c.lap(0);
  const k::Arg fill[] = {k::Arg::of(a), k::Arg::value(kFillValue)};
  (void)k::launch(s, *kk.fill, fill);
  c.lap(1);
  tandem::View t = std::move(a).to_tensor(kShape);
  c.lap(2);
  const k::Arg scale[] = {k::Arg::of(t), k::Arg::value(kScaleBy)};
  (void)k::launch(s, *kk.scale, scale);
  c.lap(3);
  return t;
}

// The raw loop of one repetition: its pool and streams live across its
// slices.
class RawLoop {
 public:
  RawLoop(const Env& e, const RawDriver& d, int threads)
      : d_(d),
        kk_(sustained_kernels()),
        b_(e.platform.backend()),
        ctx_(e.ctx.native()),
        fill_fn_(e.function(*kk_.fill)),
        scale_fn_(e.function(*kk_.scale)),
        threads_(threads),
        pool_(b_, ctx_),
        streams_(b_, ctx_, threads),
        totals_(threads) {}

  // Every thread loops for `length` from a common start; its stream drained.
  void slice(std::chrono::nanoseconds length) {
    totals_.add(run_together(
        threads_, [&](int) { check_rc(d_.ctx_set_current(ctx_.raw), "cuCtxSetCurrent"); },
        [&](int t, Clock::time_point start) {
          void* s = streams_.raw(t);
          k::PackedParams fill_params = kk_.fill_params;  // this thread's, patched per iteration
          k::PackedParams scale_params = kk_.scale_params;
          void** fp = fill_params.pointers();
          void** sp = scale_params.pointers();
          StepSplit* split = totals_.split(t);
          totals_.done(t) += loop_for(start, length, [&] {
            StepClock c(split);
            unsigned long long p = 0;
            check_rc(d_.alloc_from_pool_async(&p, kBufferBytes, pool_.raw(), s), "cuMemAllocFromPoolAsync");
            c.lap(0);
            raw_launch(d_, fill_fn_, kk_.fill_dims, fp, p, s);
            c.lap(1);
            raw_launch(d_, scale_fn_, kk_.scale_dims, sp, p, s);
            c.lap(3);
            check_rc(d_.free_async(p, s), "cuMemFreeAsync");
            c.lap(4);
          });
          check_rc(d_.stream_synchronize(s), "cuStreamSynchronize");
        }));
  }

  // Untimed: the same steps once more, read back: the raw loop computed
  // what the tracked one does.
  [[nodiscard]] LoopRun finish() {
    if (totals_.failed()) return totals_.result();
    void* s = streams_.raw(0);
    k::PackedParams fill_params = kk_.fill_params;
    k::PackedParams scale_params = kk_.scale_params;
    unsigned long long p = 0;
    check_rc(d_.ctx_set_current(ctx_.raw), "cuCtxSetCurrent");
    check_rc(d_.alloc_from_pool_async(&p, kBufferBytes, pool_.raw(), s), "cuMemAllocFromPoolAsync");
    raw_launch(d_, fill_fn_, kk_.fill_dims, fill_params.pointers(), p, s);
    raw_launch(d_, scale_fn_, kk_.scale_dims, scale_params.pointers(), p, s);
    std::vector<float> host(kElements);
    const drv::Result got = b_.download_async(ctx_, host.data(), p, kBufferBytes, streams_.handle(0));
    check_rc(d_.free_async(p, s), "cuMemFreeAsync");
    check_rc(d_.stream_synchronize(s), "cuStreamSynchronize");
    if (!got.ok()) throw std::runtime_error("reading back the raw loop's buffer: " + b_.describe(got));
    check_contents(host, "the raw");
    return totals_.result();
  }

 private:
  const RawDriver& d_;
  const SustainedKernels& kk_;
  drv::Backend& b_;
  const drv::ContextHandle ctx_;
  void* const fill_fn_;
  void* const scale_fn_;
  const int threads_;
  const RawPool pool_;  // destroyed after the streams (drained first)
  const RawStreams streams_;
  LoopTotals totals_;
};

LoopRun run_raw(const Env& e, const RawDriver& d, int threads) {
  RawLoop loop(e, d, threads);
  loop.slice(kSustainedFor);
  return loop.finish();
}

// Diagnostic (TANDEM_BENCH_SUSTAINED_BACKLOG=1, backlog_sampler.hpp).
bool backlog_on() {
  static const bool on = env_flag("TANDEM_BENCH_SUSTAINED_BACKLOG");
  return on;
}

struct TrackedRun {
  LoopRun loop;
  tandem::RuntimeStats stats;  // after the loop retired
  std::uint64_t retired = 0;   // samples in the latency histogram
  double p50_us = 0, p99_us = 0, max_us = 0;
  std::uint64_t leaked = 0, quarantined = 0;
  BacklogPeaks backlog;  // TANDEM_BENCH_SUSTAINED_BACKLOG: each measure's highest over the slices
};

tandem::ContextOptions tracked_options() {
  tandem::ContextOptions options;
  options.measure_retirement_latency = true;
  return options;
}

// The tracked loop of one repetition: a context made for it (with
// measure_retirement_latency, otherwise the default options) and a stream
// per thread, living across its slices.
class TrackedLoop {
 public:
  TrackedLoop(const Env& e, int threads)
      : e_(e),
        kk_(sustained_kernels()),
        threads_(threads),
        ctx_(tandem::Context::create(e.platform.device(0), tracked_options())),
        totals_(threads) {
    ctx_.load_kernel(*kk_.fill->symbol);  // no lazy module load inside the timed loop
    ctx_.load_kernel(*kk_.scale->symbol);
    for (int t = 0; t < threads; ++t) streams_.push_back(tandem::Stream::create(ctx_));
    ctx_.reset_held_bytes_peak();
  }

  // Every thread loops for `length` from a common start; its stream drained
  // (the retirement of what it submitted may still lag).
  void slice(std::chrono::nanoseconds length) {
    BacklogSampler backlog(e_.platform.backend(), ctx_, streams_, backlog_on());
    totals_.add(run_together(
        threads_, [](int) {},
        [&](int t, Clock::time_point start) {
          const tandem::Stream& s = streams_[static_cast<std::size_t>(t)];
          StepSplit* split = totals_.split(t);
          totals_.done(t) += loop_for(start, length, [&] {
            StepClock c(split);
            { const tandem::View dropped = tracked_iteration(s, kk_, c); }
            c.lap(4);
          });
          s.synchronize();
        }));
    backlog.stop();
    backlog_.merge(backlog.peaks());
  }

  // Untimed: everything retired (a backlog left by a slice does not spill
  // into what runs next).
  void settle_all() const {
    if (!ctx_.wait_for_retirement(std::chrono::seconds(60))) {
      throw std::runtime_error("the sustained loop's work did not retire within 60 s of its end");
    }
  }

  [[nodiscard]] TrackedRun finish() {
    TrackedRun out;
    out.loop = totals_.result();
    out.backlog = backlog_;
    settle_all();
    out.stats = ctx_.stats();
    if (const tandem::LatencyHistogram* h = ctx_.retire_latency(); h != nullptr) {
      out.retired = h->count();
      out.p50_us = static_cast<double>(h->quantile(0.5)) * 1e-3;
      out.p99_us = static_cast<double>(h->quantile(0.99)) * 1e-3;
      out.max_us = static_cast<double>(h->max()) * 1e-3;
    }
    // Untimed: one more iteration, read back (the host-only backend runs no kernel: nothing to read).
    if (out.loop.error.empty() && e_.platform.backend_name() != "host") {
      const tandem::Stream& s = streams_[0];
      StepClock untimed(nullptr);
      const tandem::View t = tracked_iteration(s, kk_, untimed);
      const std::vector<std::byte> bytes = tandem::read_back(s, t, std::chrono::seconds(60));
      std::vector<float> host(kElements);
      if (bytes.size() != kBufferBytes) throw std::runtime_error("read_back returned the wrong size");
      std::memcpy(host.data(), bytes.data(), kBufferBytes);
      check_contents(host, "the tracked");
    }
    settle_all();
    const tandem::RuntimeStats after = ctx_.stats();
    out.leaked = after.live_allocations;
    out.quarantined = after.quarantined_submissions;
    streams_.clear();
    settle_all();  // the dropped streams destroyed
    return out;
  }

 private:
  const Env& e_;
  const SustainedKernels& kk_;
  const int threads_;
  const tandem::Context ctx_;
  std::vector<tandem::Stream> streams_;
  LoopTotals totals_;
  BacklogPeaks backlog_;
};

TrackedRun run_tracked(const Env& e, int threads) {
  TrackedLoop loop(e, threads);
  loop.slice(kSustainedFor);
  return loop.finish();
}

// A pair's two loops run as N slices of kSustainedFor / N each, in
// alternation (TANDEM_BENCH_SUSTAINED_SLICES=N; 10 unless set, 1 = one
// whole run each); the tracked side's work retires (untimed) after each of
// its slices, so that none of it spills into the raw slice after. Why 10:
// on the lent VMs the raw loop alone moves between 96 and 148 k
// iterations/s from one second to the next, and one-second pairs put that
// drift into the ratio (K = 1 worst pairs of 0.755 and 0.890 with medians
// of 0.93-0.95 on H100s: results/h100/diag-51af965, aa-c70af80); in 10
// slices the raw loop paired with itself moved 0.96-1.05 and tandem's K = 1
// pairs 0.945-0.979 (results/h100/verify-69c14a9). Not 40 yet: on one H100
// (results/h100/s43-4c635ba) 40 slices gave K = 1 pairs of 0.988-1.054
// where 10 gave 0.807-1.175, but the raw loop paired with itself did not
// tighten (0.916-1.014 against 0.953-1.029).
int sustained_slices() {
  static const int n = [] {
    const char* v = std::getenv("TANDEM_BENCH_SUSTAINED_SLICES");
    const long x = v != nullptr ? std::strtol(v, nullptr, 10) : 10;
    return static_cast<int>(std::clamp<long>(x, 1, 100));
  }();
  return n;
}

// Information for a pair whose ratio stands out: each slice of the tracked
// loop over the raw slice beside it (slice i of each), so that one slow
// slice can be told from a loop slower throughout. Absent unless sliced.
void report_slice_ratios(benchmark::State& st, const std::vector<double>& tracked,
                         const std::vector<double>& raw) {
  std::vector<double> r;
  for (std::size_t i = 0; i < tracked.size() && i < raw.size(); ++i) {
    if (raw[i] > 0) r.push_back(tracked[i] / raw[i]);
  }
  if (r.size() < 2) return;
  const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
  st.counters["slice_ratio_min"] = *lo;
  st.counters["slice_ratio_max"] = *hi;
  st.counters["slice_ratio_median"] = median(std::move(r));  // paired.hpp's, as the pairs' ratio
}

void after_slice(const TrackedLoop& t) { t.settle_all(); }
void after_slice(const RawLoop&) {}

template <class A, class B>
void run_sliced(A& first, B& second, int slices) {
  const auto length = std::chrono::duration_cast<std::chrono::nanoseconds>(kSustainedFor) / slices;
  for (int i = 0; i < slices; ++i) {
    first.slice(length);
    after_slice(first);
    second.slice(length);
    after_slice(second);
  }
}

// Pairs of BM_SustainedLoad/K alternate their order from one repetition to
// the next: raw first in repetitions 0, 2, 4, tracked first in 1, 3.
std::array<int, kMaxLanes + 1> g_pair_calls{};

void BM_SustainedLoad(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const int threads = static_cast<int>(st.range(0));
  const RawDriver* d = e->raw_why.empty() ? &e->raw : nullptr;
  const int call = g_pair_calls[static_cast<std::size_t>(threads)]++;
  guarded(st, [&] {
    (void)sustained_kernels();
    std::optional<TrackedRun> tracked;
    std::optional<LoopRun> raw;
    const int slices = sustained_slices();
    double retire_cpu_s = 0;
    for (auto _ : st) {
      // As run_pair (paired.hpp) does, with two result types.
      settle(*e);
      const RetireThread before = retire_thread();
      if (d != nullptr && slices > 1) {
        RawLoop r(*e, *d, threads);
        TrackedLoop t(*e, threads);
        if (call % 2 == 0) {
          run_sliced(r, t, slices);
        } else {
          run_sliced(t, r, slices);
        }
        raw = r.finish();
        tracked = t.finish();
        retire_cpu_s = retire_thread().cpu_s - before.cpu_s;
        st.SetIterationTime(tracked->loop.seconds);
        continue;
      }
      if (d != nullptr && call % 2 == 0) {
        raw = run_raw(*e, *d, threads);
        settle(*e);
      }
      tracked = run_tracked(*e, threads);
      retire_cpu_s = retire_thread().cpu_s - before.cpu_s;
      if (d != nullptr && call % 2 == 1) {
        settle(*e);
        raw = run_raw(*e, *d, threads);
      }
      st.SetIterationTime(tracked->loop.seconds);
    }
    if (slices > 1) st.counters["slices"] = slices;
    if (!tracked->loop.error.empty()) throw std::runtime_error(tracked->loop.error);
    if (raw && !raw->error.empty()) throw std::runtime_error("the raw pair: " + raw->error);
    const TrackedRun& t = *tracked;
    st.counters["threads"] = threads;
    st.counters["iterations_per_s"] = t.loop.iterations_per_s;
    st.counters["lane_balance"] = t.loop.lane_balance;
    // The raw loop makes the retirement thread no work: its CPU over the
    // pair is the tracked loop's.
    if (t.loop.seconds > 0) st.counters["retire_cpu_fraction"] = retire_cpu_s / t.loop.seconds;
    if (raw) {
      st.counters["raw_iterations_per_s"] = raw->iterations_per_s;
      st.counters["ratio"] =
          raw->iterations_per_s > 0 ? t.loop.iterations_per_s / raw->iterations_per_s : 0.0;
      st.counters["raw_first"] = call % 2 == 0 ? 1 : 0;
      report_slice_ratios(st, t.loop.slice_rates, raw->slice_rates);
      report_split(st, raw->split, "raw_");
    } else {
      st.SetLabel("no raw pair: " + e->raw_why);
    }
    report_split(st, t.loop.split, "");
    // Absent rather than 0 when the runtime recorded nothing: a 0 would read as a pass.
    st.counters["retired_submissions"] = static_cast<double>(t.retired);
    if (t.retired > 0) {
      st.counters["retire_p50_us"] = t.p50_us;
      st.counters["retire_p99_us"] = t.p99_us;
      st.counters["retire_max_us"] = t.max_us;
    }
    if (t.stats.held_bytes_peak > 0)
      st.counters["held_bytes_peak"] = static_cast<double>(t.stats.held_bytes_peak);
    st.counters["inflight_bytes"] = static_cast<double>(threads) * static_cast<double>(kBufferBytes);
    st.counters["leaked_allocations"] = static_cast<double>(t.leaked);
    st.counters["quarantined_submissions"] = static_cast<double>(t.quarantined);
    st.counters["stream_ordered_releases"] = static_cast<double>(t.stats.stream_ordered_releases);
    st.counters["host_proven_releases"] = static_cast<double>(t.stats.host_proven_releases);
    st.counters["same_stream_reuses"] = static_cast<double>(t.stats.same_stream_reuses);
    st.counters["pressure_retries"] = static_cast<double>(t.stats.pressure_retries);
    st.counters["queue_waits"] = static_cast<double>(t.stats.queue_waits);
    if (backlog_on()) {
      const auto report = [&](const char* name, const char* at, const Peak& p) {
        st.counters[name] = p.value;
        st.counters[at] = p.at_ms;
      };
      report("backlog_peak", "backlog_peak_at_ms", t.backlog.pending);
      report("device_lag_max_ms", "device_lag_max_at_ms", t.backlog.device_lag);
      report("retire_stall_max_ms", "retire_stall_max_at_ms", t.backlog.retire_stall);
      report("sample_gap_max_ms", "sample_gap_max_at_ms", t.backlog.sample_gap);
    }
  });
}

void BM_RawSustainedLoad(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  const int threads = static_cast<int>(st.range(0));
  guarded(st, [&] {
    (void)sustained_kernels();
    LoopRun r;
    for (auto _ : st) {
      settle(*e);
      r = run_raw(*e, *d, threads);
      st.SetIterationTime(r.seconds);
    }
    if (!r.error.empty()) throw std::runtime_error(r.error);
    st.counters["threads"] = threads;
    st.counters["iterations_per_s"] = r.iterations_per_s;
    st.counters["lane_balance"] = r.lane_balance;
    report_split(st, r.split, "");
  });
}

// Diagnostic (registered with TANDEM_BENCH_SUSTAINED_AA=1): the raw loop
// paired with itself as BM_SustainedLoad pairs it with the tracked one
// (TANDEM_BENCH_SUSTAINED_SLICES applies): `ratio` is the second run's
// iterations/s over the first's, the method's own spread on this machine.
void BM_SustainedLoadAA(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  const int threads = static_cast<int>(st.range(0));
  guarded(st, [&] {
    (void)sustained_kernels();
    const int slices = sustained_slices();
    LoopRun a, b;
    for (auto _ : st) {
      settle(*e);
      if (slices > 1) {
        RawLoop first(*e, *d, threads), second(*e, *d, threads);
        run_sliced(first, second, slices);
        a = first.finish();
        b = second.finish();
      } else {
        a = run_raw(*e, *d, threads);
        settle(*e);
        b = run_raw(*e, *d, threads);
      }
      st.SetIterationTime(b.seconds);
    }
    if (!a.error.empty()) throw std::runtime_error(a.error);
    if (!b.error.empty()) throw std::runtime_error(b.error);
    st.counters["threads"] = threads;
    st.counters["slices"] = slices;
    st.counters["iterations_per_s"] = b.iterations_per_s;
    st.counters["raw_iterations_per_s"] = a.iterations_per_s;
    st.counters["ratio"] = a.iterations_per_s > 0 ? b.iterations_per_s / a.iterations_per_s : 0.0;
  });
}

// Diagnostic (registered with TANDEM_BENCH_SUSTAINED_FLOOR=1): the device's
// own queue under the tracked loop's work, without tandem. K threads, each
// on a stream of its own, launch the same fill and Tile scale on one buffer
// allocated before the loop (no allocation, no free, no tracking: the
// fastest this host feeds the device this work) for kSustainedFor; every
// kFloorProbeEvery iterations a thread records a probe event. One poller
// thread, as retirement would, queries each thread's oldest probe about
// every kFloorPollEvery, spinning (no timed sleep to oversleep), and takes
// submit -> seen complete. Counters: iterations_per_s, probe_p50_us,
// probe_p99_us, probe_max_us, probes, probes_skipped (a thread's ring was
// full), outstanding_peak (the most probes a thread had in flight). A tail
// here is the device's queue at this rate, not tandem's retirement.
constexpr int kFloorProbeEvery = 8;
constexpr std::size_t kFloorRing = 4096;
constexpr auto kFloorPollEvery = std::chrono::microseconds(100);

class FloorProbes {
 public:
  FloorProbes(drv::Backend& b, drv::ContextHandle ctx, const RawDriver& d, int threads)
      : b_(b), ctx_(ctx), d_(d), rings_(static_cast<std::size_t>(threads)) {
    for (Ring& r : rings_) {
      for (Slot& s : r.slots) {
        if (const drv::Result rc = b.event_create(ctx, s.event); !rc.ok())
          throw std::runtime_error(b.describe(rc));
      }
    }
  }
  ~FloorProbes() {
    stop();
    for (Ring& r : rings_) {
      for (Slot& s : r.slots) (void)b_.event_destroy(ctx_, s.event);
    }
  }
  FloorProbes(const FloorProbes&) = delete;
  FloorProbes& operator=(const FloorProbes&) = delete;

  void start() {
    poller_ = std::thread([this] {
      check_rc(d_.ctx_set_current(ctx_.raw), "cuCtxSetCurrent");
      while (!done_.load(std::memory_order_acquire)) {
        const Clock::time_point next = Clock::now() + kFloorPollEvery;
        poll();
        while (Clock::now() < next) TANDEM_CPU_RELAX();
      }
      while (poll()) {
      }
    });
  }
  // Thread `t`'s probe behind what its stream has queued (skipped when its ring is full).
  void record(int t, void* stream) {
    Ring& r = rings_[static_cast<std::size_t>(t)];
    const std::uint64_t head = r.head.load(std::memory_order_relaxed);
    const std::uint64_t tail = r.tail.load(std::memory_order_acquire);
    if (head - tail == kFloorRing) {
      ++r.skipped;
      return;
    }
    r.peak = std::max(r.peak, head - tail + 1);
    Slot& s = r.slots[head % kFloorRing];
    s.recorded = Clock::now();
    check_rc(d_.event_record(s.event.raw, stream), "cuEventRecord");
    r.head.store(head + 1, std::memory_order_release);
  }
  // After the threads drained their streams: the poller takes the last probes and stops.
  void stop() {
    done_.store(true, std::memory_order_release);
    if (poller_.joinable()) poller_.join();
  }
  void report(benchmark::State& st) {
    std::sort(lat_us_.begin(), lat_us_.end());
    const auto q = [&](double f) {
      return lat_us_.empty()
                 ? 0.0
                 : lat_us_[std::min(lat_us_.size() - 1,
                                    static_cast<std::size_t>(f * static_cast<double>(lat_us_.size())))];
    };
    std::uint64_t skipped = 0, peak = 0;
    for (const Ring& r : rings_) {
      skipped += r.skipped;
      peak = std::max(peak, r.peak);
    }
    st.counters["probes"] = static_cast<double>(lat_us_.size());
    st.counters["probe_p50_us"] = q(0.5);
    st.counters["probe_p99_us"] = q(0.99);
    st.counters["probe_max_us"] = lat_us_.empty() ? 0.0 : lat_us_.back();
    st.counters["probes_skipped"] = static_cast<double>(skipped);
    st.counters["outstanding_peak"] = static_cast<double>(peak);
  }

 private:
  struct Slot {
    drv::EventHandle event{};
    Clock::time_point recorded{};
  };
  struct alignas(64) Ring {
    std::array<Slot, kFloorRing> slots{};
    std::atomic<std::uint64_t> head{0};   // the thread's
    std::atomic<std::uint64_t> tail{0};   // the poller's
    std::uint64_t skipped = 0, peak = 0;  // the thread's
  };

  // One pass over the rings: every completed probe taken. True if any is left in flight.
  bool poll() {
    bool left = false;
    for (Ring& r : rings_) {
      std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
      const std::uint64_t head = r.head.load(std::memory_order_acquire);
      while (tail < head) {
        const Slot& s = r.slots[tail % kFloorRing];
        const int rc = d_.event_query(s.event.raw);
        if (rc == RawDriver::kNotReady) break;
        check_rc(rc, "cuEventQuery");
        lat_us_.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s.recorded).count());
        ++tail;
      }
      r.tail.store(tail, std::memory_order_release);
      left = left || tail < head;
    }
    return left;
  }

  drv::Backend& b_;
  const drv::ContextHandle ctx_;
  const RawDriver& d_;
  std::vector<Ring> rings_;
  std::vector<double> lat_us_;  // the poller's until stop()
  std::atomic<bool> done_{false};
  std::thread poller_;
};

void BM_RawLaunchFloor(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  const int threads = static_cast<int>(st.range(0));
  guarded(st, [&] {
    const SustainedKernels& kk = sustained_kernels();
    drv::Backend& b = e->platform.backend();
    const drv::ContextHandle ctx = e->ctx.native();
    void* const fill_fn = e->function(*kk.fill);
    void* const scale_fn = e->function(*kk.scale);
    for (auto _ : st) {
      settle(*e);
      check_rc(d->ctx_set_current(ctx.raw), "cuCtxSetCurrent");
      const RawPool pool(b, ctx);
      const RawStreams streams(b, ctx, threads);
      std::vector<unsigned long long> bufs(static_cast<std::size_t>(threads));
      for (int t = 0; t < threads; ++t) {
        check_rc(d->alloc_from_pool_async(&bufs[static_cast<std::size_t>(t)], kBufferBytes, pool.raw(),
                                          streams.raw(t)),
                 "cuMemAllocFromPoolAsync");
        check_rc(d->stream_synchronize(streams.raw(t)), "cuStreamSynchronize");
      }
      FloorProbes probes(b, ctx, *d, threads);
      probes.start();
      LoopTotals totals(threads);
      totals.add(run_together(
          threads, [&](int) { check_rc(d->ctx_set_current(ctx.raw), "cuCtxSetCurrent"); },
          [&](int t, Clock::time_point start) {
            void* s = streams.raw(t);
            const unsigned long long p = bufs[static_cast<std::size_t>(t)];
            k::PackedParams fill_params = kk.fill_params;
            k::PackedParams scale_params = kk.scale_params;
            void** fp = fill_params.pointers();
            void** sp = scale_params.pointers();
            std::int64_t i = 0;
            totals.done(t) += loop_for(start, kSustainedFor, [&] {
              raw_launch(*d, fill_fn, kk.fill_dims, fp, p, s);
              raw_launch(*d, scale_fn, kk.scale_dims, sp, p, s);
              if (++i % kFloorProbeEvery == 0) probes.record(t, s);
            });
            check_rc(d->stream_synchronize(s), "cuStreamSynchronize");
          }));
      probes.stop();
      for (int t = 0; t < threads; ++t)
        check_rc(d->free_async(bufs[static_cast<std::size_t>(t)], streams.raw(t)), "cuMemFreeAsync");
      const LoopRun r = totals.result();
      if (!r.error.empty()) throw std::runtime_error(r.error);
      st.SetIterationTime(r.seconds);
      st.counters["threads"] = threads;
      st.counters["iterations_per_s"] = r.iterations_per_s;
      probes.report(st);
    }
  });
}

// --- the big-buffer loop -----------------------------------------------------------

const k::KernelEntry& spin_entry() {
  const k::KernelEntry* spin = k::find(k::Model::simt, "spin", tandem::DType::u8);
  if (spin == nullptr) throw std::runtime_error("the catalog has no spin kernel");
  return *spin;
}

std::size_t big_buffer_bytes(std::size_t free_bytes) {
  const auto bytes = static_cast<std::size_t>(static_cast<double>(free_bytes) * kBigFraction);
  return bytes / kBigAlign * kBigAlign;
}

[[noreturn]] void big_loop_failed(int iteration, std::size_t bytes, std::size_t free_bytes,
                                  const std::string& why) {
  // scripts/bench_report.py reads this prefix as the loop's miss.
  char sizes[96];
  std::snprintf(sizes, sizeof sizes, "%.2f GiB each, %.2f GiB free before the loop",
                static_cast<double>(bytes) / kGiB, static_cast<double>(free_bytes) / kGiB);
  throw std::runtime_error("big-buffer loop failed at iteration " + std::to_string(iteration) + " of " +
                           std::to_string(kBigIterations) + " (" + sizes + "): " + why);
}

void report_big(benchmark::State& st, double seconds, std::size_t bytes, std::size_t free_bytes) {
  st.counters["loop_s"] = seconds;
  st.counters["passed"] = 1;
  st.counters["iterations"] = kBigIterations;
  st.counters["buffer_gib"] = static_cast<double>(bytes) / kGiB;
  st.counters["free_gib"] = static_cast<double>(free_bytes) / kGiB;
}

void BM_BigBufferLoop(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    const k::KernelEntry& spin = spin_entry();
    settle(*e);
    for (auto _ : st) {
      const tandem::Context ctx = tandem::Context::create(e->platform.device(0));
      std::optional<tandem::Stream> stream = tandem::Stream::create(ctx);
      const tandem::Stream& s = *stream;
      ctx.load_kernel(*spin.symbol);
      const std::size_t free_bytes = ctx.memory_info().free_bytes;
      const std::size_t bytes = big_buffer_bytes(free_bytes);
      std::string error;
      int i = 0;
      const auto t0 = Clock::now();
      try {
        for (; i < kBigIterations; ++i) {
          const tandem::View buf = tandem::allocate(s, tandem::DType::u8, bytes);
          const k::Arg args[] = {k::Arg::of(buf), k::Arg::value(kSpinNs)};
          (void)k::launch(s, spin, args);
        }
        s.synchronize();
      } catch (const std::exception& ex) {
        error = ex.what();  // tandem::Error's text starts with its code (out_of_memory: ...)
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      // Untimed: everything retired and freed, and the pool's cached memory
      // given back, before the next repetition asks what is free (the
      // context itself goes only once its stream is destroyed, later).
      s.synchronize();
      const auto retire = [&] {
        if (!ctx.wait_for_retirement(std::chrono::seconds(60))) {
          throw std::runtime_error("the big-buffer loop's work did not retire within 60 s of its end");
        }
      };
      retire();
      const tandem::RuntimeStats stats = ctx.stats();
      ctx.trim();
      stream.reset();
      retire();  // the dropped stream destroyed
      if (!error.empty()) big_loop_failed(i + 1, bytes, free_bytes, error);
      st.SetIterationTime(seconds);
      report_big(st, seconds, bytes, free_bytes);
      st.counters["leaked_allocations"] = static_cast<double>(stats.live_allocations);
      st.counters["quarantined_submissions"] = static_cast<double>(stats.quarantined_submissions);
      st.counters["pressure_retries"] = static_cast<double>(stats.pressure_retries);
      st.counters["pressure_recoveries"] = static_cast<double>(stats.pressure_recoveries);
      st.counters["same_stream_reuses"] = static_cast<double>(stats.same_stream_reuses);
      st.counters["stream_ordered_releases"] = static_cast<double>(stats.stream_ordered_releases);
      st.counters["host_proven_releases"] = static_cast<double>(stats.host_proven_releases);
    }
  });
}

void BM_RawBigBufferLoop(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    const k::KernelEntry& spin = spin_entry();
    drv::Backend& b = e->platform.backend();
    const drv::ContextHandle ctx = e->ctx.native();
    void* fn = e->function(spin);
    settle(*e);
    for (auto _ : st) {
      const RawPool pool(b, ctx);
      const RawStreams streams(b, ctx, 1);
      void* s = streams.raw(0);
      std::size_t free_bytes = 0, total = 0;
      if (const drv::Result r = b.mem_info(ctx, free_bytes, total); !r.ok())
        throw std::runtime_error(b.describe(r));
      const std::size_t bytes = big_buffer_bytes(free_bytes);
      const k::ArgShape shapes[] = {k::ArgShape::buffer(tandem::DType::u8, bytes), k::ArgShape{}};
      drv::LaunchDims dims;
      k::PackedParams params;
      const k::LaunchArg args[] = {k::LaunchArg::view(0, shapes[0]), k::LaunchArg::value(kSpinNs)};
      std::string why = k::launch_dims(spin, shapes, std::nullopt, std::nullopt, dims);
      if (why.empty()) why = k::pack_params(spin, args, params);
      if (!why.empty()) throw std::runtime_error("spin: " + why);
      void** pp = params.pointers();
      check_rc(d->ctx_set_current(ctx.raw), "cuCtxSetCurrent");
      std::string error;
      int i = 0;
      const auto t0 = Clock::now();
      try {
        for (; i < kBigIterations; ++i) {
          unsigned long long p = 0;
          check_rc(d->alloc_from_pool_async(&p, bytes, pool.raw(), s), "cuMemAllocFromPoolAsync");
          raw_launch(*d, fn, dims, pp, p, s);
          check_rc(d->free_async(p, s), "cuMemFreeAsync");
        }
        check_rc(d->stream_synchronize(s), "cuStreamSynchronize");
      } catch (const std::exception& ex) {
        error = ex.what();
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      if (!error.empty()) big_loop_failed(i + 1, bytes, free_bytes, error);
      st.SetIterationTime(seconds);
      report_big(st, seconds, bytes, free_bytes);
    }
  });
}

}  // namespace

void register_sustained_benchmarks() {
  // K = 1, 2, 4, 8, one iteration a repetition, kSustainedRepetitions of them.
  const auto per_k = [](const char* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)
        ->RangeMultiplier(2)
        ->Range(1, kMaxLanes)
        ->Iterations(1)
        ->Repetitions(kSustainedRepetitions)
        ->UseManualTime();
  };
  per_k("BM_SustainedLoad", BM_SustainedLoad);
  per_k("BM_RawSustainedLoad", BM_RawSustainedLoad);
  if (env_flag("TANDEM_BENCH_SUSTAINED_AA")) per_k("BM_SustainedLoadAA", BM_SustainedLoadAA);
  if (env_flag("TANDEM_BENCH_SUSTAINED_FLOOR")) per_k("BM_RawLaunchFloor", BM_RawLaunchFloor);
  // Repetitions: the command line's (scripts/bench: 3).
  benchmark::RegisterBenchmark("BM_BigBufferLoop", BM_BigBufferLoop)->Iterations(1)->UseManualTime();
  benchmark::RegisterBenchmark("BM_RawBigBufferLoop", BM_RawBigBufferLoop)->Iterations(1)->UseManualTime();
}

}  // namespace tandem_bench
