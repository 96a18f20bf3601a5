// SPDX-License-Identifier: Apache-2.0
#include "submit.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "context_state.hpp"
#include "graph_state.hpp"
#include "ids.hpp"
#include "queue_bound.hpp"
#include "retire_profile.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "tandem/base/mutant.hpp"
#include "tandem/detail/launch_phases.hpp"
#include "tandem/detail/trace.hpp"
#include "tandem/errors.hpp"

namespace tandem::detail {

namespace {

// Locks every distinct allocation of a (sorted) access list, in allocation-id
// order, so two submitters never deadlock; unlocks on scope exit or
// unlock(). Lock order across the runtime: stream anchors, then a context's
// release stream (its drain: stream_state.hpp), then allocation trackers (by
// id), then the other streams. Walks the caller's list again to unlock
// (it must not change meanwhile) rather than keep a copy: the launch path
// pays for every cache line it touches.
class TrackerLocks {
 public:
  TrackerLocks(const AccessRequest* a, std::uint32_t n) TANDEM_NO_THREAD_SAFETY_ANALYSIS : a_(a), n_(n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!repeats(i)) a[i].alloc->tracker_lock.lock();
    }
  }
  ~TrackerLocks() { unlock(); }
  void unlock() noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
    for (std::uint32_t i = n_; i-- > 0;) {
      if (!repeats(i)) a_[i].alloc->tracker_lock.unlock();
    }
    n_ = 0;
  }
  TrackerLocks(const TrackerLocks&) = delete;
  TrackerLocks& operator=(const TrackerLocks&) = delete;

 private:
  // The list is sorted: an allocation's accesses are adjacent.
  bool repeats(std::uint32_t i) const noexcept { return i > 0 && a_[i - 1].alloc == a_[i].alloc; }

  const AccessRequest* const a_;
  std::uint32_t n_;
};

// A stream lock the submit path gives up before the end of its scope.
class TANDEM_SCOPED_CAPABILITY StreamLock {
 public:
  explicit StreamLock(base::SpinLock& mu) TANDEM_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~StreamLock() TANDEM_RELEASE() {
    if (held_) mu_.unlock();
  }
  void unlock() TANDEM_RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  StreamLock(const StreamLock&) = delete;
  StreamLock& operator=(const StreamLock&) = delete;

 private:
  base::SpinLock& mu_;
  bool held_ = true;
};

bool overlaps(const AccessRequest& r, const Lease& l) noexcept {
  return r.offset < l.end() && l.offset() < r.offset + r.bytes;
}

// --- stream-ordered births ------------------------------------------------------

[[gnu::cold, gnu::noinline]] void order_after_birth(StreamState& s, AllocationState& a, const char* what) {
  StreamAnchor& birth = *a.birth;
  bool queued = false;
  const NotifyRetirementIfQueued notify{queued};  // declared first: runs after the locks are released
  base::Guard ga(birth.mu);
  StreamState* const bs = birth.stream;
  // Gone: it was destroyed only after its allocations were proven done (or
  // could not be: the device failed, and there is nothing to wait on).
  if (!bs) return;
  driver::EventHandle e;
  {
    base::Guard gb(bs->mu);
    e = bs->birth_event(a.birth_seq, queued);
  }
  if (!e) return;
  // The anchor lock keeps the event alive (events die with their stream);
  // a recycled one is re-recorded on the birth stream only, later still.
  base::Guard g(s.mu);
  if (s.capture) {
    throw Error(ErrorCode::unsupported, std::string(what) + " on stream " + std::to_string(s.id) +
                                            " raced with a graph capture beginning on it");
  }
  s.ctx->check(s.ctx->backend().stream_wait_event(s.ctx->handle, s.handle, e),
               std::string("ordering ") + what + " on stream " + std::to_string(s.id) + " after allocation " +
                   std::to_string(a.id) + " on stream " + std::to_string(bs->id));
  a.birth_waited_by.store(s.id, std::memory_order_release);
  TANDEM_TRACE("birth-wait stream %lu waits for alloc %lu born on stream %lu seq %lu: event %p%s", s.id, a.id,
               bs->id, a.birth_seq, e.raw, queued ? " (marker queued)" : "");
}

// An allocation is enqueued on its birth stream without an event. Its first
// use on another stream waits for the birth stream to reach it; once an
// event enqueued after it completed, nothing needs to wait any more.
void order_after_births(StreamState& s, const AccessRequest* a, std::uint32_t n, const char* what) {
  for (std::uint32_t i = 0; i < n; ++i) {
    AllocationState& alloc = *a[i].alloc;
    if (i > 0 && a[i - 1].alloc == &alloc) continue;
    const StreamAnchor* birth = alloc.birth;
    if (!birth || birth == s.anchor) continue;
    if (birth->proven_seq.load(std::memory_order_acquire) >= alloc.birth_seq) continue;
    if (alloc.birth_waited_by.load(std::memory_order_acquire) == s.id) continue;
    order_after_birth(s, alloc, what);
  }
}

// --- conflicts --------------------------------------------------------------------

// A lease is published before its submission's work is enqueued; its
// event is recorded after. Spins out that window (a driver launch at most).
// False when the driver refused the work: the lease orders nothing.
bool wait_until_enqueued(const Submission& owner) noexcept {
  SubmissionPhase p;
  for (unsigned spins = 0; (p = owner.phase.load(std::memory_order_acquire)) == SubmissionPhase::publishing;
       ++spins) {
    if (spins < 64) {
      TANDEM_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
  return p == SubmissionPhase::enqueued;
}

bool enqueued(const Submission& owner) noexcept {
  return owner.phase.load(std::memory_order_acquire) == SubmissionPhase::enqueued;
}

// What this submission must wait for (order policy): per other stream, only
// the newest conflicting submission — stream order makes its completion
// prove every older one's. So the waits are one per stream, not one per
// conflicting lease.
using WaitList = SmallVector<const Submission*, 4>;

void add_wait(WaitList& waits, const Submission* owner) {
  if (!owner->covered && !owner->event) return;  // its completion is unknown; nothing to wait on
  for (const Submission*& w : waits) {
    if (w->stream_id == owner->stream_id) {
      if (owner->seq > w->seq) w = owner;
      return;
    }
  }
  waits.push_back(owner);
}

// Under the tracker locks (which keep every owner found here from retiring
// and being recycled): throws ConflictError (reject) or collects waits.
void resolve_conflicts(const StreamState& s, const AccessRequest* a, std::uint32_t n,
                       WaitList& waits) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  const bool reject = s.ctx->policy == ConflictPolicy::reject;
  for (std::uint32_t i = 0; i < n; ++i) {
    const AccessRequest& r = a[i];
    for (const Lease* l : r.alloc->leases) {
      if (l->owner->stream_id == s.id) continue;  // the stream orders them
      if (!overlaps(r, *l)) continue;
      if (!driver::writes(r.mode) && !driver::writes(l->mode())) continue;
      if (!wait_until_enqueued(*l->owner)) continue;
      if (reject) {
        throw ConflictError(r.alloc->id,
                            LeaseInfo{l->offset(), l->bytes(), l->mode(), l->owner->stream_id, l->owner->id},
                            LeaseInfo{r.offset, r.bytes, r.mode, s.id, 0});
      }
      TANDEM_TRACE(
          "conflict stream %lu alloc %lu [%lu,+%lu) mode %u vs sub %lu (stream %lu seq %lu) [%lu,+%lu) mode "
          "%u event %p",
          s.id, r.alloc->id, r.offset, r.bytes, static_cast<unsigned>(r.mode), l->owner->id,
          l->owner->stream_id, l->owner->seq, l->offset(), l->bytes(), static_cast<unsigned>(l->mode()),
          l->owner->event.raw);
      if (base::mutant(base::Mutant::cross_stream_unordered)) continue;
      add_wait(waits, l->owner);
    }
  }
}

// --- leases -------------------------------------------------------------------------

// Does `newer` (same stream, later) make `older` redundant in a tracker?
// Stream order completes `older` before `newer`, so if `newer` covers its
// bytes with at least its mode (write covers read), every conflict `older`
// would raise, `newer` raises too, and waiting for `newer` waits for both.
bool covers(const Lease& newer, const Lease& older) noexcept {
  return newer.mode_covers(older) && newer.offset() <= older.offset() && older.end() <= newer.end();
}

// A hot buffer used by many in-flight launches on one stream keeps two
// tracker entries, not one per launch: entries of `stream` covered by its
// newest enqueued one are dropped (retirement then skips their leases), and
// their counts are returned, for the lease being published, up to the
// Lease::kMaxCounts it can hold (past that an entry stays: a stream with
// 65,535 launches in flight on one buffer keeps one more entry). Only
// enqueued entries cover or are dropped: one still being published may yet
// fail.
std::uint32_t compact(SmallVector<Lease*, 2>& held, std::uint64_t stream) noexcept {
  Lease** const h = held.data();
  const Lease* newest = nullptr;
  std::uint64_t newest_seq = 0;  // seqs start at 1
  for (std::size_t i = 0, n = held.size(); i < n; ++i) {
    const Submission& o = *h[i]->owner;
    if (o.stream_id == stream && o.seq > newest_seq && enqueued(o)) {
      newest = h[i];
      newest_seq = o.seq;
    }
  }
  if (!newest) return 0;
  std::uint32_t handed_on = 0;
  // Backwards: swap_remove(i) moves in the last entry, already looked at.
  for (std::size_t i = held.size(); i-- > 0;) {
    Lease* const e = h[i];
    const Submission& o = *e->owner;
    if (o.stream_id != stream || o.seq >= newest_seq || !enqueued(o) || !covers(*newest, *e)) {
      continue;
    }
    const std::uint32_t taken = e->take_counts(Lease::kMaxCounts - handed_on);  // no longer tracked
    if (taken == 0) [[unlikely]]
      continue;  // no room for them: it stays, with its counts
    held.swap_remove(i);
    TANDEM_TRACE(
        "compact alloc %lu: lease of sub %lu (seq %lu) covered by sub %lu (seq %lu), %u counts handed on",
        e->alloc->id, o.id, o.seq, newest->owner->id, newest_seq, taken);
    handed_on += taken;
  }
  return handed_on;
}

// Takes a submission's leases back out of the trackers (it failed); drops
// the counts they hold. The caller still holds a view or graph reference of
// each allocation, so no count reaches zero here; a count one inherited
// from a displaced lease is covered by that lease's newer neighbour.
void withdraw_leases_locked(Submission& sub) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  for (Lease& l : sub.leases) {
    if (!l.is_tracked()) continue;
    auto& held = l.alloc->leases;
    for (std::size_t i = 0; i < held.size(); ++i) {
      if (held[i] == &l) {
        held.swap_remove(i);
        break;
      }
    }
    l.alloc->drop_leases(l.take_counts());  // no longer tracked
  }
}

// Makes the submission's leases, one per access (room for them was
// reserved), and publishes each in its allocation's tracker. The caller
// holds every involved tracker lock (TrackerLocks), which the analysis
// cannot follow through the lock set. Each lease takes a count of its
// allocation, or inherits the counts of the entries it displaces. On a
// throw (no memory for a tracker entry, a counter at its limit) nothing
// stays published and no count is held.
void publish_leases(Submission& sub, const AccessRequest* a,
                    std::uint32_t n) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  try {
    for (std::uint32_t i = 0; i < n; ++i) {
      auto& held = a[i].alloc->leases;
      held.reserve_one();  // first: nothing below throws once entries moved their counts
      std::uint32_t counts = compact(held, sub.stream_id);
      if (counts == 0) {  // nothing displaced, so nothing to undo if this throws
        a[i].alloc->add_leases(1);
        counts = 1;
      }
      // Tracked from here (it holds counts): nothing below throws.
      Lease& l = sub.leases.emplace_reserved();
      l = Lease(a[i].alloc, &sub, a[i].offset, a[i].bytes, a[i].mode, counts);
      held.push_back(&l);
    }
  } catch (...) {
    withdraw_leases_locked(sub);
    throw;
  }
}

// While the stream captures: the work is recorded into the graph by the
// driver, and its accesses become graph references; nothing runs, so no
// lease, event or queue entry is made.
Submission* capture_locked(StreamState& s, SubmitSpec& spec) TANDEM_REQUIRES(s.mu) {
  if (spec.kind == SubmissionKind::graph_replay) {
    throw Error(ErrorCode::unsupported,
                std::string(spec.what) + " on stream " + std::to_string(s.id) + " while it captures a graph");
  }
  const driver::Result r = spec.enqueue(s.handle);
  if (!r.ok()) s.ctx->fail(r, ErrorCode::driver, std::string("capturing ") + spec.what);
  s.capture->record(spec.accesses, spec.access_count, std::move(spec.keep_alive));
  return nullptr;
}

// Under the tracker locks, which keep each owner pending: the event each
// wait uses. A covered owner is proven by the next event of its stream (a
// marker queued now if none follows it yet). Retirement settles a stream's
// queue in order, and cannot settle an owner while its lease is in a
// tracker held here, so the event found is not recycled before the wait is
// enqueued. Lock order: trackers, then the owner's stream.
using WaitEvents = SmallVector<driver::EventHandle, 4>;

void resolve_wait_events(const WaitList& waits, WaitEvents& out) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  for (const Submission* w : waits) {
    driver::EventHandle e = w->event;
    if (w->covered) {
      // Quarantined (retirement cleared its stream): nothing can prove it.
      if (w->stream == nullptr) continue;
      bool queued = false;  // submit() wakes retirement on the way out
      StreamState& os = *w->stream;
      base::Guard g(os.mu);
      e = os.event_proving(*w, queued);
    }
    if (e) out.push_back(e);
  }
}

// Whether the submission carrying the birth mark (the first after new
// allocations on its stream) writes the one new allocation whole. Then it
// records no birth mark and may share its completion event: another
// stream's use of that allocation overlaps this write, so it waits for
// (order: conflicts wait for a covered submission's next event) or is
// refused by (reject) this submission anyway, which follows the allocation;
// once that is proven, nothing waits (StreamState::birth_event finds no
// event to wait on). Two event records fewer for the loop users write
// first (allocate, fill or zero it, use, drop).
bool writes_the_new_allocation(const StreamState& s, const AccessRequest* a, std::uint32_t n) noexcept
    TANDEM_REQUIRES(s.mu) {
  if (s.unmarked_count != 1) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (a[i].alloc->base == s.unmarked_base && a[i].offset == 0 && a[i].bytes == s.unmarked_bytes &&
        driver::writes(a[i].mode)) {
      return true;
    }
  }
  return false;
}

// --- submit: the cold parts, out of line ----------------------------------------

// Capture is per stream and thread (as in CUDA): recorded work is not
// checked for conflicts now; each replay is. True when the stream captures
// and the work was recorded into its graph.
[[gnu::cold, gnu::noinline]] bool captured(StreamState& s, SubmitSpec& spec) {
  base::Guard g(s.mu);
  if (!s.capture) return false;
  capture_locked(s, spec);
  return true;
}

[[noreturn, gnu::cold, gnu::noinline]] void capture_raced(const StreamState& s, const char* what) {
  throw Error(ErrorCode::unsupported, std::string(what) + " on stream " + std::to_string(s.id) +
                                          " raced with a graph capture beginning on it");
}

// Before this work and its waits: another stream's first use of the new
// allocations waits for the allocations, not for this work. Out of line
// but not cold: the first launch after an allocation that does not write
// it whole marks it.
[[gnu::noinline]] void record_birth_mark(StreamState& s, const ContextState& ctx, driver::Backend& b,
                                         Submission& sub) TANDEM_REQUIRES(s.mu) {
  sub.birth_mark = s.take_event();
  if (!b.event_record(ctx.handle, sub.birth_mark, s.handle).ok()) {
    s.free_event(sub.birth_mark);  // they wait for `event` instead
    sub.birth_mark = {};
  }
}

// Orders this stream after the conflicting submissions (order policy).
[[gnu::cold, gnu::noinline]] void wait_for_conflicts(StreamState& s, const WaitEvents& events,
                                                     const char* what) TANDEM_REQUIRES(s.mu) {
  const ContextState& ctx = *s.ctx;
  for (const driver::EventHandle w : events) {
    ctx.check(ctx.backend().stream_wait_event(ctx.handle, s.handle, w),
              std::string("ordering ") + what + " on stream " + std::to_string(s.id) +
                  " after a conflicting submission");
  }
}

// The driver refused the work (the caller marked it failed and gave up the
// stream lock): takes back the submission's leases and record, and throws.
[[noreturn, gnu::cold, gnu::noinline]] void enqueue_failed(StreamState& s, Submission* sub,
                                                           const AccessRequest* a, std::uint32_t n,
                                                           const driver::Result& r, const char* what)
    TANDEM_EXCLUDES(s.mu) {
  {
    TrackerLocks relock(a, n);
    withdraw_leases_locked(*sub);
  }
  {
    base::Guard g(s.mu);
    s.recycle(sub);
  }
  s.ctx->fail(r, r.status == driver::Status::out_of_memory ? ErrorCode::out_of_memory : ErrorCode::driver,
              std::string(what) + " on stream " + std::to_string(s.id));
}

#ifdef TANDEM_RUNTIME_TRACE
void trace_submit(const StreamState& s, const Submission& sub, const WaitList& waits, const char* what) {
  TANDEM_TRACE("submit %s sub %lu stream %lu seq %lu event %p birth_mark %p waits %zu", what, sub.id, s.id,
               sub.seq, sub.event.raw, sub.birth_mark.raw, waits.size());
  for (const Submission* w : waits) {
    TANDEM_TRACE("  waits for sub %lu stream %lu seq %lu event %p", w->id, w->stream_id, w->seq,
                 w->event.raw);
  }
  for (const Lease& l : sub.leases) {
    TANDEM_TRACE("  lease alloc %lu [%lu,+%lu) mode %u counts %u", l.alloc->id, l.offset(), l.bytes(),
                 static_cast<unsigned>(l.mode()), l.counts());
  }
}
#endif

// --- submit: the fast path, inline -----------------------------------------------

// Puts the accesses in tracker lock order (allocation id).
[[gnu::always_inline]] inline void order_accesses(AccessRequest* a, std::uint32_t n, bool sorted) noexcept {
  if (sorted || n < 2) return;
  if (n == 2) {  // the usual launch: one read, one write
    if (access_before(a[1], a[0])) std::swap(a[0], a[1]);
  } else {
    sort_accesses(a, n);
  }
}

// Whether the submission shares the stream's next event (see
// ContextOptions::share_completion_events): when this stream has work
// pending that retirement will prove anyway, and the run of covered
// submissions is short, or no event is free (making one can stall this
// thread for milliseconds: stream_state.hpp). A birth mark's carrier
// records its own event: other streams wait on the two of them directly. A
// carrier that writes the new allocation whole needs neither
// (writes_the_new_allocation).
[[gnu::always_inline]] inline bool shares_event(StreamState& s, const ContextState& ctx, bool marks_birth)
    TANDEM_REQUIRES(s.mu) {
  const Submission* const queued_tail = s.tail.load(std::memory_order_relaxed);
  return ctx.share_events && !marks_birth && !s.isolate_next && queued_tail != nullptr &&
         queued_tail != s.sentinel.load(std::memory_order_relaxed) &&
         (s.shared_run + 1 < StreamState::kShareRun ||
          (s.shared_run + 1 < StreamState::kLongestShareRun && !s.has_free_event()));
}

// Before the record is stamped: its event (unless it shares the next),
// the birth mark, the waits for conflicting work and room for its leases.
// A failure hands the record back.
[[gnu::always_inline]] inline void ready_record(StreamState& s, const ContextState& ctx, driver::Backend& b,
                                                Submission& sub, SubmitSpec& spec,
                                                const WaitEvents& wait_events, bool marks_birth, bool cover,
                                                std::uint32_t n) TANDEM_REQUIRES(s.mu) {
  try {
    if (!cover) sub.event = s.take_event();
    if (marks_birth) record_birth_mark(s, ctx, b, sub);
    if (!wait_events.empty()) [[unlikely]]
      wait_for_conflicts(s, wait_events, spec.what);
    sub.leases.reserve(n);  // a graph replay's many in one allocation
    // Pooled records hold none (retirement and recycle() drop it).
    if (spec.keep_alive) [[unlikely]] {
      sub.keep_alive = std::make_unique<std::shared_ptr<void>>(std::move(spec.keep_alive));
    }
  } catch (...) {
    s.recycle(&sub);
    throw;
  }
}

// Fills the record before the driver call, whose work evicts much of what
// this path touched: what is written after it should be as few lines as
// can be. A failed enqueue recycles the record, which drops keep_alive.
[[gnu::always_inline]] inline void stamp(StreamState& s, Submission& sub, SubmitSpec& spec, bool cover,
                                         std::uint64_t submitted_ticks) TANDEM_REQUIRES(s.mu) {
  sub.kind = spec.kind;
  sub.submitted_ticks = submitted_ticks;
  sub.id = next_id(IdKind::submission);
  sub.seq = s.next_seq++;
  sub.stream = &s;
  sub.stream_id = s.id;
  sub.phase.store(SubmissionPhase::publishing, std::memory_order_relaxed);
  sub.covered = cover;
  // The queue's reference and the future's. Nobody else counts references
  // to it before it is queued (waiters on its leases read other fields).
  sub.refs.store(spec.want_future ? 2 : 1, std::memory_order_relaxed);
}

// After the driver call: the submission's completion event, its own or the
// stream's next (shared).
[[gnu::always_inline]] inline void record_completion(StreamState& s, const ContextState& ctx,
                                                     driver::Backend& b, Submission& sub, bool cover)
    TANDEM_REQUIRES(s.mu) {
  if (cover) {
    ++s.shared_run;
    bump(s.shared_events, 1);
    return;
  }
  s.shared_run = 0;
  if (!b.event_record(ctx.handle, sub.event, s.handle).ok()) [[unlikely]] {
    // The work is on the device but its completion cannot be proven: the
    // submission is queued without an event and retirement quarantines it.
    s.free_event(sub.event);
    sub.event = {};
    return;
  }
  note_queue_probe(s, s.queue_cap.load(std::memory_order_relaxed), sub.seq, sub.event);
}

// Lock scopes: the trackers are held while conflicts are resolved and the
// new leases published (marked `publishing`), not across the driver calls;
// the stream lock is held from reserving the seq to queueing the
// submission, so the queue order is the device order.
Submission* submit_locked(StreamState& s, SubmitSpec& spec) {
  if (s.capturing.load(std::memory_order_acquire)) [[unlikely]] {
    if (captured(s, spec)) return nullptr;
  }
  TANDEM_LAUNCH_PHASE(prepare);
  ContextState& ctx = *s.ctx;
  // Before any lock is taken: it may wait for the device (queue_bound.hpp).
  if (queue_check_due(s)) [[unlikely]]
    bound_queue(s, s.queue_cap.load(std::memory_order_relaxed));
  driver::Backend& b = ctx.backend();
  const std::uint64_t submitted_ticks = ctx.retire_latency ? Submission::stamp_clock().ticks() : 0;
  AccessRequest* a = spec.accesses;
  const std::uint32_t n = spec.access_count;
  order_accesses(a, n, spec.sorted);
  order_after_births(s, a, n, spec.what);

  TrackerLocks trackers(a, n);
  WaitList waits;
  resolve_conflicts(s, a, n, waits);
  WaitEvents wait_events;
  resolve_wait_events(waits, wait_events);
  TANDEM_LAUNCH_PHASE(check);

  StreamLock stream_lock(s.mu);
  if (s.capture) [[unlikely]]
    capture_raced(s, spec.what);
  Submission* sub = s.take_submission();
  TANDEM_LAUNCH_PHASE(record);
  const bool marks_birth = s.unmarked_allocation && !writes_the_new_allocation(s, a, n);
  const bool cover = shares_event(s, ctx, marks_birth);
  ready_record(s, ctx, b, *sub, spec, wait_events, marks_birth, cover, n);
  stamp(s, *sub, spec, cover, submitted_ticks);
  TANDEM_LAUNCH_PHASE(events);
  try {
    publish_leases(*sub, a, n);
  } catch (...) {
    --s.next_seq;
    s.recycle(sub);
    throw;
  }
  trackers.unlock();
  TANDEM_LAUNCH_PHASE(publish);
  // Frees of memory dropped behind this stream's work go first: this
  // submission's event then proves them executed (stream_state.hpp).
  if (s.inbox_ready.load(std::memory_order_relaxed)) [[unlikely]] {
    const ProfileScope timed(&RetireProfile::submitter_drain);
    s.drain_releases(sub->seq);
  }

  const driver::Result r = spec.enqueue(s.handle);
  if (!r.ok()) [[unlikely]] {
    // Whoever spins on this submission's phase (holding trackers) moves on
    // first; nothing else took a seq while the stream was locked.
    sub->phase.store(SubmissionPhase::failed, std::memory_order_release);
    --s.next_seq;
    stream_lock.unlock();
    enqueue_failed(s, sub, a, n, r, spec.what);
  }
  TANDEM_LAUNCH_PHASE(driver_launch);
  record_completion(s, ctx, b, *sub, cover);
  TANDEM_LAUNCH_PHASE(driver_record);
  sub->phase.store(SubmissionPhase::enqueued, std::memory_order_release);
  s.isolate_next = false;  // this one had its own event
  s.enqueue_locked(sub);
#ifdef TANDEM_RUNTIME_TRACE
  trace_submit(s, *sub, waits, spec.what);
#endif
  bump(s.leases_taken, n);
  if (sub->user_visible()) bump(s.user_submitted, 1);
  TANDEM_LAUNCH_PHASE(queue);
  return spec.want_future ? sub : nullptr;
}

}  // namespace

void sort_accesses(AccessRequest* a, std::uint32_t n) noexcept {
  if (n > 16) {  // a graph's many, once at the end of its capture
    std::sort(a, a + n, access_before);
    return;
  }
  // Insertion sort: launches touch a handful of views.
  for (std::uint32_t i = 1; i < n; ++i) {
    AccessRequest x = a[i];
    std::uint32_t j = i;
    for (; j > 0 && access_before(x, a[j - 1]); --j) a[j] = a[j - 1];
    a[j] = x;
  }
}

Submission* submit(StreamState& s, SubmitSpec& spec) {
  const bool always = true;
  const NotifyRetirementIfQueued notify{always, s.retirement};  // after every lock is released, thrown or not
  return submit_locked(s, spec);
}

}  // namespace tandem::detail
