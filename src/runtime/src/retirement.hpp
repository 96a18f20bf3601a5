// SPDX-License-Identifier: Apache-2.0
// retirement.hpp — the one background thread that proves submissions
// complete and releases what they held (spec/runtime.md §6,
// spec/design-notes.md "Completion and retirement").
//
// - Per stream, at most 1 + 3 driver queries per sweep, whatever the queue
//   length: the newest pending event of its own (complete: everything before
//   it retires), else a bounded bisection for the last complete one.
//   Submissions that share a later event (covered, see
//   ContextOptions::share_completion_events) retire with it; a covered tail
//   gets a marker from this thread once its stream is quiet (or for a
//   waiter). On an error it walks from the oldest, attributing the error to
//   the submission whose own event reports it (quarantined, with the covered
//   run before it) and retiring the others.
// - A stream whose sweep retired nothing (a long kernel) is looked at again
//   with one query first: every sweep for 50 µs, then after a backoff of a
//   quarter of the stall so far (16 µs to 1 ms).
// - Asleep on a condition variable while nothing is pending (no CPU); a
//   submit wakes it only if it sleeps. While work is pending it sweeps every
//   2 µs (a waiter, or no new work since the last sweep) or up to every
//   1 ms, napping (work streaming in, or a deep queue: querying more often
//   only slows the submitters down), and after 200 µs without progress sleeps
//   20 µs doubling to 1 ms.
// - Releases (stream_state.hpp): a free pushed to a stream that no
//   submission follows gets drained and covered by a marker once the
//   stream is quiet; a settled submission proves (or quarantines) the frees
//   enqueued before it.
// - Frees memory, releases foreign owners and destroys streams on its own
//   thread, never inside a driver callback, never holding a runtime lock
//   but the sweep's (below), which no user call takes.
// - A sweep is whoever holds `sweep_mu_`: the thread, or a thread waiting on
//   retirement that found no sweep completed for kHelpAfter (retirement.cpp;
//   the thread is off the CPU on a busy host) and none under way, and sweeps
//   in its place (help). A helper frees and releases owners as the thread
//   would, on its own thread, but never destroys a stream. "Retirement
//   only" state, here and in StreamState, is the sweep's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "tandem/base/guard.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/spin_lock.hpp"
#include "tandem/base/thread_annotations.hpp"

namespace tandem::detail {

class AllocationState;
struct StreamState;
struct Submission;

class Retirement;

// Mutants only (tandem/base/mutant.hpp): takes a pending submission's
// leases out of their trackers now and drops the counts they hold, as if
// its work were proven done. Never called in a normal build.
void untrack_leases_now(Submission& sub) noexcept;

// Wakes retirement on scope exit if `queued` was set meanwhile (a marker
// queued under locks: notify only once they are released). `service`: the
// stream's (StreamState::retirement), which spares the submit path the
// function-local static of Retirement::instance().
struct NotifyRetirementIfQueued {
  const bool& queued;
  Retirement* service = nullptr;
  ~NotifyRetirementIfQueued();
};

class Retirement {
 public:
  static Retirement& instance();

  // Takes a reference on `s`; the stream is destroyed by this service.
  void add_stream(StreamState* s);
  // After queueing work: wakes the thread if it sleeps. Cheap otherwise.
  void notify_submit() noexcept {
    if (sleeping_.load(std::memory_order_seq_cst)) wake();
  }
  // A stream lost its last user handle.
  void notify_released() noexcept {
    dirty_.store(true, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst)) wake();
  }

  // Scope: streams whose context is `ctx` (or whose platform is `platform`;
  // both null = every stream). Blocks until each has settled everything
  // queued before the call and those no handle refers to are destroyed, or
  // until `deadline` (returns false).
  bool wait_settled(const void* ctx, const void* platform, std::chrono::steady_clock::time_point deadline);
  // Blocks until `s` is retired or quarantined, or until `deadline`.
  bool wait_submission(const Submission& s, std::chrono::steady_clock::time_point deadline);
  // Blocks until the thread has swept every stream once from start to end
  // after the call (so what was proven complete then is retired), or until
  // `deadline` (returns false). An allocation under pressure.
  bool wait_sweep(std::chrono::steady_clock::time_point deadline);
  // Blocks until `s` has settled every submission up to `seq` (the bound
  // on the device's queue, queue_bound.hpp): no deadline, as a launch
  // into a full driver queue has none. Returns at once on the retirement
  // thread and once the process is exiting (retirement stops then).
  void wait_settled_to(const StreamState& s, std::uint64_t seq);

  // True once the process has begun to exit (an atexit handler): from then
  // on the runtime makes no driver calls (the driver may be tearing down);
  // what is still pending is left to the process's end.
  [[nodiscard]] static bool process_is_exiting() noexcept { return exiting_.load(std::memory_order_acquire); }

  // The retirement thread, or a waiter inside the sweep it helps with: a
  // wait from there would wait for itself.
  [[nodiscard]] bool on_retirement_thread() const noexcept {
    return helping_here_ || std::this_thread::get_id() == thread_id_;
  }

  // Tests only (tandem/testing/retirement_pause.hpp): while paused the
  // thread begins no sweep (waiters still help). Returns once no sweep of
  // the thread's is under way.
  void pause_thread(bool paused);

 private:
  Retirement();
  void run();
  // What one sweep of the thread's found.
  struct SweepResult {
    bool progress = false;  // anything retired, quarantined or destroyed
    bool any_pending = false;
    std::uint32_t deepest = 0;  // the longest queue left
    bool streaming = false;     // streaming(), after it
  };
  // One sweep of the thread's and its bookkeeping, under sweep_mu_; none
  // while paused or once the process exits.
  std::optional<SweepResult> sweep_once(std::vector<StreamState*>& streams) TANDEM_EXCLUDES(sweep_mu_);
  // Returns true if anything retired, was quarantined or destroyed.
  // `may_destroy`: the thread's sweeps destroy abandoned streams (and
  // refresh `streams`); a helper's leave them to it.
  bool sweep(std::vector<StreamState*>& streams, bool may_destroy, bool& any_pending, std::uint32_t& deepest)
      TANDEM_REQUIRES(sweep_mu_);
  // A waiter's sweep (see the top of this file); false if one was under way.
  bool help() TANDEM_EXCLUDES(sweep_mu_);
  bool sweep_stream(StreamState& s) TANDEM_REQUIRES(sweep_mu_);
  Submission* cover_quiet_tail(StreamState& s, Submission* newest) noexcept TANDEM_REQUIRES(sweep_mu_);
  // Whether `s` has queued nothing new since the previous sweep and for at
  // least `for_at_least` (always, for a waiter).
  bool quiet(StreamState& s, bool waiting, std::chrono::microseconds for_at_least) noexcept;
  // Takes a quiet stream's lock to queue a marker or drain its releases:
  // waits for it only for a waiter, and briefly; otherwise a submitter holding it is
  // about to do that work itself. Then queues a marker (false: no event).
  bool lock_quiet_stream(StreamState& s, bool waiting) noexcept;
  // For a waiter: `s`'s lock, waited for at most kWaiterLockWait
  // (retirement.cpp); false when given up (the sweep moves on).
  bool lock_for_waiter(StreamState& s) noexcept;
  static bool queue_cover(StreamState& s) noexcept;
  // Under `s`'s lock: whether its markers should wait for an event rather
  // than make one. True when none is free and one is in flight, on a
  // pending submission up to `newest` (no newer than what this sweep of `s`
  // loaded: newest_evented moves the sweep's cursor up to it). That event
  // comes back when its submission settles, and the work a marker would
  // prove cannot complete before it anyway. Making one takes the driver's
  // lock for writing (stream_state.hpp, take_event), which stalls this
  // thread, and every stream's retirement with it, while threads launch or
  // synchronize: 151.7 ms on the H200 under 8 launching threads
  // (results/h200/k8-lag-e960d89).
  bool event_comes_back(StreamState& s, Submission* newest) noexcept;
  // Releases pushed to `s` that no submission follows (their stream went
  // quiet, or is idle: all its work proven): drains them and queues a marker
  // after them; hands refused ones back to host proof. True if it did anything.
  bool tend_releases(StreamState& s) noexcept TANDEM_REQUIRES(sweep_mu_);
  // settle(): each free enqueued before a settled submission takes that
  // submission's verdict (freed, or quarantined).
  void finish_releases(StreamState& s, std::uint64_t last_seq) noexcept TANDEM_REQUIRES(sweep_mu_);
  Submission* newest_evented(StreamState& s, Submission* head, Submission* newest) noexcept;
  // `failed`: the query of the oldest own event reported an error (the
  // sweep must attribute it before asking anything newer); `proven`: that
  // event, when its query reported it complete.
  bool stall_over(StreamState& s, Submission* head, Submission* newest, bool& failed,
                  const Submission*& proven) noexcept;
  static void note_stall(StreamState& s, std::uint64_t now_ns) noexcept;
  bool bisect(StreamState& s, Submission* head, Submission* newest, Submission*& last_complete);
  void walk_attributing_errors(StreamState& s, Submission* head, Submission* newest)
      TANDEM_REQUIRES(sweep_mu_);
  void settle(StreamState& s, const Submission* newest) TANDEM_REQUIRES(sweep_mu_);
  void unlink_settled(StreamState& s, const Submission* newest, Submission* last) TANDEM_REQUIRES(sweep_mu_);
  void untrack_leases(Submission& sub) TANDEM_REQUIRES(sweep_mu_);
  void count_drop(AllocationState* a, std::uint32_t n) TANDEM_REQUIRES(sweep_mu_);
  void drop_lease_counts() noexcept TANDEM_REQUIRES(sweep_mu_);
  void snapshot(std::vector<StreamState*>& out);
  bool anything_pending(const std::vector<StreamState*>& streams) const;
  void pace(std::chrono::microseconds gap, bool waiting, unsigned idle_rounds);
  void pause_for(std::chrono::microseconds gap);
  void nap(std::chrono::microseconds d);
  void sleep_until_woken(const std::vector<StreamState*>& streams);
  void wake() noexcept;
  void notify_waiters();
  template <class Pred>
  bool wait_until(std::chrono::steady_clock::time_point deadline, Pred pred);
  // wait_settled: whether the dropped streams it found (`dropped`, by id) and
  // the release streams in scope their contexts let go of are destroyed.
  bool dropped_streams_gone(const void* ctx, const void* platform, const std::vector<std::uint64_t>& dropped)
      TANDEM_EXCLUDES(mu_);

  base::Mutex mu_;
  std::condition_variable cv_;
  std::vector<StreamState*> streams_ TANDEM_GUARDED_BY(mu_);
  std::uint64_t generation_ TANDEM_GUARDED_BY(mu_) = 0;
  // Streams out of `streams_` whose destroy() has not returned yet
  // (wait_settled waits for those it saw dropped, and for release streams
  // in its scope).
  struct Destroying {
    std::uint64_t id;
    const void* ctx;
    const void* platform;
    bool internal;
  };
  std::vector<Destroying> destroying_ TANDEM_GUARDED_BY(mu_);
  bool wake_ TANDEM_GUARDED_BY(mu_) = false;

  // Held across a sweep (see the top of this file). Taken before mu_ and
  // before any stream's lock.
  base::Mutex sweep_mu_;
  // The thread's alone (its list of streams, snapshot; a helper takes its
  // own copy).
  std::uint64_t seen_generation_ = 0;
  // Consecutive sweeps of the thread's that found new work. From two on,
  // submitters are streaming: the sweep gap grows, and dropped frees keep
  // the quiet-time rule (tend_releases).
  unsigned busy_sweeps_ TANDEM_GUARDED_BY(sweep_mu_) = 0;
  std::uint64_t seen_submitted_ TANDEM_GUARDED_BY(sweep_mu_) = 0;  // every stream's, at the previous one
  [[nodiscard]] bool streaming() const noexcept TANDEM_REQUIRES(sweep_mu_) { return busy_sweeps_ >= 2; }
  // A dropped free is queued at the first sweep that sees it (retirement.cpp).
  [[nodiscard]] bool releases_at_once() const noexcept TANDEM_REQUIRES(sweep_mu_);
  struct Outcome {
    Submission* sub;
    bool completed;  // false: completion unknown, quarantined
  };
  std::vector<Outcome> outcomes_ TANDEM_GUARDED_BY(sweep_mu_);
  // Lease counts to drop, per allocation.
  std::vector<std::pair<AllocationState*, std::uint32_t>> drops_ TANDEM_GUARDED_BY(sweep_mu_);
  // Settled: back to their stream's pool; still referred to by a future.
  std::vector<Submission*> reuse_ TANDEM_GUARDED_BY(sweep_mu_);
  std::vector<Submission*> handed_off_ TANDEM_GUARDED_BY(sweep_mu_);
  // Settle's frees to finish.
  std::vector<std::pair<std::uint64_t, AllocationState*>> releases_ TANDEM_GUARDED_BY(sweep_mu_);
  std::vector<AllocationState*> failed_releases_ TANDEM_GUARDED_BY(sweep_mu_);
  bool paused_ TANDEM_GUARDED_BY(sweep_mu_) = false;  // pause_thread
  // Set by help() across its sweep, on the helping thread.
  static thread_local bool helping_here_;

  // Read by every submit (notify_submit): on a line of its own, not beside
  // the vectors above that each sweep rewrites.
  alignas(64) std::atomic<bool> sleeping_{false};
  std::atomic<bool> dirty_{false};
  std::atomic<std::uint32_t> waiters_{0};

  alignas(64) base::Mutex settled_mu_;
  std::condition_variable settled_cv_;
  std::atomic<std::uint64_t> sweeps_{0};  // complete sweeps (wait_sweep)

  static void at_exit() noexcept;
  static std::atomic<bool> exiting_;
  std::atomic<bool> exited_{false};

  std::thread::id thread_id_;
  std::thread thread_;
};

inline NotifyRetirementIfQueued::~NotifyRetirementIfQueued() {
  if (queued) (service ? *service : Retirement::instance()).notify_submit();
}

}  // namespace tandem::detail
