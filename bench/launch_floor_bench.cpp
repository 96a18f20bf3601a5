// SPDX-License-Identifier: Apache-2.0
// BM_RawLaunchFloor/K, a diagnostic (registered with TANDEM_BENCH_SUSTAINED_FLOOR=1): the device's
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
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench_env.hpp"
#include "lanes.hpp"
#include "paired.hpp"
#include "sustained_loop.hpp"
#include "tandem/base/cpu_relax.hpp"

namespace tandem_bench {

namespace {

using namespace sustained;  // NOLINT(google-build-using-namespace): the loop's own vocabulary

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
      const BackendPool pool(b, ctx);
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

}  // namespace

void register_launch_floor_benchmark() {
  if (env_flag("TANDEM_BENCH_SUSTAINED_FLOOR")) register_per_threads("BM_RawLaunchFloor", BM_RawLaunchFloor);
}

}  // namespace tandem_bench
