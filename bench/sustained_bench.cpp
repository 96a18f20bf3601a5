// SPDX-License-Identifier: Apache-2.0
// Memory reused at the device's pace while work keeps coming (issue 21):
// a sustained multi-threaded loop of allocate, launch, drop. The loop of
// buffers too large for two to fit at once is big_buffer_bench.cpp's, the
// device's own queue under this work launch_floor_bench.cpp's.
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
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backlog_sampler.hpp"
#include "bench_env.hpp"
#include "lanes.hpp"
#include "paired.hpp"
#include "stall_sampler.hpp"
#include "sustained_loop.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

namespace {

using namespace sustained;  // NOLINT(google-build-using-namespace): the loop's own vocabulary

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
  const BackendPool pool_;  // destroyed after the streams (drained first)
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

}  // namespace

void register_sustained_benchmarks() {
  register_per_threads("BM_SustainedLoad", BM_SustainedLoad);
  register_per_threads("BM_RawSustainedLoad", BM_RawSustainedLoad);
  if (env_flag("TANDEM_BENCH_SUSTAINED_AA")) register_per_threads("BM_SustainedLoadAA", BM_SustainedLoadAA);
  register_launch_floor_benchmark();
  register_big_buffer_benchmarks();
}

}  // namespace tandem_bench
