// SPDX-License-Identifier: Apache-2.0
// Retirement (retirement.hpp): the waits on it (wait_for_retirement,
// a future's wait, a sweep) — block until the retirement thread has
// settled what the caller asked about, or the deadline passes — and the
// sweep a waiter makes in the thread's place when it is off the CPU.
#include <algorithm>
#include <utility>

#include "context_state.hpp"
#include "retire_profile.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/detail/trace.hpp"
#include "tuning.hpp"

namespace tandem::detail {

namespace {
using Clock = std::chrono::steady_clock;

// A waiter sweeps in the thread's place once no sweep has completed for
// this long (help). While someone waits the thread sweeps every 2 µs, so
// a longer silence means it is off the CPU or held inside a driver call. A
// waiter woken by its timeout gets the CPU back sooner than a thread that
// spins between sweeps: on an H100 with 8 busy loops on its 16 cores, the
// longest gap between two sweeps went from 13 ms to 5-8.5 ms and the
// churn's median p99 halved, in two rounds (results/h100/s48-a49ab2a).
// TANDEM_RETIRE_HELP_US (tuning; negative: never help, the rule before it).
const auto kHelpAfter = std::chrono::microseconds(tuning_value("TANDEM_RETIRE_HELP_US", 0, 200));
}  // namespace

// A waiter's sweep: see retirement.hpp.
bool Retirement::help() {
  if (!sweep_mu_.try_lock()) return false;
  if (process_is_exiting()) {  // the thread has stopped sweeping: so does everyone
    sweep_mu_.unlock();
    return false;
  }
  // A stream in streams_ is destroyed only by a sweep of the thread's,
  // which this one excludes.
  std::vector<StreamState*> streams;
  {
    base::Guard g(mu_);
    streams = streams_;
  }
  bool any_pending = false;
  std::uint32_t deepest = 0;
  helping_here_ = true;
  {
    const ProfileScope timed(&RetireProfile::help);
    (void)sweep(streams, /*may_destroy=*/false, any_pending, deepest);
  }
  helping_here_ = false;
  sweeps_.fetch_add(1, std::memory_order_acq_rel);
  sweep_mu_.unlock();
  notify_waiters();
  return true;
}

void Retirement::pause_thread(bool paused) {
  base::Guard g(sweep_mu_);  // a sweep under way ends first; the next sees the flag
  paused_ = paused;
}

template <class Pred>
bool Retirement::wait_until(Clock::time_point deadline, Pred pred) {
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  wake();
  bool ok;
  for (;;) {
    const std::uint64_t swept = sweeps_.load(std::memory_order_acquire);
    const Clock::time_point slice =
        kHelpAfter.count() < 0 ? deadline : std::min(deadline, Clock::now() + kHelpAfter);
    {
      std::unique_lock lk(settled_mu_.native());
      ok = settled_cv_.wait_until(lk, slice, pred);
    }
    if (ok || slice == deadline) break;
    if (sweeps_.load(std::memory_order_acquire) == swept) (void)help();
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
  return ok;
}

// A context's release stream holds the context, which lets go of it only
// once nothing else does (ContextState::release): when the last dropped
// stream goes, its context's release stream is dropped in turn. Waited for
// too, recognised as an internal stream in scope that its context no longer
// refers to (not by its reference count: a wait may hold one).
bool Retirement::dropped_streams_gone(const void* ctx, const void* platform,
                                      const std::vector<std::uint64_t>& dropped) {
  const auto in_scope = [&](const void* c, const void* p) {
    return (!ctx || c == ctx) && (!platform || p == platform);
  };
  base::Guard g(mu_);
  const auto listed = [&](std::uint64_t id) {
    return std::find(dropped.begin(), dropped.end(), id) != dropped.end();
  };
  const auto lingers = [&](const StreamState* s) {
    // The stream holds its context: s->ctx is alive.
    return listed(s->id) || (s->internal && s->ctx->release_stream.load(std::memory_order_acquire) != s &&
                             in_scope(s->ctx, s->ctx->platform));
  };
  return std::none_of(streams_.begin(), streams_.end(), lingers) &&
         std::none_of(destroying_.begin(), destroying_.end(), [&](const Destroying& d) {
           return listed(d.id) || (d.internal && in_scope(d.ctx, d.platform));
         });
}

bool Retirement::wait_settled(const void* ctx, const void* platform, Clock::time_point deadline) {
  if (on_retirement_thread()) return false;  // would wait for itself
  // Per stream: its submissions queued before the call, and its releases
  // pushed before it (frees proven executed, or quarantined).
  struct Target {
    StreamState* s;  // null once settled and let go of
    std::uint64_t submitted;
    std::uint64_t releases;
  };
  std::vector<Target> targets;
  // Streams no handle refers to any more: their last work and the frees
  // after it were submitted before the call, and a stream releases its
  // context (the driver context, the platform) only when this thread
  // destroys it, which can take one more sweep than its work (a marker
  // first proves the frees done). Waited for by id until they are gone, and
  // not referenced here, which would keep them alive.
  std::vector<std::uint64_t> dropped;
  {
    base::Guard g(mu_);
    for (StreamState* s : streams_) {
      if (ctx && s->ctx != ctx) continue;
      if (platform && s->ctx->platform != platform) continue;
      if (s->refs.load(std::memory_order_acquire) == 1) {
        dropped.push_back(s->id);
        continue;
      }
      const std::uint64_t target = s->submitted_seq.load(std::memory_order_acquire);
      const std::uint64_t releases = s->releases_pushed.load(std::memory_order_acquire);
      if (s->settled_seq.load(std::memory_order_acquire) >= target &&
          s->releases_finished.load(std::memory_order_acquire) >= releases) {
        continue;
      }
      s->add_ref();  // keep it alive while we watch it
      targets.push_back({s, target, releases});
    }
    // Those the retirement thread is destroying right now (out of streams_
    // already, their context perhaps not yet released): waited for too,
    // whatever their context (their ids are all there is; a destroy never
    // waits for the device).
    for (const Destroying& d : destroying_) dropped.push_back(d.id);
  }
  const auto gone = [&] { return dropped_streams_gone(ctx, platform, dropped); };
  // A target's reference is let go of as soon as it has settled: held on,
  // it would keep a release stream its context let go of meanwhile from
  // being destroyed, which gone() waits for. (Under settled_mu_, which is
  // taken before mu_, as gone() does: the release may wake this thread.)
  const auto settled = [](Target& t) {
    if (t.s == nullptr) return true;
    if (t.s->settled_seq.load(std::memory_order_acquire) < t.submitted ||
        t.s->releases_finished.load(std::memory_order_acquire) < t.releases) {
      return false;
    }
    std::exchange(t.s, nullptr)->release();
    return true;
  };
  const bool ok = (targets.empty() && dropped.empty()) || wait_until(deadline, [&] {
                    bool all = true;
                    for (Target& t : targets) all &= settled(t);
                    return all && gone();  // a release stream may be let go of while we wait
                  });
  for (const Target& t : targets) {
    if (t.s) t.s->release();
  }
  return ok;
}

bool Retirement::wait_sweep(Clock::time_point deadline) {
  if (on_retirement_thread()) return false;
  // The sweep under way may have passed a stream already: two ends.
  const std::uint64_t target = sweeps_.load(std::memory_order_acquire) + 2;
  return wait_until(deadline, [&] { return sweeps_.load(std::memory_order_acquire) >= target; });
}

void Retirement::wait_settled_to(const StreamState& s, std::uint64_t seq) {
  const auto done = [&] { return s.settled_seq.load(std::memory_order_acquire) >= seq; };
  if (done() || on_retirement_thread()) return;
  // In slices, to notice the process exiting (retirement stops sweeping then).
  while (!process_is_exiting() && !wait_until(Clock::now() + std::chrono::milliseconds(100), done)) {
  }
}

bool Retirement::wait_submission(const Submission& sub, Clock::time_point deadline) {
  auto done = [&] { return sub.state.load(std::memory_order_acquire) != SubmissionState::pending; };
  if (done()) return true;
  if (on_retirement_thread()) return false;
  return wait_until(deadline, done);
}

}  // namespace tandem::detail
