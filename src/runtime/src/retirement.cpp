#include "retirement.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "context_state.hpp"
#include "stream_state.hpp"
#include "submission.hpp"

namespace tandem::detail {

namespace {

using Clock = std::chrono::steady_clock;

// While work is pending: sweep every kLatencyGap when queues are shallow
// (<= kShallowQueue) or someone waits, every kThroughputGap otherwise; after
// kSpinWhilePending without progress, sleep from kMinSleep doubling up to
// kMaxSleep.
// TANDEM_RETIRE_GAP_US="latency,throughput" overrides the two gaps (tuning).
std::chrono::microseconds gap_from_env(int which, std::chrono::microseconds fallback) {
  const char* v = std::getenv("TANDEM_RETIRE_GAP_US");
  if (!v) return fallback;
  const std::string text(v);
  const auto comma = text.find(',');
  const std::string part = which == 0 ? text.substr(0, comma) : (comma == std::string::npos ? "" : text.substr(comma + 1));
  return part.empty() ? fallback : std::chrono::microseconds(std::stoll(part));
}
const auto kLatencyGap = gap_from_env(0, std::chrono::microseconds(2));
const auto kThroughputGap = gap_from_env(1, std::chrono::microseconds(30));
constexpr std::uint32_t kShallowQueue = 4;
constexpr auto kSpinWhilePending = std::chrono::microseconds(200);
constexpr auto kMinSleep = std::chrono::microseconds(20);
constexpr auto kMaxSleep = std::chrono::microseconds(1000);
// With nothing pending: stay awake this long (a submit usually follows a
// retirement closely; a futex wake costs more than a launch), then sleep.
constexpr auto kIdleSpin = std::chrono::microseconds(50);

driver::Result query(const StreamState& s, const Submission& sub) noexcept {
  if (!sub.event) return {driver::Status::completion_unknown, 0, "no completion event"};
  return s.ctx->backend().event_query(s.ctx->handle, sub.event);
}

void release_leases(Submission& sub) noexcept {
  for (Lease& l : sub.leases) {
    Guard g(l.alloc->tracker_lock);
    auto& held = l.alloc->leases;
    for (std::size_t i = 0; i < held.size(); ++i) {
      if (held[i] == &l) {
        held.swap_remove(i);
        break;
      }
    }
  }
  // Outside every lock: the last lease may free memory or run an owner.
  for (Lease& l : sub.leases) l.alloc->drop_leases(1);
}

void quarantine(Submission& sub) noexcept {
  for (Lease& l : sub.leases) l.alloc->mark_quarantined();
}

}  // namespace

Retirement& Retirement::instance() {
  // Never destroyed: submissions may still retire while static destructors
  // run, and the thread must not touch a destroyed object.
  static Retirement* r = new Retirement();
  return *r;
}

std::atomic<bool> Retirement::exiting_{false};

Retirement::Retirement() {
  thread_ = std::thread([this] {
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
  Retirement& r = instance();
  r.wake();
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  while (!r.exited_.load(std::memory_order_acquire) && Clock::now() < give_up) std::this_thread::yield();
}

void Retirement::add_stream(StreamState* s) {
  {
    Guard g(mu_);
    streams_.push_back(s);
    ++generation_;
  }
  // The stream may be used at once; a sleeping thread picks it up on the
  // first submit, which wakes it.
}

void Retirement::wake() noexcept {
  {
    Guard g(mu_);
    wake_ = true;
  }
  cv_.notify_one();
}

void Retirement::notify_waiters() {
  { Guard g(settled_mu_); }
  settled_cv_.notify_all();
}

void Retirement::snapshot(std::vector<StreamState*>& out) {
  Guard g(mu_);
  if (generation_ == seen_generation_ && !out.empty()) return;
  out = streams_;
  seen_generation_ = generation_;
}

bool Retirement::anything_pending(const std::vector<StreamState*>& streams) const {
  return std::any_of(streams.begin(), streams.end(), [](const StreamState* s) {
    return s->pending.load(std::memory_order_seq_cst) != 0;
  });
}

void Retirement::run() {
  std::vector<StreamState*> streams;
  unsigned idle_rounds = 0;
  auto last_progress = Clock::now();
  while (!process_is_exiting()) {
    snapshot(streams);
    bool any_pending = false;
    std::uint32_t deepest = 0;
    const bool progress = sweep(streams, any_pending, deepest);
    if (progress) {
      last_progress = Clock::now();
      idle_rounds = 0;
      if (waiters_.load(std::memory_order_acquire) != 0) notify_waiters();
    }
    if (any_pending || waiters_.load(std::memory_order_acquire) != 0) {
      if (!progress) ++idle_rounds;
      pace(deepest, idle_rounds);
      continue;
    }
    if (Clock::now() - last_progress < kIdleSpin) {
      std::this_thread::yield();
      continue;
    }
    sleep_until_woken(streams);
    last_progress = Clock::now();
  }
}

// Between sweeps while work is pending. The gap keeps retirement from
// competing with the submitting threads for the driver: a deep queue (work
// streaming in) is swept every kThroughputGap, a shallow one (someone may be
// waiting on that very submission) or any waiter every kLatencyGap. After
// kSpinWhilePending without progress it sleeps, 20 µs doubling to 1 ms,
// so a long kernel costs no CPU.
void Retirement::pace(std::uint32_t deepest, unsigned idle_rounds) {
  const bool waiting = waiters_.load(std::memory_order_acquire) != 0;
  const auto gap = waiting || deepest <= kShallowQueue ? kLatencyGap : kThroughputGap;
  const unsigned spin_rounds = static_cast<unsigned>(kSpinWhilePending / gap) + 1;
  if (waiting || idle_rounds < spin_rounds) {
    const auto until = Clock::now() + gap;
    while (Clock::now() < until) TANDEM_CPU_RELAX();
    return;
  }
  const unsigned doublings = std::min(idle_rounds - spin_rounds, 6U);
  const auto nap = std::min<std::chrono::microseconds>(kMinSleep * (1U << doublings), kMaxSleep);
  std::unique_lock lk(mu_.native());
  // `lk` holds mu_ (through its std::mutex, which the analysis cannot see).
  cv_.wait_for(lk, nap, [this]() TANDEM_NO_THREAD_SAFETY_ANALYSIS { return wake_; });
  [this]() TANDEM_NO_THREAD_SAFETY_ANALYSIS { wake_ = false; }();
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

bool Retirement::sweep(std::vector<StreamState*>& streams, bool& any_pending, std::uint32_t& deepest) {
  bool progress = false;
  // A released stream is found below like any other; the flag only woke us.
  dirty_.store(false, std::memory_order_relaxed);
  bool destroyed = false;
  for (StreamState* s : streams) {
    if (s->pending.load(std::memory_order_acquire) != 0) {
      progress |= sweep_stream(*s);
      const std::uint32_t left = s->pending.load(std::memory_order_acquire);
      any_pending |= left != 0;
      deepest = std::max(deepest, left);
    }
    if (s->abandoned()) {
      {
        Guard g(mu_);
        std::erase(streams_, s);
        ++generation_;
      }
      s->destroy();
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
  Submission* head;
  Submission* newest;
  {
    Guard g(s.mu);
    head = s.head;
    newest = s.tail;
  }
  if (!head) return false;
  // Links from head up to newest were written before newest was queued, so
  // they are stable without the lock; only newest->next may be changing.
  outcomes_.clear();
  const driver::Result r = query(s, *newest);
  Submission* last_complete = nullptr;
  if (r.ok()) {
    last_complete = newest;
  } else if (r.status == driver::Status::not_ready) {
    if (!bisect(s, head, newest, last_complete)) walk_attributing_errors(s, head, newest);
  } else {
    walk_attributing_errors(s, head, newest);
  }
  if (last_complete) {
    for (Submission* p = head;; p = p->next) {
      outcomes_.push_back({p, true});
      if (p == last_complete) break;
    }
  }
  if (outcomes_.empty()) return false;
  settle(s);
  return true;
}

// Finds (within kProbes queries) a complete submission in [head, newest),
// newest known incomplete. False if a query reported an error.
bool Retirement::bisect(StreamState& s, Submission* head, Submission* newest, Submission*& last_complete) {
  constexpr int kProbes = 3;
  std::uint64_t lo = 0;                        // offsets [0, lo) proven complete
  std::uint64_t hi = newest->seq - head->seq;  // offset hi is incomplete
  Submission* at_lo = head;
  for (int probe = 0; probe < kProbes && lo < hi; ++probe) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    Submission* node = at_lo;
    for (std::uint64_t i = lo; i < mid; ++i) node = node->next;
    const driver::Result q = query(s, *node);
    if (q.ok()) {
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
  for (Submission* p = head;; p = p->next) {
    const driver::Result q = query(s, *p);
    if (q.status == driver::Status::not_ready) break;
    outcomes_.push_back({p, q.ok()});
    if (p == newest) break;
  }
}

// Releases what the settled prefix held, publishes each outcome (release
// order, after the leases are gone, so a waiter that sees "retired" sees the
// memory released), then recycles the records.
void Retirement::settle(StreamState& s) {
  Submission* last = outcomes_.back().sub;
  {
    Guard g(s.mu);
    s.head = last->next;
    if (!s.head) s.tail = nullptr;
  }
  std::uint64_t user = 0, retired = 0, quarantined_n = 0, released_leases = 0, quarantined_leases = 0;
  for (const Outcome& o : outcomes_) {
    Submission& p = *o.sub;
    if (p.user_visible()) ++user;
    if (o.completed) {
      released_leases += p.leases.size();
      release_leases(p);
      p.keep_alive.reset();
      if (p.user_visible()) ++retired;
    } else {
      quarantine(p);
      // Its leases stay held forever: count them with the context, which
      // outlives this stream.
      quarantined_leases += p.leases.size();
      if (p.user_visible()) ++quarantined_n;
    }
    p.state.store(o.completed ? SubmissionState::retired : SubmissionState::quarantined,
                  std::memory_order_release);
  }
  const std::uint64_t last_seq = last->seq;
  {
    Guard g(s.mu);
    for (const Outcome& o : outcomes_) {
      Submission* p = o.sub;
      p->next = nullptr;
      if (!o.completed) {
        s.ctx->keep_quarantined(p);  // its leases and event stay, forever
      } else if (p->refs.load(std::memory_order_acquire) == 1) {
        s.recycle(p);  // no future refers to it
      } else {
        if (p->event) s.free_events.push_back(p->event);
        p->event = {};
        p->stream = nullptr;
        p->release();  // the queue's reference; a future holds the rest
      }
    }
  }
  s.leases_held.fetch_sub(released_leases + quarantined_leases, std::memory_order_relaxed);
  s.ctx->quarantined_leases.fetch_add(quarantined_leases, std::memory_order_relaxed);
  s.retired.fetch_add(retired, std::memory_order_relaxed);
  s.quarantined.fetch_add(quarantined_n, std::memory_order_relaxed);
  s.user_settled.fetch_add(user, std::memory_order_release);
  s.settled_seq.store(last_seq, std::memory_order_release);
  s.pending.fetch_sub(static_cast<std::uint32_t>(outcomes_.size()), std::memory_order_acq_rel);
}

template <class Pred>
bool Retirement::wait_until(Clock::time_point deadline, Pred pred) {
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  wake();
  bool ok;
  {
    std::unique_lock lk(settled_mu_.native());
    ok = settled_cv_.wait_until(lk, deadline, pred);
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
  return ok;
}

bool Retirement::wait_settled(const void* ctx, const void* platform, Clock::time_point deadline) {
  if (on_retirement_thread()) return false;  // would wait for itself
  std::vector<std::pair<StreamState*, std::uint64_t>> targets;
  {
    Guard g(mu_);
    for (StreamState* s : streams_) {
      if (ctx && s->ctx != ctx) continue;
      if (platform && s->ctx->platform != platform) continue;
      const std::uint64_t target = s->submitted_seq.load(std::memory_order_acquire);
      if (s->settled_seq.load(std::memory_order_acquire) >= target) continue;
      s->add_ref();  // keep it alive while we watch it
      targets.emplace_back(s, target);
    }
  }
  const bool ok = targets.empty() || wait_until(deadline, [&] {
    return std::all_of(targets.begin(), targets.end(), [](const auto& t) {
      return t.first->settled_seq.load(std::memory_order_acquire) >= t.second;
    });
  });
  for (auto& t : targets) t.first->release();
  return ok;
}

bool Retirement::wait_submission(const Submission& sub, Clock::time_point deadline) {
  auto done = [&] { return sub.state.load(std::memory_order_acquire) != SubmissionState::pending; };
  if (done()) return true;
  if (on_retirement_thread()) return false;
  return wait_until(deadline, done);
}

}  // namespace tandem::detail
