// SPDX-License-Identifier: Apache-2.0
// tandem/base/mutant.hpp — planted bugs for mutation testing (issue 24).
// A test build only: with -DTANDEM_MUTANTS=ON (CMake; default OFF) each
// `if (base::mutant(Mutant::x))` branch in the runtime is live, and the one
// mutant named by the environment's TANDEM_MUTANT (read once) is on; no
// name, or an empty one, runs the correct code. An unknown name aborts with
// the list of names. scripts/mutants runs the suite once per mutant. In
// every other build mutant() is constexpr false: the branches compile away.
#pragma once

#include <cstddef>
#include <string_view>

#ifdef TANDEM_MUTANTS
#include <cstdio>
#include <cstdlib>
#endif

namespace tandem::base {

enum class Mutant : unsigned char {
  lease_counted_as_view,          // uniqueness counts in-flight leases as views
  release_unordered,              // a dropped buffer's memory freed at once, work still in flight
  forgotten_future_drops_leases,  // dropping a pending future takes its leases out of the trackers
  atomic_leased_as_read,          // an atomic view's access leased as a read
  peeled_leased_as_writer,        // a peel of a plain buffer is atomic: its reads leased as writes
  graph_refs_ignored,             // uniqueness ignores graph references
  unknown_completion_frees,       // unknown completion retires (frees) instead of quarantining
  dropped_stream_loses_leases,    // dropping a stream takes its pending work's leases out
  cross_stream_unordered,         // order policy: no wait on another stream's conflicting work
  transfer_ignores_aliases,       // to_tensor/into_buffer/reinterpret succeed with live aliases
  range_widened,                  // a launch's leases one element longer than the access
  range_narrowed,                 // a launch's leases one element shorter than the access
  slice_leases_parent_range,      // a launch on a part of an allocation leases all of it
  release_stream_skips_a_wait,    // the release stream frees without waiting for one lease stream's work
  borrowed_stream_destroyed,      // a borrowed driver stream destroyed with its last handle, as an owned one
  borrowed_context_destroyed,     // a borrowed driver context destroyed with its last user
};

inline constexpr std::string_view kMutantNames[] = {
    "lease_counted_as_view",
    "release_unordered",
    "forgotten_future_drops_leases",
    "atomic_leased_as_read",
    "peeled_leased_as_writer",
    "graph_refs_ignored",
    "unknown_completion_frees",
    "dropped_stream_loses_leases",
    "cross_stream_unordered",
    "transfer_ignores_aliases",
    "range_widened",
    "range_narrowed",
    "slice_leases_parent_range",
    "release_stream_skips_a_wait",
    "borrowed_stream_destroyed",
    "borrowed_context_destroyed",
};
inline constexpr std::size_t kMutantCount = sizeof(kMutantNames) / sizeof(kMutantNames[0]);
static_assert(kMutantCount == static_cast<std::size_t>(Mutant::borrowed_context_destroyed) + 1);

#ifdef TANDEM_MUTANTS
inline constexpr bool kMutantsOn = true;

// The index of TANDEM_MUTANT's mutant, -1 for none; read once.
inline int active_mutant() noexcept {
  static const int index = [] {
    const char* e = std::getenv("TANDEM_MUTANT");
    if (e == nullptr || *e == '\0') return -1;
    for (std::size_t i = 0; i < kMutantCount; ++i) {
      if (kMutantNames[i] == e) return static_cast<int>(i);
    }
    std::fprintf(stderr, "TANDEM_MUTANT=%s: no such mutant; the mutants are:\n", e);
    for (std::string_view n : kMutantNames)
      std::fprintf(stderr, "  %.*s\n", static_cast<int>(n.size()), n.data());
    std::abort();
  }();
  return index;
}

inline bool mutant(Mutant m) noexcept { return active_mutant() == static_cast<int>(m); }
#else
inline constexpr bool kMutantsOn = false;
constexpr bool mutant(Mutant) noexcept { return false; }
#endif

}  // namespace tandem::base
