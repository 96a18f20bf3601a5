// SPDX-License-Identifier: Apache-2.0
#include "retirement.hpp"

#if defined(__linux__)
#include <pthread.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <string>

#include "context_state.hpp"
#include "retire_profile.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/detail/trace.hpp"
#include "tuning.hpp"

namespace tandem::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Between sweeps: kLatencyGap while someone waits or no new work arrived
// since the previous sweeps; while work keeps arriving (new work found by
// consecutive sweeps: a submitting thread is busy) the gap doubles up to
// kThroughputGap, and a deep queue
// (> kShallowQueue) gets kThroughputGap at once. Each sweep's event queries
// compete with the submitters' launches inside the driver (a query every
// 2 µs slows a raw launch loop by a fifth on the H200), and each retirement
// pulls cache lines the submitters use next: on the H200 a 1 ms throughput
// gap (napped) took a tracked launch from 1.15-1.18x raw to 1.11x, and 1-8
// threads from 0.84-0.92x to 0.88-0.98x, against 64 µs
// (results/h200/retire-gap-4b3aef6); memory and leases of streaming work
// are then released up to a millisecond later. After kSpinWhilePending
// without progress, sleep from kMinSleep doubling up to kMaxSleep.
// TANDEM_RETIRE_GAP_US="latency,throughput[,longest_spin[,cover_quiet[,release_quiet]]]"
// overrides the two gaps, the longest gap spun out, kCoverQuiet and kReleaseQuiet (tuning;
// empty parts keep defaults).
std::chrono::microseconds gap_from_env(int which, std::chrono::microseconds fallback) {
  return std::chrono::microseconds(tuning_value("TANDEM_RETIRE_GAP_US", which, fallback.count()));
}
const auto kLatencyGap = gap_from_env(0, std::chrono::microseconds(2));
const auto kThroughputGap = gap_from_env(1, std::chrono::microseconds(1000));
// Gaps up to this are spun out: a timed sleep in a virtual machine may
// oversleep by far more than the gap, and queues then grow deep enough to
// need fresh records and events.
const auto kLongestSpin = gap_from_env(2, std::chrono::microseconds(100));
// A stream whose newest submissions share an event not recorded yet
// (covered) gets a marker from this thread once it has queued nothing new
// for this long, or at once for a waiter. Not sooner: a submitter that is
// still streaming records the next event itself, and a marker recorded
// from here holds the stream's lock across a driver call it would compete
// with.
const auto kCoverQuiet = gap_from_env(3, std::chrono::microseconds(50));
// Frees dropped behind a stream's running work are queued from here once it
// has queued nothing new for this long (a submitter that is still streaming
// drains them itself at its next call, before this could). Far shorter than
// kCoverQuiet: a free queued while the kernel still runs executes right
// behind it, so its memory is proven free with the kernel's own completion
// instead of one device round trip later (the lone launch -> drop -> freed
// round trip took 24 µs on the H200 with kCoverQuiet, 2.3x raw).
const auto kReleaseQuiet = gap_from_env(4, std::chrono::microseconds(2));
// Whether a free dropped behind a stream whose newest work has an event of
// its own is queued from here at the first sweep that sees it, without the
// kReleaseQuiet wait, while submissions are not streaming in (streaming()). Such
// a stream's submitter has no call due at once to carry the free, and each
// sweep of waiting put the free one device round trip behind its kernel:
// launch -> drop -> freed took 22-24 µs on the H200 against 13-15 µs to
// retire the launch; at once, 14-16 µs (results/h200/release-at-once-dac947a).
// Under streaming load the submitters drain their frees themselves, and
// this thread's drains would only hold their stream locks across two
// driver calls and add markers: there the quiet rule stays.
// TANDEM_RELEASE_AT_ONCE=0 keeps the wait always (to measure one against
// the other).
const bool kReleaseAtOnce = tuning_value("TANDEM_RELEASE_AT_ONCE", 0, 1) != 0;
// How long a sweep waits for a busy stream's lock on a waiter's behalf
// (to unlink a queue it empties, or to cover or drain a quiet stream), in
// µs; negative: without bound. A submitter holds its stream's lock across
// its driver calls, and a busy host may take it off the CPU there: on an
// H100 with every core busy, sweeps waited up to 83 ms for one such lock
// while the other streams' completed work waited behind it (retired p99
// 40-174 ms, results/h100/s47-0b5511d). Given up, the stream is left as
// it would be without a waiter (its last settled record stays linked, no
// marker yet) and its turn comes again at the next sweep, 2 µs later while
// someone waits. TANDEM_RETIRE_LOCK_WAIT_US (tuning).
const auto kWaiterLockWait = std::chrono::microseconds(tuning_value("TANDEM_RETIRE_LOCK_WAIT_US", 0, 50));
constexpr std::uint32_t kShallowQueue = 4;
constexpr auto kSpinWhilePending = std::chrono::microseconds(200);
constexpr auto kMinSleep = std::chrono::microseconds(20);
constexpr auto kMaxSleep = std::chrono::microseconds(1000);
// With nothing pending: stay awake this long (a submit usually follows a
// retirement closely, and the submit that wakes a sleeping thread pays a
// futex wake and the wake-up's latency), then sleep.
constexpr auto kIdleSpin = std::chrono::microseconds(200);

// Read without the stream's lock, as sweep_stream reads its queue: only
// this thread unlinks and recycles records, and a record's `covered` is
// written before it is published as the tail.
bool tail_covered(const StreamState& s) noexcept {
  const Submission* t = s.tail.load(std::memory_order_acquire);
  return t != nullptr && t->covered;
}

driver::Result query(const StreamState& s, const Submission& sub) noexcept {
  if (!sub.evented()) return {driver::Status::completion_unknown, 0, "no completion event"};
  const ProfileScope timed(&RetireProfile::query);
  return s.ctx->backend().event_query(s.ctx->handle, sub.event);
}

}  // namespace

Retirement& Retirement::instance() {
  // Never destroyed: submissions may still retire while static destructors
  // run, and the thread must not touch a destroyed object.
  static Retirement* r = new Retirement();
  return *r;
}

std::atomic<bool> Retirement::exiting_{false};
thread_local bool Retirement::helping_here_ = false;

Retirement::Retirement() {
  thread_ = std::thread([this] {
#if defined(__linux__)
    // Named for top, gdb and perf (and the benchmarks' lane diagnostics).
    pthread_setname_np(pthread_self(), "tandem-retire");
#endif
    run();
    exited_.store(true, std::memory_order_release);
  });
  thread_id_ = thread_.get_id();
  thread_.detach();
  std::atexit(&Retirement::at_exit);
}

// Stops the thread between sweeps (so it is never inside a driver call while
// the driver tears down), waiting a bounded time for it to notice.
void Retirement::at_exit() noexcept {
  exiting_.store(true, std::memory_order_release);
  retire_profile().print();
  Retirement& r = instance();
  r.wake();
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  while (!r.exited_.load(std::memory_order_acquire) && Clock::now() < give_up) std::this_thread::yield();
}

void Retirement::add_stream(StreamState* s) {
  {
    base::Guard g(mu_);
    streams_.push_back(s);
    ++generation_;
  }
  // The stream may be used at once; a sleeping thread picks it up on the
  // first submit, which wakes it.
}

void Retirement::wake() noexcept {
  {
    base::Guard g(mu_);
    wake_ = true;
  }
  cv_.notify_one();
}

void Retirement::notify_waiters() {
  { base::Guard g(settled_mu_); }
  settled_cv_.notify_all();
}

void Retirement::snapshot(std::vector<StreamState*>& out) {
  base::Guard g(mu_);
  if (generation_ == seen_generation_ && !out.empty()) return;
  out = streams_;
  seen_generation_ = generation_;
}

bool Retirement::anything_pending(const std::vector<StreamState*>& streams) const {
  return std::any_of(streams.begin(), streams.end(), [](const StreamState* s) { return s->pending() != 0; });
}

void Retirement::run() {
  std::vector<StreamState*> streams;
  unsigned idle_rounds = 0;
  auto last_progress = Clock::now();
  auto gap = kLatencyGap;
  std::uint64_t pending_since_ns = 0;  // the profile's: the previous sweep's end, while work was pending
  while (!process_is_exiting()) {
    if (pending_since_ns != 0) retire_profile().between.add(RetireProfile::now_ns() - pending_since_ns);
    const std::optional<SweepResult> swept = sweep_once(streams);
    if (!swept) {
      if (!process_is_exiting()) nap(kMaxSleep);  // paused (tests only)
      continue;
    }
    const auto [progress, any_pending, deepest, streaming_now] = *swept;
    pending_since_ns = RetireProfile::on && any_pending ? RetireProfile::now_ns() : 0;
    const bool waiting = waiters_.load(std::memory_order_acquire) != 0;
    if (progress) {
      last_progress = Clock::now();
      idle_rounds = 0;
    }
    if (waiting) notify_waiters();  // a wait_sweep counts sweeps, not progress
    if (waiting || !streaming_now) {
      gap = kLatencyGap;  // one new submission may well be waited for next
    } else {
      gap = std::min<std::chrono::microseconds>(std::max(gap * 2, std::chrono::microseconds(1)),
                                                kThroughputGap);
    }
    if (!waiting && deepest > kShallowQueue) gap = std::max<std::chrono::microseconds>(gap, kThroughputGap);
    if (any_pending || waiting) {
      if (!progress) ++idle_rounds;
      pace(gap, waiting, idle_rounds);
      continue;
    }
    if (Clock::now() - last_progress < kIdleSpin) {
      pause_for(gap);
      continue;
    }
    sleep_until_woken(streams);
    last_progress = Clock::now();
    gap = kLatencyGap;
  }
}

std::optional<Retirement::SweepResult> Retirement::sweep_once(std::vector<StreamState*>& streams) {
  base::Guard sweeping(sweep_mu_);
  if (paused_ || process_is_exiting())
    return std::nullopt;  // a helper may have held the lock across the exit
  snapshot(streams);      // under the sweep's lock: only a sweep of this thread's destroys a stream
  SweepResult r;
  {
    const ProfileScope timed(&RetireProfile::sweep);
    r.progress = sweep(streams, /*may_destroy=*/true, r.any_pending, r.deepest);
  }
  sweeps_.fetch_add(1, std::memory_order_acq_rel);
  std::uint64_t submitted = 0;
  for (const StreamState* s : streams) submitted += s->submitted_seq.load(std::memory_order_relaxed);
  busy_sweeps_ = submitted == seen_submitted_ ? 0 : busy_sweeps_ + 1;
  seen_submitted_ = submitted;
  r.streaming = streaming();
  return r;
}

// Between sweeps while work is pending (see the top of this file). After
// kSpinWhilePending without progress it sleeps, 20 µs doubling to 1 ms, so
// a long kernel costs no CPU.
void Retirement::pace(std::chrono::microseconds gap, bool waiting, unsigned idle_rounds) {
  const unsigned spin_rounds =
      static_cast<unsigned>(kSpinWhilePending / std::max(gap, std::chrono::microseconds(1))) + 1;
  if (waiting || idle_rounds < spin_rounds) {
    pause_for(gap);
    return;
  }
  const unsigned doublings = std::min(idle_rounds - spin_rounds, 6U);
  nap(std::min<std::chrono::microseconds>(kMinSleep * (1U << doublings), kMaxSleep));
}

void Retirement::pause_for(std::chrono::microseconds gap) {
  if (gap > kLongestSpin) {
    nap(gap);
    return;
  }
  const auto until = Clock::now() + gap;
  while (Clock::now() < until) TANDEM_CPU_RELAX();
}

// A submit does not wake this (only a deep sleep is woken); a waiter does.
void Retirement::nap(std::chrono::microseconds d) {
  const std::uint64_t t0 = RetireProfile::on ? RetireProfile::now_ns() : 0;
  std::unique_lock lk(mu_.native());
  // `lk` holds mu_ (through its std::mutex, which the analysis cannot see).
  cv_.wait_for(lk, d, [this]() TANDEM_NO_THREAD_SAFETY_ANALYSIS { return wake_; });
  [this]() TANDEM_NO_THREAD_SAFETY_ANALYSIS { wake_ = false; }();
  if (RetireProfile::on) {
    const std::uint64_t asked = static_cast<std::uint64_t>(std::chrono::nanoseconds(d).count());
    const std::uint64_t took = RetireProfile::now_ns() - t0;
    retire_profile().nap_over.add(took > asked ? took - asked : 0);
  }
}

void Retirement::sleep_until_woken(const std::vector<StreamState*>& streams) {
  std::unique_lock lk(mu_.native());
  sleeping_.store(true, std::memory_order_seq_cst);
  // Re-check after announcing sleep: a submitter either sees `sleeping_` and
  // wakes us, or its work is visible here (both sides are seq_cst).
  const bool busy = anything_pending(streams) || dirty_.load(std::memory_order_seq_cst) ||
                    waiters_.load(std::memory_order_seq_cst) != 0 ||
                    [&]() TANDEM_NO_THREAD_SAFETY_ANALYSIS { return generation_ != seen_generation_; }();
  if (!busy && !process_is_exiting()) {
    cv_.wait(lk, [this]() TANDEM_NO_THREAD_SAFETY_ANALYSIS { return wake_; });
  }
  [&]() TANDEM_NO_THREAD_SAFETY_ANALYSIS { wake_ = false; }();
  sleeping_.store(false, std::memory_order_seq_cst);
}

bool Retirement::sweep(std::vector<StreamState*>& streams, bool may_destroy, bool& any_pending,
                       std::uint32_t& deepest) {
  bool progress = false;
  // A released stream is found below like any other; the flag only woke us.
  dirty_.store(false, std::memory_order_relaxed);
  bool destroyed = false;
  for (StreamState* s : streams) {
    if (s->has_surplus.load(std::memory_order_relaxed)) s->destroy_surplus_events();
    // An idle stream's settled records left linked or held (unlink_settled):
    // let go of them once its lock is free.
    if (!s->unlinked_handoffs.empty() && s->pending() == 0 && s->mu.try_lock()) {
      s->drop_unlinked_locked();
      s->mu.unlock();
    }
    // Before the queue's proof too: a free queued while the kernel it was
    // dropped behind still runs executes right behind it, and the query
    // below may then prove both.
    if (releases_at_once() && s->has_release_work()) progress |= tend_releases(*s);
    if (s->pending() != 0) {
      progress |= sweep_stream(*s);
      const std::uint64_t left = s->pending();
      any_pending |= left != 0;
      deepest = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(std::max<std::uint64_t>(deepest, left), UINT32_MAX));
    }
    // After the queue's proof: a stream it left idle has its frees queued in
    // this same sweep (tend_releases), not a quiet period later.
    if (s->has_release_work()) {
      progress |= tend_releases(*s);
      any_pending = true;  // until every release is proven: wait_settled counts them
    }
    if (s->abandoned()) {
      if (!may_destroy) {
        any_pending = true;
        continue;
      }
      if (!s->detach()) {
        any_pending = true;  // a marker proves its untracked work done first
        continue;
      }
      const std::uint64_t id = s->id;
      {
        base::Guard g(mu_);
        std::erase(streams_, s);
        destroying_.push_back({id, s->ctx, s->ctx->platform, s->internal});
        ++generation_;
      }
      s->destroy();
      {
        base::Guard g(mu_);
        std::erase_if(destroying_, [id](const Destroying& d) { return d.id == id; });
      }
      destroyed = true;
    }
  }
  if (destroyed) {
    snapshot(streams);
    progress = true;
  }
  return progress;
}

// Per sweep, a bounded number of driver queries whatever the queue length:
// the newest event first (complete: stream order proves the whole queue
// complete); otherwise a bisection for the last complete one, at most
// kProbes queries, retiring the prefix it proves. An error anywhere switches
// to a walk from the oldest that attributes it to the submission whose own
// event reports it (quarantined) and still retires the others.
bool Retirement::sweep_stream(StreamState& s) {
  // No stream lock: only a sweep unlinks, and a submitter stores `head` (when
  // the queue was empty) before `tail`. Links from head up to newest were
  // written before newest was published, so they are stable; only
  // newest->next may be changing.
  Submission* newest = s.tail.load(std::memory_order_acquire);
  Submission* head = s.head.load(std::memory_order_acquire);
  if (!newest || !head) return false;
  if (head == s.sentinel.load(std::memory_order_relaxed)) {
    if (head == newest) return false;  // settled already; nothing newer
    head = head->next;                 // written before `newest` was published
  }
  outcomes_.clear();
  bool stall_query_failed = false;
  // Proven complete by the stall check's query, if it asked one. A query
  // of a complete event is the dearest kind (2.2-3.0 µs on the H200,
  // results/h200/gpu-check-55c6aee): the newest is not asked twice.
  const Submission* proven = nullptr;
  if (s.stalled_since_ns != 0 && waiters_.load(std::memory_order_relaxed) == 0 &&
      !stall_over(s, head, newest, stall_query_failed, proven)) {
    return false;
  }
  if (newest->covered) {
    newest = cover_quiet_tail(s, newest);
    if (!newest) return false;
  }
  // Newest first: the newest event proves everything before it. While the
  // stream is hot its newest work is covered: ask the newest own event.
  Submission* const probe = newest->covered ? newest_evented(s, head, newest) : newest;
  driver::Result r{driver::Status::not_ready, 0, "covered"};
  Submission* last_complete = nullptr;
  if (stall_query_failed) {
    // The oldest own event reported a failure, which the driver need not
    // report twice (the sim clears a fault once it is seen): asked now, a
    // newer event could look complete and prove the failed work done.
    // Attribute the failure first.
    r = driver::Result{driver::Status::completion_unknown, 0, "oldest own event"};
    walk_attributing_errors(s, head, newest);
  } else {
    if (probe) r = probe == proven ? driver::kOk : query(s, *probe);
    if (r.ok()) {
      last_complete = probe;
    } else if (r.status == driver::Status::not_ready) {
      if (!bisect(s, head, probe ? probe : newest, last_complete)) walk_attributing_errors(s, head, newest);
    } else {
      walk_attributing_errors(s, head, newest);
    }
  }
  if (last_complete) {
    for (Submission* p = head;; p = p->next) {
      outcomes_.push_back({p, true});
      if (p == last_complete) break;
    }
  }
  if (outcomes_.empty()) {
    note_stall(s, Submission::now_ns());
    return false;
  }
  s.stalled_since_ns = 0;
  TANDEM_TRACE(
      "settle stream %lu: seq %lu..%lu (head %lu newest %lu, newest event %p query %d); last event %p", s.id,
      outcomes_.front().sub->seq, outcomes_.back().sub->seq, head->seq, newest->seq, newest->event.raw,
      static_cast<int>(r.status), outcomes_.back().sub->event.raw);
  settle(s, newest);
  return true;
}

// A stream whose last sweep retired nothing (a long kernel at its head) is
// looked at next with one query, of its oldest own event, and after the
// first 50 µs of the stall only after a backoff (note_stall). So a device busy with long
// kernels on many streams costs one query per stream per backoff, not up to
// four per stream every sweep (each competing with the submitters inside
// the driver), and no walks through deep queues. A waiter skips the backoff.
bool Retirement::stall_over(StreamState& s, Submission* head, Submission* newest, bool& failed,
                            const Submission*& proven) noexcept {
  const std::uint64_t now = Submission::now_ns();
  if (now < s.next_look_ns) return false;
  Submission* first = head;
  while (first->covered && first != newest) first = first->next;
  if (first->covered) return true;
  const driver::Result q = query(s, *first);
  if (q.status == driver::Status::not_ready) {
    note_stall(s, now);
    return false;
  }
  failed = !q.ok();
  if (q.ok()) proven = first;
  return true;
}

// For the first kGrace of a stall the stream is looked at every sweep (one
// query): most kernels finish within it, and a backoff there would add its
// length to every short round trip (16 µs on a 10 µs one, on the H200).
// After it, a quarter of the time stalled so far, 16 µs to 1 ms.
void Retirement::note_stall(StreamState& s, std::uint64_t now_ns) noexcept {
  constexpr std::uint64_t kGraceNs = 50'000, kShortestBackoffNs = 16'000, kLongestBackoffNs = 1'000'000;
  if (s.stalled_since_ns == 0) s.stalled_since_ns = now_ns;
  const std::uint64_t stalled = now_ns - s.stalled_since_ns;
  s.next_look_ns =
      stalled < kGraceNs ? now_ns : now_ns + std::clamp(stalled / 4, kShortestBackoffNs, kLongestBackoffNs);
}

// The newest queued submission in [head, newest] with an event of its own,
// or null. Walks only what was queued since the previous sweep (the
// stream's retirement cursor), so a deep queue costs nothing per sweep.
Submission* Retirement::newest_evented(StreamState& s, Submission* head, Submission* newest) noexcept {
  Submission* p = s.swept_tail && s.swept_tail_seq >= head->seq ? s.swept_tail : head;
  if (s.newest_evented && s.newest_evented_seq < head->seq) s.newest_evented = nullptr;
  for (;; p = p->next) {
    if (!p->covered && (!s.newest_evented || p->seq > s.newest_evented_seq)) {
      s.newest_evented = p;
      s.newest_evented_seq = p->seq;
    }
    if (p == newest) break;
  }
  s.swept_tail = newest;
  s.swept_tail_seq = newest->seq;
  return s.newest_evented;
}

// A covered tail waits for the next event its stream records. Once the
// stream queued nothing new for kCoverQuiet (or someone waits), this thread
// queues a marker after it. Without a waiter it only tries the stream's
// lock: a submitter holding it is about to queue newer work. Returns the
// tail to sweep; null when no event could be had (the device is failing).
Submission* Retirement::cover_quiet_tail(StreamState& s,
                                         Submission* newest) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  const bool waiting = waiters_.load(std::memory_order_relaxed) != 0;
  if (!quiet(s, waiting, kCoverQuiet) || !lock_quiet_stream(s, waiting)) return newest;
  const ProfileScope timed(&RetireProfile::marker);
  Submission* t = s.tail.load(std::memory_order_relaxed);
  if (t && t->covered && !s.capture) {
    if (event_comes_back(s, newest)) {
      t = newest;  // the marker follows once that event is back
    } else if (queue_cover(s)) {
      t = s.tail.load(std::memory_order_relaxed);
      bump(s.quiet_tail_markers, 1);
    } else {
      t = nullptr;  // no event to be had
    }
  }
  s.mu.unlock();
  return t;
}

bool Retirement::lock_quiet_stream(StreamState& s, bool waiting) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  return waiting ? lock_for_waiter(s) : s.mu.try_lock();
}

bool Retirement::lock_for_waiter(StreamState& s) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  const ProfileScope timed(&RetireProfile::stream_lock);
  if (kWaiterLockWait.count() < 0) {
    s.mu.lock();
    return true;
  }
  const auto give_up = Clock::now() + kWaiterLockWait;
  do {
    if (s.mu.try_lock()) return true;
    TANDEM_CPU_RELAX();
  } while (Clock::now() < give_up);
  return false;
}

bool Retirement::event_comes_back(StreamState& s,
                                  Submission* newest) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  if (s.has_free_event()) return false;
  Submission* head = s.head.load(std::memory_order_acquire);
  if (!newest || !head) return false;
  if (head == s.sentinel.load(std::memory_order_relaxed)) {
    if (head == newest) return false;  // nothing pending
    head = head->next;                 // linked under the stream's lock, which the caller holds
  }
  return newest_evented(s, head, newest) != nullptr;
}

bool Retirement::queue_cover(StreamState& s) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  bool queued = false;
  try {
    (void)s.queue_marker(queued);
  } catch (...) {
    // No event to be had: the device is failing; what it should prove stays unproven.
  }
  return queued;
}

bool Retirement::quiet(StreamState& s, bool waiting, std::chrono::microseconds for_at_least) noexcept {
  const std::uint64_t submitted = s.submitted_seq.load(std::memory_order_acquire);
  const std::uint64_t now = Submission::now_ns();
  if (submitted != s.swept_submitted) {
    s.swept_submitted = submitted;
    s.quiet_since_ns = now;
    return waiting;
  }
  return waiting || std::chrono::nanoseconds(now - s.quiet_since_ns) >= for_at_least;
}

// kReleaseAtOnce's rule, while submissions are not streaming in.
bool Retirement::releases_at_once() const noexcept { return kReleaseAtOnce && !streaming(); }

// A stream's submitter drains its releases at its next submission or
// allocation, and that submission proves the frees. A stream that went
// quiet gets both from here: without a waiter only through try_lock (a
// submitter holding the lock is about to drain them itself).
bool Retirement::tend_releases(StreamState& s) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  bool did = false;
  failed_releases_.clear();
  try {
    s.take_failed_releases(failed_releases_);
  } catch (...) {
    // No room for the list: they stay with the stream until the next sweep.
  }
  for (AllocationState* a : failed_releases_) a->abandon_device_release();
  if (!failed_releases_.empty()) {
    s.releases_finished.fetch_add(failed_releases_.size(), std::memory_order_acq_rel);
    did = true;
  }
  if (!s.has_uncovered_releases()) return did;
  const bool waiting = waiters_.load(std::memory_order_relaxed) != 0;
  // A stream whose every submission is proven done has nothing its next
  // submitter's drain would put the frees behind: waiting kCoverQuiet for
  // one only delays the memory (a lone launch -> drop -> freed round trip
  // took 65 µs on the H200, 50 of them this wait). Still only try_lock: a
  // submitter holding the lock drains them itself. The release stream has
  // no submitter at all that would drain it or cover its frees: at once too.
  // A stream whose newest work has its own event, while submissions are
  // not streaming in: at once as well (kReleaseAtOnce).
  const bool idle = s.internal || s.pending() == 0 || (releases_at_once() && !tail_covered(s));
  if (idle && !waiting) {
    if (!s.mu.try_lock()) return did;
  } else if (!quiet(s, waiting, kReleaseQuiet) || !lock_quiet_stream(s, waiting)) {
    return did;
  }
  const ProfileScope timed(&RetireProfile::drain);
  s.drain_releases(s.next_seq);
  if (s.has_uncovered_work() && !s.capture && !event_comes_back(s, s.tail.load(std::memory_order_relaxed))) {
    did |= queue_cover(s);
  }
  s.mu.unlock();
  return did;
}

void Retirement::finish_releases(StreamState& s, std::uint64_t last_seq) noexcept {
  releases_.clear();
  try {
    s.take_settled_releases(last_seq, releases_);
  } catch (...) {
    return;  // no room for the list: the next settle takes them
  }
  if (releases_.empty()) return;
  const std::uint64_t first = outcomes_.front().sub->seq;
  for (const auto& [seq, a] : releases_) {
    // Taken at the settle that reached `seq`: seq >= first.
    const bool executed = seq >= first ? outcomes_[seq - first].completed : true;
    a->finish_device_release(executed);
  }
  s.releases_finished.fetch_add(releases_.size(), std::memory_order_acq_rel);
}

// Finds (within kProbes queries) a complete submission in [head, newest),
// newest known incomplete or not provable yet (covered). Covered nodes are
// proven by the next event after them: a probe landing on one moves on to
// it. False if a query reported an error.
bool Retirement::bisect(StreamState& s, Submission* head, Submission* newest, Submission*& last_complete) {
  constexpr int kProbes = 3;
  std::uint64_t lo = 0;                        // offsets [0, lo) proven complete
  std::uint64_t hi = newest->seq - head->seq;  // offset hi is incomplete (or unprovable)
  Submission* at_lo = head;
  for (int probe = 0; probe < kProbes && lo < hi; ++probe) {
    std::uint64_t mid = lo + (hi - lo) / 2;
    Submission* node = at_lo;
    for (std::uint64_t i = lo; i < mid; ++i) node = node->next;
    const std::uint64_t first = mid;
    while (node->covered && mid < hi) {
      node = node->next;
      ++mid;
    }
    if (mid == hi) {  // nothing in [first, hi) has an event of its own
      hi = first;
      continue;
    }
    const driver::Result q = query(s, *node);
    if (q.ok()) {
      TANDEM_TRACE("bisect stream %lu: seq %lu complete (event %p)", s.id, node->seq, node->event.raw);
      last_complete = node;
      lo = mid + 1;
      at_lo = node->next;
    } else if (q.status == driver::Status::not_ready) {
      hi = mid;
    } else {
      last_complete = nullptr;
      return false;
    }
  }
  return true;
}

void Retirement::walk_attributing_errors(StreamState& s, Submission* head, Submission* newest) {
  std::size_t covered_from = 0;  // outcomes_ from here wait for the next event's verdict
  for (Submission* p = head;; p = p->next) {
    if (p->covered) {
      outcomes_.push_back({p, false});
      if (p == newest) break;
      continue;
    }
    driver::Result q = driver::kOk;
    // A birth mark is the submission's own event too: an error there is
    // the submission's (and querying it is what clears it on the sim).
    if (p->birth_mark) q = s.ctx->backend().event_query(s.ctx->handle, p->birth_mark);
    if (q.ok()) q = query(s, *p);
    if (q.status == driver::Status::not_ready) break;
    // The event proves (or fails to prove) the covered run before it too.
    for (std::size_t i = covered_from; i < outcomes_.size(); ++i) outcomes_[i].completed = q.ok();
    outcomes_.push_back({p, q.ok()});
    covered_from = outcomes_.size();
    if (p == newest) break;
  }
  outcomes_.resize(covered_from);  // a covered run no event has judged yet stays queued
}
}  // namespace tandem::detail
