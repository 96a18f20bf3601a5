// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/run_options.hpp — how `tandem run` runs a scenario.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "tandem/device.hpp"
#include "tandem/scenario/scenario.hpp"

namespace tandem::scenario {

// Counters a caller may read from another thread while a run is going
// (the command's progress line). Relaxed atomics: a display, not a contract.
struct RunProgress {
  std::atomic<std::uint64_t> repetition{0};  // 1-based, 0 before the first
  std::atomic<std::uint64_t> repetitions{0};
  std::atomic<std::uint64_t> steps_done{0};  // all threads, all repetitions
  std::atomic<std::uint64_t> checks_failed{0};
  std::atomic<std::uint64_t> errors{0};
};

struct RunOptions {
  std::optional<BackendKind> backend;  // overrides the file's `backend`
  // Runs on this platform (an embedding program's own, or a benchmark's)
  // instead of opening one; `backend` and the file's backend and sim
  // settings for the device count are then not used.
  std::optional<Platform> platform;
  std::optional<std::uint64_t> repeat;  // overrides the file's `repeat`
  std::string file_text;                // the file's bytes (for scenario.sha256); may be empty
  std::string tool_version = "0";
  std::string tool_git = "unknown";
  RunProgress* progress = nullptr;  // optional
  // The report's `timeline`: memory and work in flight sampled on a thread
  // of the run's own (timeline.hpp). Off: no sampler thread and no
  // `timeline` (`tandem run --no-timeline`; BM_ScenarioLaunchStep's
  // timeline_cost_ns measures what it costs the steps).
  bool timeline = true;
};

}  // namespace tandem::scenario
