// SPDX-License-Identifier: Apache-2.0
// run_cmd.hpp — `tandem run FILE...`: run scenario files, write reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem::cli {

struct RunCommand {
  std::vector<std::string> files;
  std::optional<std::string> backend;   // auto | cuda | sim (overrides the files')
  std::string out;                      // report file, or folder (several files, or an existing folder)
  std::optional<std::uint64_t> repeat;  // overrides the files' `repeat`
  bool json = false;                    // JSON on stdout even on a terminal
  bool quiet = false;                   // no summary, no progress
  std::string junit;                    // JUnit XML of the whole run (junit.hpp), when set
  bool no_timeline = false;             // no sampler thread, no `timeline` in the reports
};

// Exit code: the worst of the files' (0 pass, 1 fail, 2 invalid scenario or
// unusable --out, 3 runtime or device error, 4 backend not available).
int run_command(const RunCommand& cmd);

}  // namespace tandem::cli
