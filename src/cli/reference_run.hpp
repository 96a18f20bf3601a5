// SPDX-License-Identifier: Apache-2.0
// reference_run.hpp — `tandem shrink --reference-env`: a candidate is also
// run by this same binary in a child process whose environment differs
// (e.g. TANDEM_MUTANT= for the build without its planted bug), and must
// pass there, so a shrunk file fails for the reason the original did and
// not because a reduction broke its own expectations.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tandem::cli {

class ReferenceRun {
 public:
  // `env`: NAME=VALUE pairs set in the child (an empty VALUE is set empty).
  ReferenceRun(std::vector<std::pair<std::string, std::string>> env, std::string backend);
  ~ReferenceRun();
  ReferenceRun(const ReferenceRun&) = delete;
  ReferenceRun& operator=(const ReferenceRun&) = delete;

  // Does `tandem run --backend B --quiet` of the scenario text exit 0 under
  // the reference environment? False also when the child cannot start.
  bool passes(const std::string& text);

 private:
  std::vector<std::pair<std::string, std::string>> env_;
  std::string backend_;
  std::string dir_;  // a private temporary directory for the candidate and its report
};

// Splits "NAME=VALUE" (VALUE may be empty); false when there is no '=' or no NAME.
bool parse_env_assignment(const std::string& s, std::pair<std::string, std::string>& out);

}  // namespace tandem::cli
