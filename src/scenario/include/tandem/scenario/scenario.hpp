// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/scenario.hpp — a validated scenario file (the AST).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tandem/base/backend_kind.hpp"
#include "tandem/base/conflict_policy.hpp"
#include "tandem/scenario/step.hpp"

namespace tandem::scenario {

struct Expectations {
  std::uint64_t live_allocations = 0, quarantined_allocations = 0, foreign_owners_unreleased = 0,
                violations = 0, uniqueness_failures = 0;
};

// A sim fault. completion_unknown aims at a launch/replay step; the others
// fail the nth call of a kind from the start of each repetition (one-shot):
// alloc_fail an allocation with out_of_memory; alloc_error an allocation,
// launch_fail a kernel launch, copy_fail a copy/upload/download (not a
// memset), each with a driver error (step error `driver`). Extensions:
// alloc_error, launch_fail, copy_fail.
struct SimFault {
  enum class Kind : std::uint8_t { completion_unknown, alloc_fail, alloc_error, launch_fail, copy_fail };
  Kind kind = Kind::completion_unknown;
  std::string submission;  // completion_unknown: a launch/replay step id
  std::uint64_t nth = 0;   // the others: >= 1
};

struct SimSettings {
  std::uint64_t memory_bytes = std::uint64_t{1} << 30;
  std::map<std::string, std::uint64_t> stream_delay_us;
  std::vector<SimFault> faults;
};

struct Scenario {
  std::string file;    // the label given to the loader
  std::string format;  // "tandem.scenario/1"
  std::string name, description;
  BackendKind backend = BackendKind::automatic;
  std::uint32_t device = 0;
  ConflictPolicy conflict_policy = ConflictPolicy::order;
  std::vector<std::string> streams;
  // The device of every declared stream: `device` for a plain name, the
  // object form's own `device` otherwise (extension: several devices).
  std::map<std::string, std::uint32_t> stream_devices;
  // Stream names declared by `borrow_stream` steps (extension: interop), in
  // the order they first appear in the file: steps name them in `stream`
  // like declared streams; each is made by the run outside the runtime and
  // borrowed when its step runs (before that, or after a drop, a step that
  // uses it fails with invalid_handle). Never in `streams`.
  std::vector<std::string> borrowed_streams;
  // Every device the scenario uses: `device`, the streams' devices and the
  // devices named by `peer_access` and `vram` steps.
  std::set<std::uint32_t> devices;
  std::uint64_t repeat = 1;
  std::vector<Step> steps;
  std::map<std::string, std::vector<Step>> threads;
  Expectations expect;
  SimSettings sim;
};

}  // namespace tandem::scenario
