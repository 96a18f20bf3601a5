// SPDX-License-Identifier: Apache-2.0
// queue_bound.hpp — how far the device may run behind one stream
// (ContextOptions::max_queued_per_stream; docs/runtime.md, "The bound on
// the device's queue").
//
// Eight threads launching small kernels on their own streams can feed the
// device as fast as it runs them. The driver then lets each stream's queue
// fill to its own limit (about 1,024 launches) before a launch blocks, and
// every submission waits behind a full queue: on the H100 the raw driver
// alone, at tandem's rate, had submit -> complete p99 of 10-13 ms in 6 of
// 50 one-second repetitions, and tandem's retired p99 16-19 ms in as many,
// each leased buffer held that long (results/h100/k8-floor-a81a062). A
// shorter queue keeps the device as busy and holds work and memory for less.
//
// The submit path looks at the device only once the stream has `cap`
// submissions past the newest one known complete (one relaxed load and a
// compare otherwise): it queries the event of a submission about `cap`
// back (a probe). Complete: the device is not that far behind, and the
// next look is a cap's worth later. Not complete: the submission waits,
// before it takes any lock, until retirement has settled all but three
// quarters of the cap (a waiter makes retirement sweep at once).
#pragma once

#include <atomic>
#include <cstdint>

#include "stream_state.hpp"

namespace tandem::detail {

// The largest bound a context or stream takes (ContextOptions::max_queued_per_stream).
inline constexpr std::uint32_t kMaxQueuedPerStream = 1U << 20;

// Probes are at least this far apart, so the ring spans about two caps.
[[nodiscard]] constexpr std::uint64_t queue_probe_spacing(std::uint32_t cap) noexcept {
  return cap / 8 > 0 ? cap / 8 : 1;
}

// Whether the submit path should look at the device before this
// submission. Lock-free: the seq is read again under the lock if so.
[[gnu::always_inline]] inline bool queue_check_due(const StreamState& s) noexcept {
  return s.submitted_seq.load(std::memory_order_relaxed) >= s.queue_check_seq.load(std::memory_order_relaxed);
}

// After a submission recorded its own event: keeps it as a probe when the
// newest probe is far enough behind it (never while the bound is off).
[[gnu::always_inline]] inline void note_queue_probe(StreamState& s, std::uint32_t cap, std::uint64_t seq,
                                                    driver::EventHandle event) TANDEM_REQUIRES(s.mu) {
  if (seq < s.queue_next_probe_seq) return;
  s.queue_next_probe_seq = seq + queue_probe_spacing(cap);
  s.queue_probes[s.queue_probe_next] = {seq, event};
  s.queue_probe_next = (s.queue_probe_next + 1) % StreamState::kQueueProbes;
}

// queue_check_due was true: looks at the device and, if it runs more than
// `cap` submissions behind `s`, waits (holding no lock) until retirement
// has settled all but 3/4 of the cap. Blocks only for the device.
void bound_queue(StreamState& s, std::uint32_t cap);

}  // namespace tandem::detail
