// SPDX-License-Identifier: Apache-2.0
// exit_codes.hpp — the command's exit codes, the only place they are defined.
#pragma once

#include "tandem/scenario/outcome.hpp"

namespace tandem::cli {

inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;  // bad command line, invalid scenario, unusable --out
inline constexpr int kExitRuntime = 3;
inline constexpr int kExitNoBackend = 4;

[[nodiscard]] constexpr int exit_code(scenario::Outcome o) noexcept {
  switch (o) {
    case scenario::Outcome::pass:
      return kExitPass;
    case scenario::Outcome::fail:
      return kExitFail;
    case scenario::Outcome::invalid:
      return kExitUsage;
    case scenario::Outcome::error:
      return kExitRuntime;
    case scenario::Outcome::unavailable:
      return kExitNoBackend;
  }
  return kExitRuntime;
}

}  // namespace tandem::cli
