// SPDX-License-Identifier: Apache-2.0
// context_state.hpp — what a Context shares with everything made in it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "allocation_bin.hpp"
#include "allocation_state.hpp"
#include "platform_state.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/spin_lock.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/context.hpp"
#include "tandem/errors.hpp"
#include "tandem/multi_stream_release.hpp"

namespace tandem::detail {

struct StreamAnchor;
struct StreamState;
struct Submission;

// A counter many threads bump: sharded so they do not share a cache line.
class ShardedCounter {
 public:
  void add(std::uint64_t n = 1) noexcept;
  [[nodiscard]] std::uint64_t sum() const noexcept;

 private:
  struct alignas(64) Shard {
    std::atomic<std::uint64_t> v{0};
  };
  std::array<Shard, 16> shards_;
};

struct ContextState {
  static ContextState* create(PlatformState& platform, int ordinal, driver::ContextHandle borrowed,
                              std::shared_ptr<void> keep_alive, ConflictPolicy policy);

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  // The release stream (below) holds a reference of its own weight, and the
  // context holds the stream: when only the stream's is left, nothing can
  // make a new one (no handle, stream, allocation or submission is left),
  // so the context lets go of the stream, whose destruction by retirement
  // then releases the context. The weight, not a look at `release_stream`
  // after the decrement, tells that the stream's is the one left: once
  // decremented, the object may already be gone unless it is.
  static constexpr std::uint32_t kReleaseStreamRef = std::uint32_t{1} << 30;
  void release() noexcept {
    const std::uint32_t before = refs.fetch_sub(1, std::memory_order_acq_rel);
    if (before == 1) {
      delete this;
    } else if (before == kReleaseStreamRef + 1) [[unlikely]] {
      let_go_of_release_stream();
    }
  }
  // The release stream's own reference (StreamState, `internal`).
  void add_release_stream_ref() noexcept { refs.fetch_add(kReleaseStreamRef, std::memory_order_relaxed); }
  void release_release_stream_ref() noexcept {
    if (refs.fetch_sub(kReleaseStreamRef, std::memory_order_acq_rel) == kReleaseStreamRef) delete this;
  }

  driver::Backend& backend() const noexcept { return *backend_; }
  // The resolved device function for `symbol` in this context (cached).
  driver::FunctionHandle function(const driver::KernelSymbol& symbol);
  // Returns runtime-pool memory to the driver after the GPU is proven done
  // with it, never waiting for the device: on the stream it was allocated on
  // while that stream exists (the pool reuses it there at once, with no
  // dependency on another stream), else on the internal free stream; and
  // there too when `birth_proven` (work after the allocation is proven
  // done) and the birth stream's lock is taken.
  void free_memory(driver::DevicePtr ptr, StreamAnchor* birth, std::uint64_t birth_seq,
                   bool birth_proven = false) noexcept;
  // The context's release stream (multi_stream_release.hpp), made now if
  // the context releases that way and has none yet; null when it does not,
  // or when the driver refused the stream (drops then release host-proven,
  // and the next allocation tries again). Sync; the first allocation's
  // thread makes it (a driver stream and its StreamState).
  StreamState* ensure_release_stream() noexcept;
  // Enqueues the frees waiting in every stream's release inbox now
  // (allocation under pressure, Context::trim). Takes each stream's lock.
  void flush_releases() noexcept;
  // Allocation under pressure: queues a marker after the untracked work
  // (frees, allocations) of each stream that nothing proves yet, so that
  // waiting for retirement waits for those frees to run. Returns whether
  // any of this context's work is in flight (worth waiting for).
  bool cover_untracked_work() noexcept;
  // Makes the internal free stream wait until the frees (and allocations)
  // enqueued on the context's streams so far are done (Context::trim).
  void order_free_stream_after_untracked_work();
  // Context::trim: synchronizes each stream that had a free enqueued since
  // the last trim (under its lock), so that the pool counts them returned.
  void synchronize_streams_that_freed();
  // Destroys what the context's streams keep idle for reuse: submission
  // records and completion events a burst left behind (Context::trim).
  void release_idle_stream_resources() noexcept;
  // Throws Error(code) with the driver's description appended.
  [[noreturn]] void fail(const driver::Result& r, ErrorCode code, const std::string& what) const;
  void check(const driver::Result& r, const std::string& what) const {
    if (!r.ok()) fail(r, ErrorCode::driver, what);
  }

  void add_stream(StreamState* s);
  // The anchors of the streams alive now, one reference each for the caller.
  std::vector<StreamAnchor*> stream_anchors();
  void remove_stream(StreamState* s);
  void keep_quarantined(Submission* s);
  // Peer access (Context::enable_peer_access): contexts by id, so neither
  // keeps the other alive and a dead one never matches a new one.
  void add_peer(std::uint64_t peer_id);
  [[nodiscard]] bool has_peer(std::uint64_t peer_id) const;
  RuntimeStats stats() const;

  // What every launch reads, in the first cache line and apart from
  // anything written after creation (the launch path's footprint is what a
  // tracked launch adds to the driver's: bench/README.md, "cache lines").
 private:
  driver::Backend* const backend_;       // platform->backend, one load closer
  std::atomic<void*>* const functions_;  // kFunctionSlots cells, owned

 public:
  const driver::ContextHandle handle;
  const ConflictPolicy policy;
  // Whether the backend reads LaunchRequest::accesses (the simulated
  // device checks them; the CUDA driver does not), so launches skip
  // building them for a backend that ignores them.
  const bool backend_reads_accesses;
  bool share_events = true;  // ContextOptions::share_completion_events; set once, like retire_latency
  std::chrono::nanoseconds out_of_memory_wait{0};  // ContextOptions::out_of_memory_wait; set once
  std::uint32_t max_queued = 0;  // ContextOptions::max_queued_per_stream, resolved (0: no bound); set once
  // ContextOptions::multi_stream_release, resolved; set once.
  MultiStreamRelease multi_stream_release = MultiStreamRelease::host_proven;
  // Set once before the context is shared (Context::create); see
  // ContextOptions::measure_retirement_latency.
  std::unique_ptr<LatencyHistogram> retire_latency;
  // Created with ContextOptions::record_to: the destructor leaves the
  // recording (recording.hpp). Set once, like retire_latency.
  bool records = false;
  PlatformState* const platform;  // strong reference
  const std::uint64_t id;
  const int ordinal;
  const bool owned;

  alignas(64) std::atomic<std::uint32_t> refs{1};
  driver::PoolHandle pool;
  // Internal: frees of allocations whose birth stream is gone, behind waits
  // that Context::trim adds for the frees enqueued on the other streams.
  driver::StreamHandle free_stream;
  // Internal (release_stream mode): frees of memory leased on several of
  // this context's streams, each behind waits on the lease streams'
  // covering events (stream_state.hpp, "Releases"). Made lazily by
  // ensure_release_stream; holds a reference on the context, and the
  // context one on it (let go in release()). Never a user's stream.
  std::atomic<StreamState*> release_stream{nullptr};
  std::shared_ptr<void> keep_alive;

  // Spare blocks for this context's allocation records (allocation_bin.hpp).
  AllocationBin<sizeof(AllocationState)> allocation_bin;
  // Released on the device (free enqueued), not proven executed yet: live,
  // but no longer held from the device (stats.hpp).
  std::atomic<std::uint64_t> released_unproven_bytes{0};
  std::atomic<std::uint64_t> released_unproven_allocations{0};
  std::atomic<std::uint64_t> awaiting_release_allocations{0};
  std::atomic<std::uint64_t> awaiting_release_bytes{0};
  std::atomic<std::uint64_t> stream_ordered_releases{0};
  std::atomic<std::uint64_t> host_proven_releases{0};
  std::atomic<std::uint64_t> pressure_retries{0};
  std::atomic<std::uint64_t> pressure_recoveries{0};
  // Bytes of live allocations not released on the device: what keeps memory
  // from the device. Live bytes are held_bytes + released_unproven_bytes
  // (stats()); one count of its own so that its peak is one value, never
  // two counts read at two moments (AllocationState::move_release moves it).
  std::atomic<std::uint64_t> held_bytes{0};
  std::atomic<std::uint64_t> held_bytes_peak{0};
  // held_bytes += b, raising held_bytes_peak to the sum. Inline, the peak
  // only read when not raised (every allocation).
  void hold_bytes(std::uint64_t b) noexcept {
    const std::uint64_t held = held_bytes.fetch_add(b, std::memory_order_relaxed) + b;
    if (held > held_bytes_peak.load(std::memory_order_relaxed)) note_held_bytes(held);
  }
  void unhold_bytes(std::uint64_t b) noexcept { held_bytes.fetch_sub(b, std::memory_order_relaxed); }
  // Raises held_bytes_peak to `held`.
  void note_held_bytes(std::uint64_t held) noexcept;
  std::atomic<std::uint64_t> quarantined_allocations{0};
  std::atomic<std::uint64_t> quarantined_bytes{0};
  std::atomic<std::uint64_t> foreign_unreleased{0};
  std::atomic<std::uint64_t> quarantined_leases{0};  // held forever
  // Live allocations are allocations_total - frees_total -
  // quarantined_allocations: one counter step per allocation and per free.
  std::atomic<std::uint64_t> allocations_total{0};
  std::atomic<std::uint64_t> frees_total{0};
  ShardedCounter uniqueness_checks;
  ShardedCounter same_stream_reuses;  // on the allocating threads: sharded

 private:
  ContextState(PlatformState& platform, int ordinal, std::uint64_t id, bool owned, ConflictPolicy policy,
               driver::ContextHandle handle);
  ~ContextState();
  [[gnu::cold, gnu::noinline]] void let_go_of_release_stream() noexcept;

  static constexpr std::size_t kFunctionSlots = 4096;
  mutable base::Mutex mu_;
  // Serializes ensure_release_stream's creation (not mu_: creating the
  // stream registers it under mu_).
  base::Mutex release_stream_mu_;
  std::vector<StreamState*> streams_ TANDEM_GUARDED_BY(mu_);
  std::vector<Submission*> quarantine_ TANDEM_GUARDED_BY(mu_);  // retained forever
  std::vector<std::uint64_t> peers_ TANDEM_GUARDED_BY(mu_);     // context ids with peer access
  std::uint64_t retired_by_gone_streams_ TANDEM_GUARDED_BY(mu_) = 0;
  std::uint64_t submitted_by_gone_streams_ TANDEM_GUARDED_BY(mu_) = 0;
  std::uint64_t shared_by_gone_streams_ TANDEM_GUARDED_BY(mu_) = 0;
  std::uint64_t queue_waits_by_gone_streams_ TANDEM_GUARDED_BY(mu_) = 0;
  std::uint64_t tail_markers_by_gone_streams_ TANDEM_GUARDED_BY(mu_) = 0;
};

}  // namespace tandem::detail
