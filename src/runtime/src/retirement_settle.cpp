// SPDX-License-Identifier: Apache-2.0
// Retirement (retirement.hpp): settling work a sweep proved complete or
// quarantined: its leases out of their trackers, the counts they held
// dropped, its records unlinked from the stream.
#include "context_state.hpp"
#include "retire_profile.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/base/mutant.hpp"
#include "tandem/detail/trace.hpp"

namespace tandem::detail {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

namespace {

// Its leases stay in their trackers for good, and outlive its stream,
// which is destroyed once its queue has settled. Whoever reads a tracked
// lease's owner->stream (a drop choosing where to release, a conflict
// waiting on a covered owner) holds that lease's tracker lock: the stream
// is cleared under all of them, so a reader sees it alive or none.
void quarantine(Submission& sub) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  for (Lease& l : sub.leases) l.alloc->mark_quarantined();
  // Leases are in tracker lock order (allocation id), repeats adjacent.
  const auto repeats = [&](std::size_t i) { return i > 0 && sub.leases[i - 1].alloc == sub.leases[i].alloc; };
  for (std::size_t i = 0; i < sub.leases.size(); ++i) {
    if (!repeats(i)) sub.leases[i].alloc->tracker_lock.lock();
  }
  sub.stream = nullptr;
  for (std::size_t i = sub.leases.size(); i-- > 0;) {
    if (!repeats(i)) sub.leases[i].alloc->tracker_lock.unlock();
  }
}

// Takes a tracked lease out of its allocation's tracker and returns the
// counts it held (no longer tracked). A lease a newer one of its stream
// already displaced is not there any more and handed its counts on: 0.
std::uint32_t untrack_lease(Lease& l) noexcept {
  base::Guard g(l.alloc->tracker_lock);
  auto& held = l.alloc->leases;
  for (std::size_t i = 0; i < held.size(); ++i) {
    if (held[i] == &l) {
      held.swap_remove(i);
      return l.take_counts();
    }
  }
  return 0;
}

}  // namespace

void untrack_leases_now(Submission& sub) noexcept {
  std::vector<std::pair<AllocationState*, std::uint32_t>> drops;
  for (Lease& l : sub.leases) {
    if (!l.is_tracked()) continue;
    if (const std::uint32_t counts = untrack_lease(l)) drops.push_back({l.alloc, counts});
  }
  for (const auto& [alloc, n] : drops) alloc->drop_leases(n);  // outside every lock
}

// Takes a completed submission's leases out of their trackers, noting the
// counts they hold, to drop once per allocation after the batch.
void Retirement::untrack_leases(Submission& sub) {
  for (Lease& l : sub.leases) {
    if (!l.is_tracked()) continue;
    const std::uint32_t counts = untrack_lease(l);
    TANDEM_TRACE("untrack sub %lu alloc %lu [%lu,+%lu) counts %u", sub.id, l.alloc->id, l.offset(), l.bytes(),
                 counts);
    if (counts) count_drop(l.alloc, counts);
  }
}

// Drops the lease counts of a settled batch, one atomic step per distinct
// allocation.
void Retirement::drop_lease_counts() noexcept {
  // Outside every lock: the last lease may free memory or run an owner.
  for (const auto& [alloc, n] : drops_) alloc->drop_leases(n);
  drops_.clear();
}

// Merged with the same allocation's entry among the newest few only: the
// leases of one allocation settle close together (a stream's consecutive
// launches on one buffer), and a scan of the whole batch made the settle
// quadratic in its size (48 % of a host-only sustained run's CPU, the
// retirement thread falling behind as its batches grew). An allocation
// found farther back gets a second entry: two atomic steps instead of one.
void Retirement::count_drop(AllocationState* a, std::uint32_t n) {
  constexpr std::size_t kMergeWindow = 8;
  const std::size_t from = drops_.size() > kMergeWindow ? drops_.size() - kMergeWindow : 0;
  for (std::size_t i = drops_.size(); i-- > from;) {
    if (drops_[i].first == a) {
      drops_[i].second += n;
      return;
    }
  }
  drops_.emplace_back(a, n);
}

// Releases what the settled prefix held, publishes each outcome (release
// order, after the leases are gone, so a waiter that sees "retired" sees the
// memory released), then unlinks and recycles the records.
void Retirement::settle(StreamState& s, const Submission* newest) {
  const ProfileScope timed(&RetireProfile::settle);
  Submission* last = outcomes_.back().sub;
  std::uint64_t user = 0, retired = 0, quarantined_n = 0, released_leases = 0, quarantined_leases = 0;
  std::uint64_t proven = 0;
  for (const Outcome& o : outcomes_) {
    Submission& p = *o.sub;
    if (p.user_visible()) ++user;
    if (o.completed || base::mutant(base::Mutant::unknown_completion_frees)) {
      released_leases += p.leases.size();
      untrack_leases(p);
      proven = p.seq;
      if (p.user_visible()) ++retired;
    } else {
      quarantine(p);
      // Its leases stay held forever: count them with the context, which
      // outlives this stream.
      quarantined_leases += p.leases.size();
      if (p.user_visible()) ++quarantined_n;
    }
  }
  // Stream order: a completed event proves everything enqueued before it,
  // the stream's allocations and frees included.
  if (proven != 0) s.anchor->proven_seq.store(proven, std::memory_order_release);
  drop_lease_counts();
  if (s.has_release_work()) finish_releases(s, last->seq);
  // Each outcome is published to its futures (release order, after the
  // leases are gone); a record no future refers to cannot be observed any
  // more, so it keeps its `pending` state and goes straight back to the
  // pool (its events too, which the submitter moves to the free list), and
  // retiring it writes as little as possible to what the submitting thread
  // reuses.
  if (LatencyHistogram* h = s.ctx->retire_latency.get()) {
    const base::TickClock& clock = Submission::stamp_clock();
    const std::uint64_t now = clock.ticks();
    const double ns_per_tick = clock.ns_per_tick();
    for (const Outcome& o : outcomes_) {
      const std::uint64_t t = o.sub->submitted_ticks;
      if (!o.completed || t == 0 || !o.sub->user_visible()) continue;
      h->record(now > t ? static_cast<std::uint64_t>(static_cast<double>(now - t) * ns_per_tick) : 0);
    }
  }
  // Counted before any outcome is published: whoever sees a submission
  // settled (a waiter, or a poll of its status) reads stats that count it.
  // A waiter also wakes on its own timer now (help), not only once a sweep
  // has ended.
  bump(s.leases_released, released_leases + quarantined_leases);
  if (quarantined_leases) s.ctx->quarantined_leases.fetch_add(quarantined_leases, std::memory_order_relaxed);
  bump(s.retired, retired);
  bump(s.quarantined, quarantined_n);
  bump(s.user_settled, user);
  for (const Outcome& o : outcomes_) {
    if (!o.completed) s.ctx->keep_quarantined(o.sub);  // its leases and events stay, forever
  }
  reuse_.clear();
  handed_off_.clear();
  for (const Outcome& o : outcomes_) {
    Submission& p = *o.sub;
    if (!o.completed) {
      p.state.store(SubmissionState::quarantined, std::memory_order_release);
      continue;
    }
    if (p.keep_alive) p.keep_alive.reset();
    if (p.refs.load(std::memory_order_acquire) == 1) {
      reuse_.push_back(&p);
    } else {
      p.state.store(SubmissionState::retired, std::memory_order_release);
      handed_off_.push_back(&p);
    }
  }
  const std::uint64_t last_seq = last->seq;
  unlink_settled(s, newest, last);
  s.settled_seq.store(last_seq, std::memory_order_seq_cst);  // the queue is shorter from here on
}

// Unlinking (stream_state.hpp, `sentinel`). While `last` is not the
// newest submission seen at the start of the sweep, its `next` is stable
// and the queue stays non-empty, so submitters never touch `head` and
// moving it needs no lock. Emptying the queue (tail to null, racing an
// append) needs the stream's lock, and so does unlinking quarantined
// records (their `next` is cleared) and letting go of records a future
// holds (a walker holding the lock may be reading them). Without a waiter
// or a quarantine the lock is only tried, and for a waiter waited for only
// briefly (lock_for_waiter): if a submitter holds it, `last`
// stays linked as the sentinel, and the records a future holds wait in
// `unlinked_handoffs` until the lock is next had.
void Retirement::unlink_settled(StreamState& s, const Submission* newest,
                                Submission* last) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  Submission* const old_sentinel = s.sentinel.load(std::memory_order_relaxed);
  const bool old_handed_off = s.sentinel_handed_off;
  const bool takes_tail = last == newest;
  const bool last_reusable = !reuse_.empty() && reuse_.back() == last;
  const bool quarantined =
      std::any_of(outcomes_.begin(), outcomes_.end(), [](const Outcome& o) { return !o.completed; });
  bool locked = false;
  if (takes_tail || quarantined || !s.unlinked_handoffs.empty()) {
    if (quarantined) {
      const ProfileScope timed(&RetireProfile::stream_lock);
      s.mu.lock();
      locked = true;
    } else if (waiters_.load(std::memory_order_relaxed) != 0) {
      locked = lock_for_waiter(s);
    } else {
      locked = s.mu.try_lock();
    }
  }
  // The old sentinel leaves the queue with this batch: back to the pool, or
  // its future keeps it.
  if (old_sentinel) {
    if (!old_handed_off) {
      reuse_.push_back(old_sentinel);
    } else {
      handed_off_.push_back(old_sentinel);
    }
  }
  if (locked) {
    Submission* const rest = last->next;
    s.head.store(rest, std::memory_order_release);
    if (!rest) s.tail.store(nullptr, std::memory_order_release);
    s.sentinel.store(nullptr, std::memory_order_relaxed);
    for (Submission* p : handed_off_) {
      if (p->event) s.free_event(std::exchange(p->event, {}));
      if (p->birth_mark) s.free_event(std::exchange(p->birth_mark, {}));
      p->next = nullptr;
      p->stream = nullptr;
      s.unlinked_handoffs.push_back(p);
    }
    for (const Outcome& o : outcomes_) {
      if (!o.completed) o.sub->next = nullptr;
    }
    s.drop_unlinked_locked();
    s.mu.unlock();
  } else {
    Submission* keep = nullptr;
    if (takes_tail) {
      keep = last;  // settled, still linked
      s.head.store(last, std::memory_order_release);
      s.sentinel.store(last, std::memory_order_release);
      s.sentinel_handed_off = !last_reusable;
      if (last_reusable) std::erase(reuse_, last);
    } else {
      s.head.store(last->next, std::memory_order_release);
      s.sentinel.store(nullptr, std::memory_order_relaxed);
    }
    for (Submission* p : handed_off_) {
      if (p == keep) continue;  // its events and queue reference go when it is unlinked
      s.give_back_events(*p);   // stale copies stay: nothing reads a settled record's events
      s.unlinked_handoffs.push_back(p);
    }
  }
  // Back to the pool, lock-free: a submitter takes them in when its pool runs
  // dry. Unlinked: nothing reaches these through the queue any more, except
  // a walk that began before (their `next` is left as it is).
  s.give_back(reuse_.data(), reuse_.size());
}

}  // namespace tandem::detail
