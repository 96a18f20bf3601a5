// SPDX-License-Identifier: Apache-2.0
// tandem/stats.hpp — counters a report reads (spec/scenario-format.md §3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tandem {

struct RuntimeStats {
  std::uint64_t live_allocations = 0;  // holding device memory, not freed, not quarantined
  std::uint64_t live_bytes = 0;
  std::uint64_t quarantined_allocations = 0;  // retained forever: completion unknown
  std::uint64_t quarantined_bytes = 0;
  std::uint64_t quarantined_submissions = 0;
  std::uint64_t foreign_owners_unreleased = 0;
  std::uint64_t allocations_total = 0;    // ever made (empty views excluded)
  std::uint64_t frees_total = 0;          // driver frees performed + foreign owners released
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
  // Submissions that waited for the device to work through its queue on
  // their stream (ContextOptions::max_queued_per_stream).
  std::uint64_t queue_waits = 0;
  // Release (spec/runtime.md §6). An allocation whose last view is dropped
  // while work still uses it is *awaiting release* until its free is
  // enqueued on the device; then *released, unproven* until the free is
  // proven executed (it still counts in live_allocations/live_bytes until
  // then, and is freed after). The device may reuse released memory in
  // stream order at once, so what keeps memory from the device is
  // live_bytes - released_unproven_bytes, `held_bytes` (kept as a count of
  // its own, so it reads as one value even while both move): `held_bytes_peak`
  // is the highest that figure reached (Context::reset_held_bytes_peak starts
  // it again).
  std::uint64_t awaiting_release_allocations = 0;
  std::uint64_t awaiting_release_bytes = 0;
  std::uint64_t released_unproven_allocations = 0;
  std::uint64_t released_unproven_bytes = 0;
  std::uint64_t held_bytes = 0;
  std::uint64_t held_bytes_peak = 0;
  // Frees enqueued in stream order before their work was proven done, and
  // frees made only after host proof (foreign memory aside).
  std::uint64_t stream_ordered_releases = 0;
  std::uint64_t host_proven_releases = 0;
  // Allocations that took the block of a same-size release on their stream
  // instead of the pool's (docs/runtime.md, "Same-stream reuse"); each such
  // release still counts among stream_ordered_releases once proven.
  std::uint64_t same_stream_reuses = 0;
  // Allocations that failed with out-of-memory at first and were retried
  // (ContextOptions::out_of_memory_wait), and of those, the ones that then
  // succeeded.
  std::uint64_t pressure_retries = 0;
  std::uint64_t pressure_recoveries = 0;
};

struct MemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

}  // namespace tandem
