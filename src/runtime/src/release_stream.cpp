// SPDX-License-Identifier: Apache-2.0
// release_stream.cpp — the context's release stream orders each free after
// the work that leases the memory on the context's other streams
// (stream_state.hpp, "The context's release stream"; multi_stream_release.hpp).
#include <exception>

#include "allocation_state.hpp"
#include "context_state.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/base/mutant.hpp"
#include "tandem/detail/small_vector.hpp"
#include "tandem/detail/trace.hpp"

namespace tandem::detail {

namespace {

// Per lease stream, its newest leased submission: stream order makes the
// event that proves it prove every older one there. False when one of them
// is quarantined (the allocation is then never freed) or no memory could be
// had for the list.
bool newest_per_stream(const AllocationState& a, SmallVector<const Submission*, 4>& out) noexcept
    TANDEM_REQUIRES(a.tracker_lock) {
  try {
    for (const Lease* l : a.leases) {
      const Submission* o = l->owner;
      // Cleared under every tracker lock of its leases (retirement.cpp,
      // quarantine), this one included.
      if (o->stream == nullptr) return false;
      bool seen = false;
      for (const Submission*& w : out) {
        if (w->stream_id != o->stream_id) continue;
        if (o->seq > w->seq) w = o;
        seen = true;
        break;
      }
      if (!seen) out.push_back(o);
    }
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace

bool StreamState::order_after_leases(AllocationState& a, bool& queued_marker) noexcept {
  // The tracker lock keeps every owner found here pending: retirement takes
  // a lease out of its tracker, under this lock, before it settles the owner
  // and hands the owner's events (and those after it) back for reuse. So no
  // event below is re-recorded or destroyed before the wait on it is
  // enqueued. No lease can be added meanwhile: no view is left.
  base::Guard g(a.tracker_lock);
  SmallVector<const Submission*, 4> newest;
  if (!newest_per_stream(a, newest)) return false;
  std::size_t n = newest.size();
  // Planted bug (mutants): the work of the last lease stream looked at is
  // not waited for, so the free can run while it still reads the memory.
  if (base::mutant(base::Mutant::release_stream_skips_a_wait) && n > 1) --n;
  driver::Backend& b = ctx->backend();
  for (std::size_t i = 0; i < n; ++i) {
    const Submission& w = *newest[i];
    StreamState& os = *w.stream;  // pending, so its stream exists
    driver::EventHandle e;
    try {
      base::Guard gs(os.mu);
      // Its own event, or the next one its stream records (a marker queued
      // now if none follows it: never a wait on that stream). None while
      // the stream captures and a marker would be needed, or when the
      // owner's completion is unknown (its event record failed).
      e = os.event_proving(w, queued_marker);
    } catch (const std::exception&) {
      return false;  // no event to be had for a marker
    }
    TANDEM_TRACE("release stream %lu waits for alloc %lu's lease on stream %lu seq %lu: event %p", id, a.id,
                 w.stream_id, w.seq, e.raw);
    // A wait already enqueued stays: it delays this stream's later frees at
    // most, never a user's stream.
    if (!e || !b.stream_wait_event(ctx->handle, handle, e).ok()) return false;
  }
  return true;
}

}  // namespace tandem::detail
