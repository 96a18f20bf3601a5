// SPDX-License-Identifier: Apache-2.0
// run_record.hpp — what a run observed, in the shape of the report
// (spec/scenario-format.md §3). The executor fills it; report_json() lays it
// out; nothing here talks to the runtime.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tandem/latency_histogram.hpp"

namespace tandem::scenario::detail {

using ojson = nlohmann::ordered_json;

struct CheckRecord {
  std::string step;  // JSON path, or "expect.<key>" for end-of-run expectations
  std::string what;
  ojson expected;
  ojson actual;
  bool ok = false;
  // The repetition it ran in; end-of-run expectations: the last (extension:
  // a JUnit test case per repetition carries its own checks).
  std::uint64_t repetition = 1;
};

struct ErrorRecord {
  std::string step;
  std::string op;
  std::string code;  // a §4 code
  std::string message;
  std::uint64_t repetition = 1;
};

struct VramRecord {
  std::uint64_t baseline_free = 0, final_free = 0, tolerance = 0;
  std::int64_t delta = 0;
  bool ok = true;
  bool checked = false;  // an explicit `vram check` step decided `ok`
};

struct RunRecord {
  std::string status = "pass";  // pass | fail | error
  ojson tool, scenario, device;
  std::string backend;
  // The ContextOptions the run used (extension: `runtime`).
  ojson runtime = ojson::object();
  double duration_s = 0.0;
  // duration_s in three parts: platform, contexts, catalog and program
  // before the first step; the bodies; waiting for retirement and measuring
  // after the last (extension).
  double setup_s = 0.0, settle_s = 0.0;
  std::uint64_t repetitions = 1;
  std::vector<CheckRecord> checks;
  std::vector<ErrorRecord> errors;
  std::vector<std::string> skipped;
  std::vector<std::string> notes;
  std::uint64_t live_allocations = 0, live_bytes = 0, quarantined_allocations = 0, quarantined_bytes = 0,
                foreign_owners_unreleased = 0;
  std::uint64_t uniqueness_checks = 0, uniqueness_failures = 0, runtime_uniqueness_checks = 0;
  VramRecord vram;  // the scenario's `device`
  // Per device, in the report only when the scenario uses several devices
  // (extension: `vram.devices`).
  std::map<std::uint32_t, VramRecord> vram_devices;
  std::uint64_t submissions = 0, launches = 0, retired = 0, bytes_moved = 0;
  double body_seconds = 0.0;
  const LatencyHistogram* submit_ns = nullptr;
  double submit_ns_per_tick = 1.0;              // submit_ns holds clock ticks
  const LatencyHistogram* retire_ns = nullptr;  // null when the runtime does not measure it
  ojson violations = ojson::array();
  // Per op kind: p50/p99/max of a step's wall time in ns (extension).
  ojson step_latency_ns = ojson::object();
  // What `note` steps wrote (extension).
  ojson step_notes = ojson::array();
  // Memory and work in flight over the run, sampled (extension; null: none).
  ojson timeline;
};

[[nodiscard]] ojson report_json(const RunRecord& r);

// {"bounds": [...], "counts": [...]}: bin i holds counts[i] samples in
// [bounds[i], bounds[i + 1]), the bounds in samples x `unit_per_sample`.
[[nodiscard]] ojson histogram_json(const LatencyHistogram& h, double unit_per_sample);

}  // namespace tandem::scenario::detail
