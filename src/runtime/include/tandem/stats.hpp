// tandem/stats.hpp — counters a report reads (spec/scenario-format.md §3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tandem {

struct RuntimeStats {
  std::uint64_t live_allocations = 0;   // holding device memory, not freed, not quarantined
  std::uint64_t live_bytes = 0;
  std::uint64_t quarantined_allocations = 0;  // retained forever: completion unknown
  std::uint64_t quarantined_bytes = 0;
  std::uint64_t quarantined_submissions = 0;
  std::uint64_t foreign_owners_unreleased = 0;
  std::uint64_t allocations_total = 0;  // ever made (empty views excluded)
  std::uint64_t frees_total = 0;        // driver frees performed + foreign owners released
  std::uint64_t pending_submissions = 0;  // submitted, not yet retired or quarantined
  std::uint64_t active_leases = 0;
  std::uint64_t retired_submissions = 0;
  std::uint64_t submissions_total = 0;
  std::uint64_t uniqueness_checks = 0;
  std::uint64_t streams = 0;  // live stream records (dropped ones linger until retired)
  // ContextOptions::share_completion_events: submissions that recorded no
  // event of their own (a later event proves them), and the markers the
  // retirement thread queued after a stream's covered newest work went quiet.
  std::uint64_t shared_event_submissions = 0;
  std::uint64_t quiet_tail_markers = 0;
};

struct MemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

}  // namespace tandem
