// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/diagnostic.hpp — one problem found in a scenario file.
#pragma once

#include <string>

namespace tandem::scenario {

// `file: path: message`, where message says what was expected and what was
// found. `path` is a JSON path such as `steps[4].args.x` ("" = the document).
struct Diagnostic {
  std::string file;
  std::string path;
  std::string message;

  [[nodiscard]] std::string to_string() const {
    return file + ": " + (path.empty() ? std::string("<document>") : path) + ": " + message;
  }
};

}  // namespace tandem::scenario
