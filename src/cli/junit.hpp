// SPDX-License-Identifier: Apache-2.0
// junit.hpp — `tandem run --junit FILE`: the run's results as JUnit XML, the
// test report format CI systems show (GitLab, Jenkins, GitHub actions that
// read it). One <testsuite> per scenario file, one <testcase> per
// repetition; a failed test case carries its failed checks and step errors
// with their JSON paths.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tandem/scenario/outcome.hpp"

namespace tandem::cli {

// One scenario file of the run: its report, or why it did not run.
struct JUnitEntry {
  std::string file;
  scenario::Outcome outcome = scenario::Outcome::pass;
  std::optional<nlohmann::ordered_json> report;  // absent when the file could not be read or is invalid
  std::vector<std::string> problems;             // why it did not run (each with its JSON path)
};

// The whole run as one JUnit XML document (UTF-8).
[[nodiscard]] std::string junit_xml(const std::vector<JUnitEntry>& entries);

}  // namespace tandem::cli
