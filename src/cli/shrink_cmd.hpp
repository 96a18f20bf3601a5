// SPDX-License-Identifier: Apache-2.0
// shrink_cmd.hpp — `tandem shrink FILE`: reduce a failing scenario to a
// minimal one that fails the same way (tandem/scenario/shrink.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tandem::cli {

struct ShrinkCommand {
  std::string file;
  std::string backend = "sim";  // sim | cuda | auto | file (the file's own)
  std::uint64_t seed = 0;
  std::string out;  // default: FILE with .json → .min.json
  std::uint64_t max_runs = 2000;
  double time_limit_s = 600;
  unsigned confirm = 1;
  std::vector<std::string> reference_env;  // NAME=VALUE: candidates must also pass with these set
  bool quiet = false;
};

// Adds the subcommand (its options fill `cmd`).
CLI::App* add_shrink(CLI::App& app, ShrinkCommand& cmd);

// Exit code: 0 the minimal file was written (also when a limit stopped the
// search early: the smallest failing file so far is written), 2 the file is
// unreadable or invalid, passes (nothing to shrink) or --out is unusable,
// 4 the backend (or a device the file needs) is not available.
int shrink_command(const ShrinkCommand& cmd);

}  // namespace tandem::cli
