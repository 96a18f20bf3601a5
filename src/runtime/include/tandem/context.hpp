// SPDX-License-Identifier: Apache-2.0
// tandem/context.hpp — one device's driver context, owned or borrowed.
//
//   tandem::Context ctx = tandem::Context::create(platform.device(0));
//   tandem::Context mine = tandem::Context::borrow(dev, foreign_ctx, keep_alive);
//
// Owned: retains the device's primary context and releases it when the last
// user (handle, stream, allocation, submission) is gone. Borrowed: wraps a
// context made by someone else and never releases it; `keep_alive` is held
// until then. Streams, allocations, submissions and graphs keep their
// Context alive. Copying a Context shares it.
//
// The context's conflict policy decides what happens when a submission's
// access conflicts with a lease held on another stream (spec/runtime.md §4):
// `order` makes the new work wait on the device, `reject` throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tandem/base/conflict_policy.hpp"  // ConflictPolicy, conflict_policy_name, parse_conflict_policy
#include "tandem/detail/ref.hpp"
#include "tandem/device.hpp"
#include "tandem/driver/types.hpp"
#include "tandem/latency_histogram.hpp"
#include "tandem/multi_stream_release.hpp"
#include "tandem/stats.hpp"

namespace tandem {

namespace detail {
struct ContextState;
void ref_add(ContextState* p) noexcept;
void ref_release(ContextState* p) noexcept;
}  // namespace detail

struct ContextOptions {
  ConflictPolicy conflict_policy = ConflictPolicy::order;
  // Timestamp every submission and record, at its retirement, how long it
  // took from the submit call to the release of its leases (kernel time
  // included) in retire_latency(). Costs a clock read per submission: the
  // invariant time-stamp counter where the CPU has one (about 9 ns in a
  // VM, against 30 for steady_clock), converted to ns at retirement.
  bool measure_retirement_latency = false;
  // Submissions that follow each other closely on one stream share a
  // completion event: while the stream has work pending, only every 32nd
  // submission records one (the first on an idle stream always does; with
  // no free event at hand, none until retirement hands one back, rather
  // than stall making one),
  // and retirement records one after the last when the stream has been
  // quiet for 50 µs (at once for a waiter). Stream order makes a later
  // event's completion prove the earlier work done, so nothing is released
  // early; what changes is that an error (unknown completion) is attributed
  // to every submission the failing event covers, not only to the one that
  // caused it, and they are all quarantined. On by default: an event record
  // costs 7-11 % of a launch on the H200. Off: one event per submission,
  // exact attribution (Stream::isolate_next_submission gives that to one
  // submission with sharing on).
  bool share_completion_events = true;
  // Allocation under pressure (spec/runtime.md §6): an allocation the
  // driver refuses for want of memory first enqueues every pending release,
  // retires what is proven, trims the pool and retries; if that fails too
  // and tandem's own work in flight holds memory, it waits up to this long
  // for that work to retire and tries once more. Zero: no waiting (the
  // steps that need none still run). An injected failure (a sim fault) is
  // never retried.
  std::chrono::nanoseconds out_of_memory_wait = std::chrono::seconds(10);
  // How the last view's drop releases a pool allocation that submissions on
  // several of this context's streams still lease (multi_stream_release.hpp;
  // docs/runtime.md, "Several streams"). Unset: the environment's
  // TANDEM_MULTI_STREAM_RELEASE ("host_proven" or "release_stream"; any
  // other value makes Context::create throw Error(unsupported)), else
  // host_proven. release_stream creates one internal stream in the context,
  // at its first allocation. TANDEM_HOST_PROVEN_RELEASE=1 overrides both.
  std::optional<MultiStreamRelease> multi_stream_release = std::nullopt;
  // How far the device may run behind one stream (docs/runtime.md, "The
  // bound on the device's queue"). A submission (launch, copy, graph
  // replay) on a stream whose submissions the device has not completed
  // number more than this waits, in the submitting call and holding no
  // lock, until no more than three quarters of it remain: work and the
  // memory it leases are then held for less time behind a queue the device
  // works through no faster. The driver's own queue (about 1,024 launches
  // a stream) blocks a launch the same way, later. The check costs a
  // relaxed load per submission and an event query per this many. 0: no
  // bound but the driver's. Unset: the environment's TANDEM_MAX_QUEUED (a
  // whole number; anything else makes Context::create throw
  // Error(unsupported)), else 256. At most 2^20.
  std::optional<std::uint32_t> max_queued_per_stream = std::nullopt;
  // Non-empty: the process records its runtime calls into this file as a
  // tandem.scenario/1 scenario, as TANDEM_RECORD=FILE does (docs/runtime.md
  // "Recording"). Recording is process-wide: every context's calls from
  // then on are recorded, not only this one's. One recording at a time:
  // contexts (or TANDEM_RECORD) naming the same file share it; a context
  // naming another file while one is being recorded makes Context::create
  // throw Error(unsupported) naming both files. The file is written when the
  // last context that asked for it is destroyed (after every handle, stream,
  // allocation and submission of it is gone), or at process exit if one
  // never is; under TANDEM_RECORD, at exit only. A context asking again
  // after that starts a new recording of the same file.
  std::string record_to = {};
};

class Context {
 public:
  // Sync. Throws Error(driver) if the driver refuses the context,
  // Error(unsupported) if options.multi_stream_release is unset and
  // TANDEM_MULTI_STREAM_RELEASE holds no mode's name, or if
  // options.record_to names a file other than the one being recorded.
  static Context create(const Device& device, const ContextOptions& options = {});
  // Sync. `handle` must be a live context of `device`; it is never released.
  static Context borrow(const Device& device, driver::ContextHandle handle,
                        std::shared_ptr<void> keep_alive = {}, const ContextOptions& options = {});

  [[nodiscard]] Device device() const;
  [[nodiscard]] std::uint64_t id() const noexcept;
  [[nodiscard]] bool owned() const noexcept;
  [[nodiscard]] ConflictPolicy conflict_policy() const noexcept;
  // The mode in force (ContextOptions::multi_stream_release, resolved).
  [[nodiscard]] MultiStreamRelease multi_stream_release() const noexcept;
  // The bound in force (ContextOptions::max_queued_per_stream, resolved; 0: none).
  [[nodiscard]] std::uint32_t max_queued_per_stream() const noexcept;
  [[nodiscard]] driver::ContextHandle native() const noexcept;

  // Lock-free reads of the context's counters (a consistent-enough snapshot:
  // each counter is exact, the set is not taken atomically).
  [[nodiscard]] RuntimeStats stats() const;
  // Sync: the driver's free/total figure for this context's device.
  [[nodiscard]] MemoryInfo memory_info() const;
  // Sync: waits for the runtime's own frees to reach the device, then returns
  // the pool's cached memory to it. Use before a device free-memory baseline.
  // Also destroys what each stream keeps idle for reuse: completion events
  // and submission records a burst left behind (thousands, after a deep
  // queue). Later launches make them again as they need them, and making an
  // event can wait for the driver while other threads launch, so trim
  // between phases of work, not inside one.
  void trim() const;
  // Blocks until everything submitted on this context before the call has
  // retired or been quarantined (quarantined work never retires, so it counts
  // as settled), the memory dropped before it is freed (a release in stream
  // order is freed once its free is proven executed) or quarantined, and its
  // streams that no handle refers to are destroyed, or until `timeout`
  // passes: returns false then.
  bool wait_for_retirement(std::chrono::nanoseconds timeout) const;
  // Sync: loads `symbol`'s module and entry point into this context now
  // rather than at its first launch. On CUDA, modules and kernels load
  // lazily, and a load waits for the kernels already running on the device:
  // a first launch issued while a long kernel runs would block the caller
  // until that kernel ends. Load what must overlap running work first (the
  // scenario executor loads the whole catalog: kernels::load_catalog).
  // Throws Error(unsupported | driver) as a launch of it would.
  void load_kernel(const driver::KernelSymbol& symbol) const;
  // Submit-to-retirement latency of this context's submissions (not the
  // runtime's internal markers), or null unless the context was created with
  // measure_retirement_latency. Written by retirement; lock-free reads.
  [[nodiscard]] const LatencyHistogram* retire_latency() const noexcept;
  // Lock-free: starts RuntimeStats::held_bytes_peak again from the bytes
  // held now.
  void reset_held_bytes_peak() const noexcept;

  // --- several devices ------------------------------------------------------
  // Sync, blocking the caller for the driver calls only (no device work is
  // waited for); thread-safe; idempotent. Enables peer access between this
  // context and `peer`, a context of ANOTHER device of the same platform, in
  // both directions: each context's work may access the other's memory
  // (cuCtxEnablePeerAccess both ways) and each context's memory pool grants
  // the other device read-write access (cuMemPoolSetAccess: stream-ordered
  // pools are not covered by context peer access). From then on copy() may
  // take a view of one and a view of the other on a stream of either.
  // Work already submitted is unaffected. Retains nothing.
  // Throws Error(device_mismatch) when both are on the same device or on
  // different platforms, Error(unsupported) when the driver says the devices
  // cannot access each other (or lacks the entry points), Error(driver) on a
  // driver failure; each names both contexts' ids and device ordinals. A
  // failure part-way leaves peer access recorded as disabled (copies keep
  // failing with device_mismatch) even if the driver enabled one direction.
  void enable_peer_access(const Context& peer) const;
  // Lock-protected read: whether enable_peer_access(peer) (from either side)
  // has succeeded.
  [[nodiscard]] bool peer_access_enabled(const Context& peer) const;

  explicit Context(detail::Ref<detail::ContextState> s) noexcept : s_(std::move(s)) {}
  [[nodiscard]] detail::ContextState* state() const noexcept { return s_.get(); }
  friend bool operator==(const Context& a, const Context& b) noexcept { return a.s_ == b.s_; }

 private:
  detail::Ref<detail::ContextState> s_;
};

}  // namespace tandem
