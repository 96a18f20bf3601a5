// SPDX-License-Identifier: Apache-2.0
// A diagnostic of the sustained loop (TANDEM_BENCH_SUSTAINED_BACKLOG=1,
// sustained_bench.cpp): while the tracked loop runs, a thread samples its
// context every millisecond and tells where a submit -> retired tail comes
// from. Four measures, each with when it peaked (ms after the run began):
//
//   backlog_peak      the most pending submissions (RuntimeStats): a tail
//                     shows as a backlog, in a run's first moments
//                     (something cold) or at a random moment;
//   device_lag_max    the longest a probe event took to complete, recorded
//                     on each loop stream behind its queued work (one probe
//                     in flight per stream; the sampling period bounds the
//                     resolution): the device running behind the submitters;
//   retire_stall_max  the longest no submission retired while some were
//                     pending: retirement not keeping up with work the
//                     device has done;
//   sample_gap_max    the longest between two samples' starts (1 ms when
//                     the sampler keeps its period): the other two are
//                     only as fine as this, and its driver calls (a query
//                     and a record per stream) wait for the driver too.
//
// A tail with a long device lag is the device's queue; one with a short
// lag and a long stall is tandem's retirement. A lag no longer than the
// sample gap says nothing of the device: on the H200 at e960d89 lags of
// 10-50 ms came in every repetition with a retired max under 4 ms, which a
// device that far behind could not give (work queued just before a probe
// completes just before it): the sampler had looked late.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "bench_env.hpp"
#include "tandem/context.hpp"
#include "tandem/driver/backend.hpp"
#include "tandem/stream.hpp"

namespace tandem_bench {

// The highest value a measure reached, and when (ms after sampling began).
struct Peak {
  double value = 0;
  double at_ms = 0;
  void offer(double v, double at) {
    if (v > value) *this = {v, at};
  }
};

struct BacklogPeaks {
  Peak pending;       // submissions
  Peak device_lag;    // ms
  Peak retire_stall;  // ms
  Peak sample_gap;    // ms
  // Each measure's highest of the two (a run's slices).
  void merge(const BacklogPeaks& o) {
    for (auto [mine, theirs] :
         {std::pair{&pending, &o.pending}, std::pair{&device_lag, &o.device_lag},
          std::pair{&retire_stall, &o.retire_stall}, std::pair{&sample_gap, &o.sample_gap}}) {
      mine->offer(theirs->value, theirs->at_ms);
    }
  }
};

class BacklogSampler {
 public:
  // Samples `ctx` and probes `streams` (their native handles, through `b`,
  // the context's backend) until stop(); nothing when `on` is false.
  BacklogSampler(tandem::driver::Backend& b, const tandem::Context& ctx,
                 const std::vector<tandem::Stream>& streams, bool on)
      : ctx_(ctx), b_(b) {
    if (!on) return;
    for (const tandem::Stream& s : streams) probes_.push_back(Probe{s.native()});
    thread_ = std::thread([this] { sample(); });
  }
  ~BacklogSampler() { stop(); }
  BacklogSampler(const BacklogSampler&) = delete;
  BacklogSampler& operator=(const BacklogSampler&) = delete;

  // Joins the sampler (its probes drained and destroyed); peaks() is final after it.
  void stop() {
    done_.store(true, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] BacklogPeaks peaks() const { return peaks_; }

 private:
  using ms = std::chrono::duration<double, std::milli>;

  struct Probe {
    tandem::driver::StreamHandle stream;
    tandem::driver::EventHandle event{};
    Clock::time_point recorded{};
    bool in_flight = false;
  };

  void sample() {
    const Clock::time_point start = Clock::now();
    const tandem::driver::ContextHandle h = ctx_.native();
    for (Probe& p : probes_) {
      if (!b_.event_create(h, p.event).ok()) p.event = {};
    }
    std::uint64_t retired = ctx_.stats().retired_submissions;
    Clock::time_point last_retired = start, last_sample = start;
    while (!done_.load(std::memory_order_relaxed)) {
      const Clock::time_point now = Clock::now();
      const double at = ms(now - start).count();
      peaks_.sample_gap.offer(ms(now - last_sample).count(), at);
      last_sample = now;
      const tandem::RuntimeStats s = ctx_.stats();
      peaks_.pending.offer(static_cast<double>(s.pending_submissions), at);
      if (s.retired_submissions != retired || s.pending_submissions == 0) {
        retired = s.retired_submissions;
        last_retired = now;
      }
      peaks_.retire_stall.offer(ms(now - last_retired).count(), at);
      for (Probe& p : probes_) probe(h, p, now, at);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the sampling period
    }
    for (Probe& p : probes_) {
      if (!p.event) continue;
      if (p.in_flight) (void)b_.event_synchronize(h, p.event);
      (void)b_.event_destroy(h, p.event);
    }
  }

  // The probe's lag when it completed (or so far, while it has not), and a
  // new one recorded behind what the stream has queued now.
  void probe(tandem::driver::ContextHandle h, Probe& p, Clock::time_point now, double at) {
    if (!p.event) return;
    if (p.in_flight) {
      const tandem::driver::Status st = b_.event_query(h, p.event).status;
      peaks_.device_lag.offer(ms(now - p.recorded).count(), at);
      if (st == tandem::driver::Status::not_ready) return;
    }
    p.in_flight = b_.event_record(h, p.event, p.stream).ok();
    p.recorded = Clock::now();
  }

  const tandem::Context& ctx_;
  tandem::driver::Backend& b_;
  std::vector<Probe> probes_;
  std::atomic<bool> done_{false};
  BacklogPeaks peaks_;  // the sampler's own until stop() joins it
  std::thread thread_;
};

}  // namespace tandem_bench
