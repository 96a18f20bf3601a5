// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/validation_report.hpp — what `tandem validate` prints.
#pragma once

#include <string>
#include <vector>

#include "tandem/scenario/diagnostic.hpp"

namespace tandem::scenario {

struct ValidationReport {
  bool ok = false;  // outcome invalid when false
  std::vector<Diagnostic> errors;
  [[nodiscard]] std::string message() const;  // one line per error
};

[[nodiscard]] ValidationReport validate_file(const std::string& path);
[[nodiscard]] ValidationReport validate_text(const std::string& text, const std::string& file_label);

}  // namespace tandem::scenario
