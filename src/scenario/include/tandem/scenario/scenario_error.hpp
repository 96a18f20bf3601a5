// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/scenario_error.hpp — thrown by load()/load_text() for an
// invalid scenario; carries every problem found (up to kMaxDiagnostics).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "tandem/scenario/diagnostic.hpp"

namespace tandem::scenario {

inline constexpr std::size_t kMaxDiagnostics = 50;

class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(std::vector<Diagnostic> diags)
      : std::runtime_error(join(diags)), diagnostics_(std::move(diags)) {}
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const noexcept { return diagnostics_; }

 private:
  static std::string join(const std::vector<Diagnostic>& d) {
    std::string s;
    for (const auto& x : d) {
      if (!s.empty()) s += '\n';
      s += x.to_string();
    }
    return s;
  }
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace tandem::scenario
