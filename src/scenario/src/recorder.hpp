// SPDX-License-Identifier: Apache-2.0
// recorder.hpp — what a run observes: checks, errors, counters and
// latencies, gathered per host thread and merged into the report.
//
// Each scenario thread writes only its own ThreadRecord (no lock: checks,
// errors and histograms of a busy thread never meet another thread's); the
// engine merges them after every repetition, in a fixed order (the main
// steps, then the threads by name). Counters are single-writer atomics, so
// a `note` step may read every thread's figures while they run. What is
// rare (notes, vram marks, the run's own figures) goes through one mutex.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "run_record.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/latency_histogram.hpp"
#include "tandem/scenario/run_options.hpp"
#include "tandem/scenario/step.hpp"
#include "timeline.hpp"

namespace tandem::scenario::detail {

// A counter one thread writes and any thread may read.
class Counter {
 public:
  void add(std::uint64_t n) noexcept {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

struct ThreadRecord {
  explicit ThreadRecord(std::size_t ops) : step_ns(ops) {}

  std::vector<CheckRecord> checks;
  std::vector<ErrorRecord> errors;
  std::vector<std::string> skipped;
  Counter submissions, launches, bytes_moved, checks_done, errors_seen;
  LatencyHistogram submit_ns;                              // in TickClock ticks, as step_ns
  std::vector<std::unique_ptr<LatencyHistogram>> step_ns;  // per op, made on its first step

  void step_took(Op op, std::uint64_t ns) {
    auto& h = step_ns[static_cast<std::size_t>(op)];
    if (!h) h = std::make_unique<LatencyHistogram>();
    h->record_single_writer(ns);  // this thread's own
  }
};

class Recorder {
 public:
  // `ops`: how many op kinds there are (the op table's rows).
  Recorder(RunProgress* progress, std::size_t ops)
      : progress_(progress), ops_(ops), step_ns_(std::make_unique<LatencyHistogram[]>(ops)) {}

  // The records of the threads that run steps: the main one first.
  ThreadRecord& add_thread();
  [[nodiscard]] const std::vector<std::unique_ptr<ThreadRecord>>& threads() const noexcept {
    return threads_;
  }

  void check(ThreadRecord& t, const Step& st, const char* what, ojson expected, ojson actual, bool ok,
             std::uint64_t repetition);
  void error(ThreadRecord& t, const Step& st, std::string code, std::string message,
             std::uint64_t repetition);
  void step_done() noexcept {
    if (progress_ != nullptr) progress_->steps_done.fetch_add(1, std::memory_order_relaxed);
  }
  void note(std::string text);
  // A step writes its message and the counters summed over the threads now.
  void step_note(const Step& st, std::uint64_t repetition, ojson counters);
  [[nodiscard]] ojson counters() const;  // submissions, launches, bytes_moved, checks, errors so far

  // After each repetition: the threads' checks, errors and skipped steps
  // move into the run record, in thread order.
  void merge_repetition();

  // Changes the run record while steps may run (a vram mark or check).
  template <class F>
  void update(F&& f) TANDEM_EXCLUDES(mu_) {
    base::Guard g(mu_);
    f(rec_);
  }
  // The run record for the engine's own writes before the first step and
  // after the last (setup, the end), when no step runs: no lock.
  RunRecord& run() noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS { return rec_; }
  // Memory over time: the engine's sampler fills it (timeline.hpp).
  Timeline& timeline() noexcept { return timeline_; }

  // The report: the threads' counters and histograms (in ticks of
  // `ns_per_tick` ns) summed in.
  [[nodiscard]] ojson report(const LatencyHistogram* retire_ns, double ns_per_tick);

 private:
  RunProgress* progress_;
  std::size_t ops_;
  std::vector<std::unique_ptr<ThreadRecord>> threads_;
  base::Mutex mu_;
  RunRecord rec_ TANDEM_GUARDED_BY(mu_);
  LatencyHistogram submit_ns_;
  std::unique_ptr<LatencyHistogram[]> step_ns_;  // per op
  // Every 500 us at first: a short sim run still gets a few samples.
  Timeline timeline_{std::chrono::microseconds(500)};
};

}  // namespace tandem::scenario::detail
