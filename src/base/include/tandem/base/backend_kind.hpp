// SPDX-License-Identifier: Apache-2.0
// tandem/base/backend_kind.hpp — which driver backend a platform runs on.
//
// One spelling for the runtime (Platform::open), the driver backends'
// name(), scenario files and the command line: "auto", "cuda", "sim".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tandem {

enum class BackendKind : std::uint8_t { automatic, cuda, sim };

inline constexpr BackendKind kAllBackendKinds[] = {BackendKind::automatic, BackendKind::cuda,
                                                   BackendKind::sim};

[[nodiscard]] constexpr std::string_view backend_kind_name(BackendKind k) noexcept {
  switch (k) {
    case BackendKind::automatic:
      return "auto";
    case BackendKind::cuda:
      return "cuda";
    case BackendKind::sim:
      return "sim";
  }
  return "?";
}

// The inverse of backend_kind_name; nullopt for any other text (exact,
// case-sensitive: "auto", "cuda", "sim").
[[nodiscard]] constexpr std::optional<BackendKind> parse_backend_kind(std::string_view text) noexcept {
  for (BackendKind k : kAllBackendKinds) {
    if (backend_kind_name(k) == text) return k;
  }
  return std::nullopt;
}

}  // namespace tandem
