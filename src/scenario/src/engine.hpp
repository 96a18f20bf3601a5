// SPDX-License-Identifier: Apache-2.0
// engine.hpp — runs a compiled scenario: the steps of each thread, the
// repetitions, the measurements at the end. The ops (ops/*.cpp) run against
// it: the session (platform, contexts, streams), the handle table, the
// recorder and, in single-thread runs, the shadow model.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "handle_table.hpp"
#include "program.hpp"
#include "recorder.hpp"
#include "session.hpp"
#include "shadow.hpp"
#include "tandem/base/tick_clock.hpp"
#include "tandem/scenario/executor.hpp"

namespace tandem::scenario::detail {

using Clock = std::chrono::steady_clock;

// Thrown through run_steps when a nested list ended the body: the error is
// already recorded, only the unwinding remains.
struct BodyEnded {};

// A graph being captured by a thread: what its steps touch.
struct Capture {
  std::uint64_t stream_id = 0;
  GraphRecord* record = nullptr;
  std::set<std::uint64_t> allocations;
};

struct ThreadState {
  ThreadRecord* rec = nullptr;
  Capture* capture = nullptr;
};

class Engine {
 public:
  Engine(const Scenario& sc, const RunOptions& opt);
  RunResult run();

  // For the ops.
  const Scenario& scenario;
  const RunOptions options;
  Program program;
  Session session;
  Shadow shadow;
  bool shadow_on = false;
  HandleTable handles;
  Recorder recorder;
  base::TickClock clock;  // step and submission timings, in its ticks

  [[nodiscard]] std::uint64_t repetition() const noexcept { return repetition_; }
  // Runs a list; false when a step failed without expect_error (the rest
  // is listed as skipped and the caller stops too).
  bool run_steps(std::span<const CompiledStep> steps, ThreadState& t);
  // A submission went out (the runtime call took `ticks` of `clock`):
  // counters, the stream's last submission.
  void submitted(const CompiledStep& st, ThreadState& t, const LaunchFuture& f, std::uint64_t bytes,
                 std::uint64_t ticks, bool launch);
  // alloc and foreign: model the new memory, name it, then `init` it.
  void name_new_buffer(const CompiledStep& st, ThreadState& t, View v);
  // launch, replay, copy, upload and download may name their future with `id`.
  void name_future(const CompiledStep& st, LaunchFuture f);
  // `len`, or the fraction_of_free form worked out (noted once in the report).
  [[nodiscard]] std::uint64_t alloc_len(const CompiledStep& st);
  void record_check(ThreadState& t, const Step& st, const char* what, ojson expected, ojson actual, bool ok) {
    recorder.check(*t.rec, st, what, std::move(expected), std::move(actual), ok, repetition_);
  }

 private:
  [[nodiscard]] TimelineSample memory_sample() const noexcept;
  void exec(const CompiledStep& st, ThreadState& t);
  void init_contents(const CompiledStep& st, ThreadState& t, const View& v);
  void run_body();
  void release_borrowed();
  void measure_end();
  void measure_vram_end();
  void expectations();
  Outcome conclude();

  std::uint64_t repetitions_ = 1;
  std::uint64_t repetition_ = 0;
  Clock::duration body_time_{};
};

}  // namespace tandem::scenario::detail
