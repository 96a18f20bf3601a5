// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/outcome.hpp — how a scenario run (or a validation) ended.
// The scenario layer says what happened; only the command maps it to an
// exit code (src/cli/exit_codes.hpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace tandem::scenario {

enum class Outcome : std::uint8_t {
  pass,         // every check held, no step error
  fail,         // a check failed or a step raised an error it did not expect
  invalid,      // the file is not a valid scenario (nothing ran)
  error,        // the runtime or the device failed (a `driver` error, or setup)
  unavailable,  // the requested backend or a device it needs is not there
};

[[nodiscard]] constexpr std::string_view outcome_name(Outcome o) noexcept {
  switch (o) {
    case Outcome::pass:
      return "pass";
    case Outcome::fail:
      return "fail";
    case Outcome::invalid:
      return "invalid";
    case Outcome::error:
      return "error";
    case Outcome::unavailable:
      return "unavailable";
  }
  return "error";
}

// The worse of two outcomes (several files: the command's result).
[[nodiscard]] constexpr Outcome worse(Outcome a, Outcome b) noexcept {
  auto rank = [](Outcome o) {
    switch (o) {
      case Outcome::pass:
        return 0;
      case Outcome::fail:
        return 1;
      case Outcome::invalid:
        return 2;
      case Outcome::error:
        return 3;
      case Outcome::unavailable:
        return 4;
    }
    return 3;
  };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace tandem::scenario
