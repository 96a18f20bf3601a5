// SPDX-License-Identifier: Apache-2.0
// retire_profile.hpp — TANDEM_RETIRE_PROFILE=1 (a diagnostic, off by
// default): where the retirement thread's time goes, and the submit path's
// rare stalls that feed back into it (event creation, pool allocation),
// counted in process-wide atomics and printed to stderr at exit as one line
// `tandem-retire-profile {json}`. Found the 8-thread collapse of issue 21
// (docs/runtime.md, "Retirement under sustained load"). Off, each probe is
// one predictable branch on a constant, none of them on the launch path.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tandem::detail {

struct RetireProfile {
  struct Total {
    std::atomic<std::uint64_t> count{0}, ns{0}, max_ns{0};
    // When the longest ended (now_ns()): a stall at the process's start
    // (the pool's first growth, a stream's first events) reads apart from
    // one under load.
    std::atomic<std::uint64_t> max_at_ns{0};
    void add(std::uint64_t ns_taken) noexcept;
  };
  static const bool on;
  // Retirement thread: whole sweeps, event queries, settling (leases,
  // records, and what it frees), host-proven frees (lock waits included),
  // stream locks it waited for, markers it queued, releases it drained;
  // how far past its asked time each timed nap woke (a virtual machine's
  // timer may oversleep far past a 1 ms gap), and the longest from one
  // sweep's end to the next's start.
  Total sweep, query, settle, host_free, stream_lock, marker, drain, nap_over, between;
  // Sweeps made by waiters in the thread's place (Retirement::help).
  Total help;
  // Any thread: events made on the submit path, pool allocations,
  // stream-ordered releases drained by submitters and allocators.
  Total event_create, alloc, submitter_drain;
  static std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }
  // The profile's start (its first use: the process's first timed part),
  // from which print() counts each longest's max_at_ms.
  const std::uint64_t start_ns = now_ns();
  void print() const noexcept;
};

RetireProfile& retire_profile() noexcept;

// Times a scope into retire_profile().*total when the profile is on. Named
// by member, so that off it costs the one branch on `on`, not a call to
// retire_profile() as well (two on every allocate + free).
class ProfileScope {
 public:
  explicit ProfileScope(RetireProfile::Total RetireProfile::*total) noexcept
      : total_(RetireProfile::on ? &(retire_profile().*total) : nullptr),
        t0_(total_ ? RetireProfile::now_ns() : 0) {}
  ~ProfileScope() {
    if (total_) total_->add(RetireProfile::now_ns() - t0_);
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  RetireProfile::Total* total_;
  std::uint64_t t0_;
};

}  // namespace tandem::detail
