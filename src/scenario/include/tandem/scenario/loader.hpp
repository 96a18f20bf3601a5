// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/loader.hpp — parse and validate a scenario file.
//
// The whole document is validated before anything runs; every problem found
// (up to kMaxDiagnostics) is reported with the file, the JSON path, what was
// expected and what was found. Never crashes on any input.
#pragma once

#include <string>
#include <string_view>

#include "tandem/scenario/scenario.hpp"
#include "tandem/scenario/scenario_error.hpp"

namespace tandem::scenario {

inline constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;  // 16 MiB
inline constexpr int kMaxJsonDepth = 64;
inline constexpr int kMaxStepNesting = 16;  // capture/loop

// Throw ScenarioError when invalid (or unreadable).
[[nodiscard]] Scenario load(const std::string& path);
[[nodiscard]] Scenario load_text(std::string_view text, const std::string& file_label);

}  // namespace tandem::scenario
