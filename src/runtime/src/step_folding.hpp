// SPDX-License-Identifier: Apache-2.0
// step_folding.hpp — a recording's repeated steps as `loop` steps
// (docs/runtime.md "Recording"): a program that runs the same calls ten
// thousand times records ten thousand identical blocks (the writer reuses
// a list's freed handle names, so iterations write the same text), and a
// file that size is over the scenario loader's limit.
#pragma once

#include <string>
#include <vector>

namespace tandem::detail {

// `steps` (each one closed JSON object) with every run of at least three
// consecutive identical blocks of up to 64 steps written as one
// {"op": "loop", "count": k, "steps": [block]}. At each position the block
// that covers the most steps wins, the shortest among equals. Running the
// result runs exactly the steps given, in order.
[[nodiscard]] std::vector<std::string> fold_repeats(const std::vector<std::string>& steps);

}  // namespace tandem::detail
