// SPDX-License-Identifier: Apache-2.0
// tandem/testing/retirement_pause.hpp — for tests only: holds the runtime's
// retirement thread between sweeps, as a busy host that keeps it off the CPU
// would, so that a test can check what goes on without it (a waiter sweeps
// in its place: docs/runtime.md, "Retirement on a busy host").
#pragma once

namespace tandem::testing {

// While one lives, the retirement thread begins no sweep. The constructor
// returns once no sweep of the thread's is under way; the destructor lets
// it go on (it does not wait). Not nestable: at most one at a time.
class RetirementPause {
 public:
  RetirementPause();
  ~RetirementPause();
  RetirementPause(const RetirementPause&) = delete;
  RetirementPause& operator=(const RetirementPause&) = delete;
};

}  // namespace tandem::testing
