// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/executor.hpp — runs a validated scenario and reports.
//
//   tandem::scenario::Scenario s = tandem::scenario::load("x.json");
//   tandem::scenario::RunResult r = tandem::scenario::run(s, {});
//   std::cout << r.report.dump(2);   // tandem.report/1 (scenario-format.md §3)
//   r.outcome;                       // pass, fail, error, unavailable
//
// The run opens its own platform (a fresh simulated device, or the CUDA
// driver), its own context with the scenario's conflict policy and its own
// streams; `steps` run on the calling thread, then every `threads` entry on
// a host thread of its own. After the body (each repetition) the remaining
// handles are dropped; after the last one, retirement is waited for and
// leaks, quarantine, foreign owners, violations and uniqueness failures are
// measured and compared with `expect`.
//
// The file is compiled once before it runs (handles to slots, kernels to
// plans); the steps then run with no name look-up and no engine-wide lock.
//
// Blocking: the call blocks until the run is over. Never throws for
// anything a scenario does: runtime and device errors become report
// entries (status "error", outcome error).
#pragma once

#include <nlohmann/json.hpp>

#include "tandem/scenario/outcome.hpp"
#include "tandem/scenario/run_options.hpp"
#include "tandem/scenario/scenario.hpp"

namespace tandem::scenario {

struct RunResult {
  nlohmann::ordered_json report;
  Outcome outcome = Outcome::pass;  // never `invalid`: a Scenario is valid
};

[[nodiscard]] RunResult run(const Scenario& scenario, const RunOptions& options);

}  // namespace tandem::scenario
