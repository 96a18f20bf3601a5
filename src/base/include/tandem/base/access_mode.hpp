// SPDX-License-Identifier: Apache-2.0
// tandem/base/access_mode.hpp — how an operation touches a byte range.
//
// One enum for every layer: the driver's declared accesses, the runtime's
// leases and launch accesses, the catalog's parameter specs. The values are
// bits (read = 1, write = 2) so that writes() and reads() are one test;
// `atomic` reads and writes through device atomics and carries both bits
// plus its own, so it is a write wherever only reads/writes matter (spec
// runtime.md §3: an atomic access is tracked as a write).
#pragma once

#include <cstdint>
#include <string_view>

namespace tandem {

enum class AccessMode : std::uint8_t { read = 1, write = 2, read_write = 3, atomic = 7 };

[[nodiscard]] constexpr bool reads(AccessMode m) noexcept { return (static_cast<unsigned>(m) & 1U) != 0; }
[[nodiscard]] constexpr bool writes(AccessMode m) noexcept { return (static_cast<unsigned>(m) & 2U) != 0; }

// The mode a lease (and the driver's declared access) carries: atomic
// accesses are leased as plain writes, so the driver never sees `atomic`.
[[nodiscard]] constexpr AccessMode lease_mode_of(AccessMode m) noexcept {
  return m == AccessMode::atomic ? AccessMode::write : m;
}

// Spelling in messages and reports: "read", "write", "read-write", "atomic".
[[nodiscard]] constexpr std::string_view access_mode_name(AccessMode m) noexcept {
  switch (m) {
    case AccessMode::read:
      return "read";
    case AccessMode::write:
      return "write";
    case AccessMode::read_write:
      return "read-write";
    case AccessMode::atomic:
      return "atomic";
  }
  return "?";
}

}  // namespace tandem
