#include "submit.hpp"

#include <algorithm>
#include <string>

#include "context_state.hpp"
#include "graph_state.hpp"
#include "ids.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "tandem/errors.hpp"

namespace tandem::detail {

namespace {

// Locks every distinct allocation of a (sorted) access list, in allocation-id
// order, so two submitters never deadlock; unlocks on scope exit. Lock order
// across the runtime: allocation trackers (by id), then the stream.
class TrackerLocks {
 public:
  TrackerLocks(const AccessRequest* a, std::uint32_t n) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!locked_.empty() && locked_[locked_.size() - 1] == a[i].alloc) continue;
      a[i].alloc->tracker_lock.lock();
      locked_.push_back(a[i].alloc);
    }
  }
  ~TrackerLocks() TANDEM_NO_THREAD_SAFETY_ANALYSIS {
    for (std::size_t i = locked_.size(); i-- > 0;) locked_[i]->tracker_lock.unlock();
  }
  TrackerLocks(const TrackerLocks&) = delete;
  TrackerLocks& operator=(const TrackerLocks&) = delete;

 private:
  SmallVector<AllocationState*, 6> locked_;
};

void sort_accesses(AccessRequest* a, std::uint32_t n) noexcept {
  // Insertion sort: launches touch a handful of views.
  for (std::uint32_t i = 1; i < n; ++i) {
    AccessRequest x = a[i];
    std::uint32_t j = i;
    for (; j > 0 && (a[j - 1].alloc->id > x.alloc->id ||
                     (a[j - 1].alloc->id == x.alloc->id && a[j - 1].offset > x.offset));
         --j) {
      a[j] = a[j - 1];
    }
    a[j] = x;
  }
}

bool overlaps(const AccessRequest& r, const Lease& l) noexcept {
  return r.offset < l.offset + l.bytes && l.offset < r.offset + r.bytes;
}

// What this submission must wait for (order policy): per other stream, only
// the newest conflicting submission — stream order makes its completion
// prove every older one's. So the waits are one per stream, not one per
// conflicting lease.
using WaitList = SmallVector<const Submission*, 4>;

void add_wait(WaitList& waits, const Submission* owner) {
  if (!owner->event) return;  // its completion is unknown; nothing to wait on
  for (const Submission*& w : waits) {
    if (w->stream_id == owner->stream_id) {
      if (owner->seq > w->seq) w = owner;
      return;
    }
  }
  waits.push_back(owner);
}

// Under the tracker locks: throws ConflictError (reject) or collects waits.
void resolve_conflicts(const StreamState& s, const AccessRequest* a, std::uint32_t n,
                       WaitList& waits) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  const bool reject = s.ctx->policy == ConflictPolicy::reject;
  for (std::uint32_t i = 0; i < n; ++i) {
    const AccessRequest& r = a[i];
    for (const Lease* l : r.alloc->leases) {
      if (l->owner->stream_id == s.id) continue;  // the stream orders them
      if (!overlaps(r, *l)) continue;
      if (!driver::writes(r.mode) && !driver::writes(l->mode)) continue;
      if (reject && !l->internal && !r.internal) {
        throw ConflictError(r.alloc->id,
                            LeaseInfo{l->offset, l->bytes, l->mode, l->owner->stream_id, l->owner->id},
                            LeaseInfo{r.offset, r.bytes, r.mode, s.id, 0});
      }
      add_wait(waits, l->owner);
    }
  }
}

// Counts the leases in their allocations; undoes all on overflow.
void add_lease_counts(Submission& sub) {
  std::size_t done = 0;
  try {
    for (; done < sub.leases.size(); ++done) sub.leases[done].alloc->add_leases(1);
  } catch (...) {
    while (done-- > 0) sub.leases[done].alloc->drop_leases(1);
    throw;
  }
}

// Does `newer` (same stream, later) make `older` redundant in a tracker?
// Stream order completes `older` before `newer`, so if `newer` covers its
// bytes with at least its mode (write covers read), every conflict `older`
// would raise, `newer` raises too, and waiting for `newer` waits for both.
// An ordering-only (birth) lease is covered by any lease; it covers only
// other births.
bool covers(const Lease& newer, const Lease& older) noexcept {
  const auto n = static_cast<unsigned>(newer.mode), o = static_cast<unsigned>(older.mode);
  return newer.offset <= older.offset && older.offset + older.bytes <= newer.offset + newer.bytes &&
         (n & o) == o && (older.internal || !newer.internal);
}

// The caller holds every involved tracker lock (TrackerLocks), which the
// analysis cannot follow through the lock set. A hot buffer used by many
// in-flight launches on one stream keeps one tracker entry, not one per
// launch: the covered entry is replaced (its lease still counts, and is
// simply not found in the tracker when it retires).
void publish_leases(Submission& sub) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  for (Lease& l : sub.leases) {
    auto& held = l.alloc->leases;
    bool replaced = false;
    for (Lease*& h : held) {
      if (h->owner->stream_id == sub.stream_id && covers(l, *h)) {
        h = &l;
        replaced = true;
        break;
      }
    }
    if (!replaced) held.push_back(&l);
  }
}

// While the stream captures: the work is recorded into the graph by the
// driver, and its accesses become graph references; nothing runs, so no
// lease, event or queue entry is made.
Submission* capture_locked(StreamState& s, SubmitSpec& spec) TANDEM_REQUIRES(s.mu) {
  if (spec.kind == SubmissionKind::birth || spec.kind == SubmissionKind::graph_replay) {
    throw Error(ErrorCode::unsupported, std::string(spec.what) + " on stream " + std::to_string(s.id) +
                                            " while it captures a graph");
  }
  const driver::Result r = spec.enqueue(s.handle);
  if (!r.ok()) s.ctx->fail(r, ErrorCode::driver, std::string("capturing ") + spec.what);
  s.capture->record(spec.accesses, spec.access_count, std::move(spec.keep_alive));
  return nullptr;
}

Submission* submit_locked(StreamState& s, SubmitSpec& spec) {
  {
    // Capture is per stream and thread (as in CUDA): recorded work is not
    // checked for conflicts now; each replay is.
    Guard g(s.mu);
    if (s.capture) return capture_locked(s, spec);
  }
  ContextState& ctx = *s.ctx;
  driver::Backend& b = ctx.backend();
  AccessRequest* a = spec.accesses;
  const std::uint32_t n = spec.access_count;
  sort_accesses(a, n);

  TrackerLocks tracker_locks(a, n);
  WaitList waits;
  resolve_conflicts(s, a, n, waits);

  Guard g(s.mu);
  if (s.capture) {
    throw Error(ErrorCode::unsupported, std::string(spec.what) + " on stream " + std::to_string(s.id) +
                                            " raced with a graph capture beginning on it");
  }
  for (const Submission* w : waits) {
    ctx.check(b.stream_wait_event(ctx.handle, s.handle, w->event),
              std::string("ordering ") + spec.what + " on stream " + std::to_string(s.id) +
                  " after a conflicting submission");
  }
  Submission* sub = s.take_submission();
  driver::EventHandle event;
  try {
    event = s.take_event();
    for (std::uint32_t i = 0; i < n; ++i) {
      sub->leases.push_back(Lease{a[i].alloc, a[i].offset, a[i].bytes, a[i].mode, a[i].internal, sub});
    }
    add_lease_counts(*sub);
  } catch (...) {
    if (event) s.free_events.push_back(event);
    s.recycle(sub);
    throw;
  }

  const driver::Result r = spec.enqueue(s.handle);
  if (!r.ok()) {
    // The caller still holds a view of each allocation: no count reaches 0.
    for (Lease& l : sub->leases) l.alloc->drop_leases(1);
    if (event) s.free_events.push_back(event);
    s.recycle(sub);
    ctx.fail(r, r.status == driver::Status::out_of_memory ? ErrorCode::out_of_memory : ErrorCode::driver,
             std::string(spec.what) + " on stream " + std::to_string(s.id));
  }
  if (!b.event_record(ctx.handle, event, s.handle).ok()) {
    // The work is on the device but its completion cannot be proven: the
    // submission is queued without an event and retirement quarantines it.
    s.free_events.push_back(event);
    event = {};
  }

  sub->kind = spec.kind;
  sub->id = next_id(IdKind::submission);
  sub->seq = s.next_seq++;
  sub->stream = &s;
  sub->stream_id = s.id;
  sub->event = event;
  sub->keep_alive = std::move(spec.keep_alive);
  publish_leases(*sub);
  if (spec.want_future) sub->add_ref();  // before it is visible to retirement

  if (s.tail) {
    s.tail->next = sub;
  } else {
    s.head = sub;
  }
  s.tail = sub;
  s.leases_held.fetch_add(n, std::memory_order_relaxed);
  if (sub->user_visible()) s.user_submitted.fetch_add(1, std::memory_order_relaxed);
  s.submitted_seq.store(sub->seq, std::memory_order_release);
  s.pending.fetch_add(1, std::memory_order_seq_cst);
  return spec.want_future ? sub : nullptr;
}

}  // namespace

Submission* submit(StreamState& s, SubmitSpec& spec) {
  Submission* sub = submit_locked(s, spec);
  Retirement::instance().notify_submit();  // after every lock is released
  return sub;
}

}  // namespace tandem::detail
