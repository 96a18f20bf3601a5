// SPDX-License-Identifier: Apache-2.0
#include "stream_state.hpp"

#include <algorithm>
#include <limits>

#include "context_state.hpp"
#include "graph_state.hpp"
#include "ids.hpp"
#include "record_hook.hpp"
#include "retire_profile.hpp"
#include "retirement.hpp"
#include "tandem/base/mutant.hpp"
#include "tandem/detail/trace.hpp"
#include "tuning.hpp"

namespace tandem::detail {

namespace {

// Room for `more` elements, growing geometrically: a reserve of exactly
// size() + more on every call reallocates and copies the whole list each
// time (drain_releases once per allocation: the drops' frees not proven
// yet, hundreds under load, copied per allocation).
template <class V>
void reserve_more(V& v, std::size_t more) {
  const std::size_t need = v.size() + more;
  if (need > v.capacity()) v.reserve(std::max(need, 2 * v.capacity()));
}

}  // namespace

// TANDEM_SHARE_RUN (tuning): how many submissions share one event; 1 records
// one per submission, as share_completion_events = false does.
const std::uint32_t StreamState::kShareRun =
    static_cast<std::uint32_t>(std::clamp<std::int64_t>(tuning_value("TANDEM_SHARE_RUN", 0, 32), 1, 1024));
// TANDEM_DRY_SHARE_RUN (tuning; 0, the default: no limit): the longest run
// of covered submissions while the stream has no free event. A cap makes
// the submission past it create an event, which waits for the driver's
// lock while other threads launch: with 8 threads on the H100 one such
// creation took 21.7 ms (results/h100/reuse-a3a7957). Without one, the run
// ends when retirement hands an event back, so its length follows
// retirement's lag; the cost is attribution (an unknown completion
// quarantines the whole run). 64 (eight runs) was the rule before.
const std::uint32_t StreamState::kLongestShareRun = [] {
  const std::int64_t cap = tuning_value("TANDEM_DRY_SHARE_RUN", 0, 0);
  return cap <= 0 ? std::numeric_limits<std::uint32_t>::max()
                  : static_cast<std::uint32_t>(std::clamp<std::int64_t>(cap, kShareRun, 1 << 30));
}();
const std::uint32_t RecordStack::kMaxCapacity = [] {
  const auto want =
      std::clamp<std::int64_t>(tuning_value("TANDEM_RECORD_POOL_MAX", 0, 16384), kInitialCapacity, 1 << 20);
  std::uint32_t cap = kInitialCapacity;
  while (cap < want) cap *= 2;
  return cap;
}();
const std::uint32_t StreamState::kMaxFreeEvents = static_cast<std::uint32_t>(
    std::clamp<std::int64_t>(tuning_value("TANDEM_MAX_FREE_EVENTS", 0, 0), 0, 1 << 20));

StreamAnchor::StreamAnchor(ContextState* context) noexcept : ctx(context) {
  if (ctx) ctx->add_ref();
}

void StreamAnchor::destroy() noexcept {
  ContextState* const c = ctx;
  delete this;
  if (c) c->release();
}

StreamState::StreamState(std::uint64_t id_, ContextState& ctx_, driver::StreamHandle handle_, bool owned_,
                         bool internal_)
    : id(id_),
      ctx(&ctx_),
      handle(handle_),
      owned(owned_),
      internal(internal_),
      anchor(new StreamAnchor(internal_ ? nullptr : &ctx_)),
      retirement(&Retirement::instance()) {
  if (internal) {
    ctx_.add_release_stream_ref();  // ContextState::release says why it weighs more
  } else {
    ctx_.add_ref();
  }
  // The bound on the device's queue (queue_bound.hpp): none on the release
  // stream, which only frees; the first look after the cap's worth.
  [this, cap = internal ? 0 : ctx_.max_queued]() TANDEM_NO_THREAD_SAFETY_ANALYSIS {  // not shared yet
    set_queue_cap_locked(cap);
  }();
  base::Guard g(anchor->mu);
  anchor->stream = this;
}

// TANDEM_STREAM_EVENTS (tuning): completion events a new stream makes up
// front (64). Making one later, while other threads launch, waits for the
// driver's lock (stream_state.hpp, take_event): on the H200 the 8-thread
// churn made ~1,000 of them during its run, each up to 9 ms, the first
// ones before retirement had handed any back.
const std::uint32_t StreamState::kPrewarmEvents = static_cast<std::uint32_t>(
    std::clamp<std::int64_t>(tuning_value("TANDEM_STREAM_EVENTS", 0, 64), 0, 4096));

StreamState* StreamState::create(ContextState& ctx, driver::StreamHandle handle, bool owned, bool internal) {
  auto* s = new StreamState(next_id(IdKind::stream), ctx, handle, owned, internal);
  {
    base::Guard g(s->mu);
    const std::uint32_t want = internal ? kInternalPrewarmEvents : kPrewarmEvents;
    const std::uint32_t n = kMaxFreeEvents != 0 ? std::min(want, kMaxFreeEvents) : want;
    for (std::uint32_t i = 0; i < n; ++i) {
      driver::EventHandle e;
      if (!ctx.backend().event_create(ctx.handle, e).ok()) break;  // made when needed instead
      try {
        s->free_events.push_back(e);
      } catch (...) {
        (void)ctx.backend().event_destroy(ctx.handle, e);
        break;
      }
    }
  }
  ctx.add_stream(s);
  s->add_ref();  // the caller's; the first one belongs to retirement
  s->retirement->add_stream(s);
  return s;
}

void StreamState::release() noexcept {
  if (base::mutant(base::Mutant::dropped_stream_loses_leases) && refs.load() == 2) untrack_pending_leases();
  const std::uint64_t stream_id = id;  // read first: the last release may free *this
  const std::uint32_t before = refs.fetch_sub(1, std::memory_order_acq_rel);
  if (before == 2) {  // only retirement's is left: the user's last handle is gone
    Retirement::instance().notify_released();
    if (Recorder* r = active_recorder()) [[unlikely]]
      r->on_stream_dropped(stream_id);
  }
}

// Mutants only: the user's last handle is going; its pending work's leases
// are taken out now (references held, so no record is recycled meanwhile).
void StreamState::untrack_pending_leases() noexcept {
  std::vector<Submission*> pending_subs;
  {
    base::Guard g(mu);
    for (Submission* p = head.load(std::memory_order_acquire); p; p = p->next) {
      if (p->state.load(std::memory_order_acquire) == SubmissionState::pending) {
        p->add_ref();
        pending_subs.push_back(p);
      }
      if (p == tail.load(std::memory_order_acquire)) break;
    }
  }
  for (Submission* p : pending_subs) {
    untrack_leases_now(*p);
    p->release();
  }
}

bool StreamState::detach() noexcept {
  base::Guard ga(anchor->mu);
  base::Guard g(mu);
  // Another thread may have queued a marker through the anchor meanwhile.
  if (pending() != 0) return false;
  // Frees of memory its last work used go on before it goes (a marker
  // proves them below).
  if (inbox_ready.load(std::memory_order_acquire) && !Retirement::process_is_exiting())
    drain_releases(next_seq);
  if (has_uncovered_work() && !capture && !Retirement::process_is_exiting()) {
    // Allocations or frees since the newest submission: once this stream is
    // gone nothing could be ordered after them any more, and Context::trim
    // could not wait for the frees. A marker proves them done first.
    bool queued = false;
    try {
      (void)queue_marker(queued);
    } catch (...) {
      // No event to be had: the device is failing; nothing more can be proven.
    }
    if (queued) return false;
  }
  drop_unlinked_locked();
  anchor->stream = nullptr;
  return true;
}

void StreamState::give_back_events(const Submission& r) noexcept {
  if (!r.event && !r.birth_mark) return;
  {
    base::Guard g(returned_mu);
    try {
      if (r.birth_mark) returned_events.push_back(r.birth_mark);
      if (r.event) returned_events.push_back(r.event);
      has_returned.store(true, std::memory_order_release);
      return;
    } catch (...) {
      // No room: into the free list under the stream's lock instead.
    }
  }
  base::Guard g(mu);
  if (r.birth_mark) free_event(r.birth_mark);
  if (r.event) free_event(r.event);
}

void StreamState::drop_unlinked_locked() noexcept {
  Submission* const s = sentinel.load(std::memory_order_relaxed);
  if (s && tail.load(std::memory_order_relaxed) == s) {
    head.store(nullptr, std::memory_order_release);
    tail.store(nullptr, std::memory_order_release);
    sentinel.store(nullptr, std::memory_order_relaxed);
    if (sentinel_handed_off) {
      if (s->event) free_event(std::exchange(s->event, {}));
      if (s->birth_mark) free_event(std::exchange(s->birth_mark, {}));
      s->next = nullptr;
      s->stream = nullptr;
      unlinked_handoffs.push_back(s);  // released just below
    } else if (Submission* surplus = reuse_settled(s)) {
      delete surplus;
    }
  }
  for (Submission* p : unlinked_handoffs) p->release();  // the queue's reference
  unlinked_handoffs.clear();
}

void StreamState::destroy() noexcept {
  ContextState& c = *ctx;
  driver::Backend& b = c.backend();
  std::vector<driver::EventHandle> idle, surplus;
  {
    base::Guard g(mu);
    shed_idle(idle, surplus);
  }
  for (driver::EventHandle e : idle) (void)b.event_destroy(c.handle, e);
  for (driver::EventHandle e : surplus) (void)b.event_destroy(c.handle, e);
  // Out of the context's list first: Context::trim takes references on the
  // anchors of the streams it finds there.
  c.remove_stream(this);
  anchor->release();
  // cuStreamDestroy does not wait for the device; nothing is pending anyway.
  if (owned || base::mutant(base::Mutant::borrowed_stream_destroyed))
    (void)b.stream_destroy(c.handle, handle);
  const bool was_internal = internal;
  delete this;
  if (was_internal) {
    c.release_release_stream_ref();
  } else {
    c.release();
  }
}

bool StreamState::has_free_event() {
  if (free_events.empty() && has_returned.load(std::memory_order_relaxed)) take_back_returned();
  return !free_events.empty();
}

void StreamState::free_event(driver::EventHandle e) {
  if (kMaxFreeEvents != 0 && free_events.size() >= kMaxFreeEvents) {
    surplus_events.push_back(e);
    has_surplus.store(true, std::memory_order_relaxed);
    return;
  }
  free_events.push_back(e);
}

void StreamState::destroy_surplus_events() noexcept {
  std::vector<driver::EventHandle> doomed;
  {
    // The anchor lock first: a first use on another stream holds it from
    // finding a birth mark (on a pending record) until its wait on that
    // event is enqueued (submit.cpp, order_after_birth). An event that
    // reached the surplus meanwhile is taken only after that wait.
    base::Guard ga(anchor->mu);
    base::Guard g(mu);
    doomed.swap(surplus_events);
    has_surplus.store(false, std::memory_order_relaxed);
  }
  for (driver::EventHandle e : doomed) (void)ctx->backend().event_destroy(ctx->handle, e);
}

void StreamState::shed_idle(std::vector<driver::EventHandle>& idle,
                            std::vector<driver::EventHandle>& surplus) noexcept {
  take_back_returned();
  while (!free_records.empty()) delete free_records.pop();
  idle.swap(free_events);
  surplus.swap(surplus_events);
  has_surplus.store(false, std::memory_order_relaxed);
}

driver::EventHandle StreamState::take_event() {
  if (has_free_event()) {
    driver::EventHandle e = free_events.back();
    free_events.pop_back();
    return e;
  }
  driver::EventHandle e;
  const ProfileScope timed(&RetireProfile::event_create);
  ctx->check(ctx->backend().event_create(ctx->handle, e),
             "creating a completion event for stream " + std::to_string(id));
  return e;
}

void StreamState::give_back(Submission* const* records, std::size_t n) noexcept {
  if (n == 0) return;
  {
    base::Guard g(returned_mu);
    bool room = true;
    try {
      reserve_more(returned_records, n);
      reserve_more(returned_events, 2 * n);  // a birth mark and an event each at most
    } catch (...) {
      room = false;
    }
    if (room) {  // nothing below allocates
      returned_records.insert(returned_records.end(), records, records + n);
      // The records keep stale copies; take_submission clears them.
      for (std::size_t i = 0; i < n; ++i) {
        if (records[i]->birth_mark) returned_events.push_back(records[i]->birth_mark);
        if (records[i]->event) returned_events.push_back(records[i]->event);
      }
      has_returned.store(true, std::memory_order_release);
      return;
    }
  }
  // No memory to grow the lists: back into the pool under the stream's lock,
  // as a submitter would.
  base::Guard g(mu);
  for (std::size_t i = 0; i < n; ++i) {
    if (Submission* surplus = reuse_settled(records[i])) delete surplus;
  }
}

void StreamState::take_back_returned() noexcept {
  {
    base::Guard g(returned_mu);
    taken_records.swap(returned_records);
    taken_events.swap(returned_events);
    has_returned.store(false, std::memory_order_relaxed);
  }
  for (const driver::EventHandle e : taken_events) free_event(e);
  taken_events.clear();
  // In the order they settled: the newest on top, reused first.
  for (Submission* r : taken_records) {
    if (!free_records.push(r)) delete r;
  }
  taken_records.clear();
}

bool StreamState::push_release(AllocationState* a) noexcept {
  base::Guard g(release_mu);
  try {
    release_inbox.push_back(a);
  } catch (...) {
    return false;
  }
  releases_pushed.fetch_add(1, std::memory_order_acq_rel);
  inbox_ready.store(true, std::memory_order_release);
  return true;
}

void StreamState::drain_releases(std::uint64_t seq_after, BlockWanted* wanted) noexcept {
  if (capture) return;
  {
    base::Guard g(release_mu);
    release_draining.swap(release_inbox);
    inbox_ready.store(false, std::memory_order_relaxed);
    try {
      reserve_more(unproven, release_draining.size());
      reserve_more(failed_releases, release_draining.size());
    } catch (...) {
      // No room to note them: back into the inbox for a later drain.
      release_inbox.swap(release_draining);
      inbox_ready.store(true, std::memory_order_release);
      return;
    }
  }
  if (release_draining.empty()) return;
  driver::Backend& b = ctx->backend();
  std::uint64_t enqueued = 0, freed = 0, settled = 0;
  bool queued_marker = false;
  for (AllocationState* a : release_draining) {
    if (!a->begin_device_release()) {
      ++settled;  // quarantined meanwhile: retained, never freed
      continue;
    }
    // The allocation's block, when one is wanted and this release has its
    // exact size (never on the release stream: no allocation is made there).
    // Asked once: after a refusal, above all an injected one, the rest free.
    bool ok = false;
    if (wanted != nullptr && wanted->taken == 0 && wanted->result.ok() && !internal &&
        a->bytes == wanted->bytes && a->origin == Origin::runtime) {
      wanted->result = b.mem_reuse_async(ctx->handle, ctx->pool, a->base, a->bytes, handle);
      if (wanted->result.ok()) {
        wanted->taken = a->base;
        ctx->same_stream_reuses.add(1);
        ok = true;
      }
    }
    if (!ok) {
      ok = (!internal || order_after_leases(*a, queued_marker)) &&
           b.mem_free_async(ctx->handle, a->base, handle).ok();
      if (ok) ++freed;
    }
    base::Guard g(release_mu);  // room was reserved: neither push throws
    if (ok) {
      unproven.emplace_back(seq_after, a);
      ++enqueued;
    } else {
      failed_releases.push_back(a);
      has_failed_releases.store(true, std::memory_order_release);
    }
  }
  release_draining.clear();
  if (enqueued != 0) {
    // Untracked work, like an allocation: what follows proves it done.
    untracked_seq = std::max(untracked_seq, seq_after);
    newest_unproven_seq.store(seq_after, std::memory_order_release);
  }
  if (freed != 0) freed_since_trim = true;
  if (settled != 0) releases_finished.fetch_add(settled, std::memory_order_acq_rel);
  // A marker on a lease stream, which retirement must prove. Woken under
  // this stream's lock: the retirement thread never takes a stream's lock
  // while holding its own mutex, which is all a wake takes.
  if (queued_marker) retirement->notify_submit();
}

void StreamState::take_settled_releases(std::uint64_t last_seq,
                                        std::vector<std::pair<std::uint64_t, AllocationState*>>& out) {
  base::Guard g(release_mu);
  std::size_t k = 0;
  while (k < unproven.size() && unproven[k].first <= last_seq) ++k;
  if (k == 0) return;
  out.insert(out.end(), unproven.begin(), unproven.begin() + static_cast<std::ptrdiff_t>(k));
  unproven.erase(unproven.begin(), unproven.begin() + static_cast<std::ptrdiff_t>(k));
}

void StreamState::take_failed_releases(std::vector<AllocationState*>& out) {
  if (!has_failed_releases.load(std::memory_order_acquire)) return;
  base::Guard g(release_mu);
  out.insert(out.end(), failed_releases.begin(), failed_releases.end());  // may throw: kept for later
  failed_releases.clear();
  has_failed_releases.store(false, std::memory_order_relaxed);
}

namespace {

// Asks for the lines a launch with up to three accesses writes in `r` (all
// three: the header and the inline leases), with intent to write
// (prefetchw, in asm: the builtin's form needs -mprfchw, and a call of a
// function built for it is deleted as having no effect; CPUs before it run
// the instruction as a no-op).
void prefetch_record(const Submission* r) noexcept {
  static_assert(sizeof(Submission) == std::size_t{3} * 64);
  const char* p = reinterpret_cast<const char*>(r);
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0\n\tprefetchw %1\n\tprefetchw %2" : : "m"(p[0]), "m"(p[64]), "m"(p[128]));
#else
  __builtin_prefetch(p, 1, 3);
  __builtin_prefetch(p + 64, 1, 3);
  __builtin_prefetch(p + 128, 1, 3);
#endif
}

}  // namespace

Submission* StreamState::take_submission() {
  // What retirement handed back since the last take, first: those records
  // are the ones this stream last used (RecordStack says why that matters).
  if (has_returned.load(std::memory_order_relaxed)) take_back_returned();
  if (!free_records.empty()) {
    Submission* s = free_records.pop();
    // The next launch's record is out of cache: retirement's core read it
    // last, and the driver's work since evicted it here. Fetched now, its
    // lines arrive during this launch's driver call instead of stalling the
    // next launch (on the H200 the record's lines were the costliest step
    // of a tracked launch: results/h200/launch-phases-41f78c4).
    if (!free_records.empty()) prefetch_record(free_records.top());
    s->next = nullptr;
    // Stale copies when retirement gave it back (give_back); the events
    // themselves are in `free_events`.
    s->event = {};
    s->birth_mark = {};
    // Here rather than at retirement: this thread writes them next. Back to
    // inline storage too: a record that once carried a graph replay's
    // leases (16 for 8 nodes) would otherwise keep them on the heap for
    // good, and every later launch through it would write and publish its
    // leases in a block apart from the record, one more cold line each
    // (results/h200/stream-state-7735357: the suspect for the suite
    // stream's slower launches).
    s->leases.reset();
    return s;
  }
  return new Submission();
}

void StreamState::recycle(Submission* s) noexcept {
  s->keep_alive.reset();
  // A failed submit set the future's reference before its driver call. A
  // pooled record holds the queue's reference alone, as retirement pools
  // them (a marker reuses one as it is).
  s->refs.store(1, std::memory_order_relaxed);
  s->state.store(SubmissionState::pending, std::memory_order_relaxed);
  if (Submission* surplus = reuse_settled(s)) delete surplus;
}

Submission* StreamState::reuse_settled(Submission* s) noexcept {
  // Events wait in `free_events`, not on pooled records: a shared-event
  // stream records one for about every kShareRun submissions, and events
  // left on records would sit idle on covered ones while evented ones
  // found none free and made more (cuEventCreate: stream_state.hpp).
  if (s->birth_mark) free_event(std::exchange(s->birth_mark, {}));
  if (s->event) free_event(std::exchange(s->event, {}));
  return free_records.push(s) ? nullptr : s;
}

void StreamState::set_queue_cap_locked(std::uint32_t cap) noexcept {
  queue_cap.store(cap, std::memory_order_relaxed);
  // The first look a cap's worth from now; the next evented submission a probe.
  const std::uint64_t now = submitted_seq.load(std::memory_order_relaxed);
  queue_check_seq.store(cap == 0 ? std::numeric_limits<std::uint64_t>::max() : now + cap + 1,
                        std::memory_order_relaxed);
  queue_next_probe_seq = cap == 0 ? std::numeric_limits<std::uint64_t>::max() : 0;
}

void StreamState::enqueue_locked(Submission* sub) noexcept {
  if (unmarked_allocation && sub->seq == untracked_seq) {
    // The first submission since new allocations: it carries their mark.
    unmarked_allocation = false;
    last_mark = sub;
    last_mark_seq = sub->seq;
  }
  // Link first, then publish: retirement reads `tail` without the lock and
  // walks from `head` up to it.
  if (Submission* t = tail.load(std::memory_order_relaxed)) {
    t->next = sub;
  } else {
    head.store(sub, std::memory_order_release);
  }
  tail.store(sub, std::memory_order_release);
  submitted_seq.store(sub->seq, std::memory_order_seq_cst);  // then the caller reads Retirement::sleeping_
}

driver::EventHandle StreamState::event_after(std::uint64_t seq, bool& queued_marker) {
  const Submission* t = tail.load(std::memory_order_relaxed);
  if (t && t->seq >= seq && !t->covered) return t->event;
  if (capture) return {};  // a marker would be captured, not run
  return queue_marker(queued_marker);
}

driver::EventHandle StreamState::event_proving(const Submission& sub, bool& queued_marker) {
  // Pending, so linked: the nodes after it are pending too.
  for (const Submission* p = &sub; p != nullptr; p = p->next) {
    if (!p->covered) return p->event;  // none: unknown completion, nothing can prove it
  }
  if (capture) return {};
  return queue_marker(queued_marker);
}

driver::EventHandle StreamState::birth_event(std::uint64_t birth_seq, bool& queued_marker) {
  const Submission* t = tail.load(std::memory_order_relaxed);
  if (!t || t->seq < birth_seq) {
    // Nothing submitted since the allocation: the marker goes right after it.
    if (capture) return {};
    return queue_marker(queued_marker);
  }
  Submission* p = head.load(std::memory_order_relaxed);
  if (!p || p->seq > birth_seq) return {};  // settled, though not proven: nothing to wait on
  if (last_mark_seq == birth_seq) {
    p = last_mark;  // still queued: head's seq <= birth_seq
  } else {
    while (p->seq < birth_seq) p = p->next;  // seqs are contiguous from head to tail
  }
  // A marker's own event follows the allocations directly; a submission
  // recorded a birth mark before its work (its event, if that failed).
  return p->birth_mark ? p->birth_mark : p->event;
}

driver::EventHandle StreamState::queue_marker(bool& queued_marker) {
  Submission* m = take_submission();
  if (!m->event) {
    try {
      m->event = take_event();
    } catch (...) {
      recycle(m);
      throw;
    }
  }
  driver::EventHandle e = m->event;
  if (!ctx->backend().event_record(ctx->handle, e, handle).ok()) {
    free_event(e);  // queued without an event: retirement quarantines it
    e = {};
  }
  m->kind = SubmissionKind::marker;
  m->submitted_ticks = 0;
  m->covered = false;
  shared_run = 0;
  m->id = next_id(IdKind::submission);
  m->seq = next_seq++;
  m->stream = this;
  m->stream_id = id;
  m->event = e;
  m->phase.store(SubmissionPhase::enqueued, std::memory_order_relaxed);
  enqueue_locked(m);
  TANDEM_TRACE("marker sub %lu stream %lu seq %lu event %p", m->id, id, m->seq, e.raw);
  queued_marker = true;
  return e;
}

void ref_add(StreamState* p) noexcept { p->add_ref(); }
void ref_release(StreamState* p) noexcept { p->release(); }

}  // namespace tandem::detail
