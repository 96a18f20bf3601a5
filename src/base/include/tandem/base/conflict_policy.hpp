// SPDX-License-Identifier: Apache-2.0
// tandem/base/conflict_policy.hpp — what a context does when a submission
// conflicts with work on another stream (spec runtime.md): `order` makes the
// new work wait for it on the device, `reject` throws ConflictError and
// submits nothing. Spelled "order" and "reject" in scenario files.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tandem {

enum class ConflictPolicy : std::uint8_t { order, reject };

inline constexpr ConflictPolicy kAllConflictPolicies[] = {ConflictPolicy::order, ConflictPolicy::reject};

[[nodiscard]] constexpr std::string_view conflict_policy_name(ConflictPolicy p) noexcept {
  switch (p) {
    case ConflictPolicy::order:
      return "order";
    case ConflictPolicy::reject:
      return "reject";
  }
  return "?";
}

// The inverse of conflict_policy_name; nullopt for any other text.
[[nodiscard]] constexpr std::optional<ConflictPolicy> parse_conflict_policy(std::string_view text) noexcept {
  for (ConflictPolicy p : kAllConflictPolicies) {
    if (conflict_policy_name(p) == text) return p;
  }
  return std::nullopt;
}

}  // namespace tandem
