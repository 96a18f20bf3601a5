// tandem/scenario/executor.hpp — runs a validated scenario and reports.
//
//   tandem::scenario::Scenario s = tandem::scenario::load("x.json");
//   tandem::scenario::RunResult r = tandem::scenario::run(s, {});
//   std::cout << r.report.dump(2);   // tandem.report/1 (scenario-format.md §3)
//   return r.exit_code;              // 0 pass, 1 fail, 3 error, 4 no backend
//
// The run opens its own platform (a fresh simulated device, or the CUDA
// driver), its own context with the scenario's conflict policy and its own
// streams; `steps` run on the calling thread, then every `threads` entry on
// a host thread of its own. After the body (each repetition) the remaining
// handles are dropped; after the last one, retirement is waited for and
// leaks, quarantine, foreign owners, violations and uniqueness failures are
// measured and compared with `expect`.
//
// Blocking: the call blocks until the run is over. Never throws for
// anything a scenario does: runtime and device errors become report
// entries (status "error", exit code 3).
#pragma once

#include <nlohmann/json.hpp>

#include "tandem/scenario/run_options.hpp"
#include "tandem/scenario/scenario.hpp"

namespace tandem::scenario {

struct RunResult {
  nlohmann::ordered_json report;
  int exit_code = 0;  // 0 pass, 1 fail, 3 runtime/device error, 4 backend not available
};

[[nodiscard]] RunResult run(const Scenario& scenario, const RunOptions& options);

}  // namespace tandem::scenario
