// submission.hpp — one unit of GPU work on one stream and the leases it
// holds until the runtime has proven it complete (spec/runtime.md §2, §4, §6).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "allocation_state.hpp"
#include "tandem/detail/small_vector.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::detail {

struct StreamState;
struct Submission;

// One declared access, held until its submission retires. Lives inside its
// Submission; the allocation's tracker points at it.
struct Lease {
  AllocationState* alloc = nullptr;
  std::uint64_t offset = 0;  // bytes from the allocation's start
  std::uint64_t bytes = 0;
  Submission* owner = nullptr;
  // Lease counts of the allocation this lease holds (AllocationState's
  // counter word). A lease displaced from the tracker by a newer one of its
  // stream hands its counts to the lease being published, so a hot buffer's
  // launches neither add nor drop counts one by one (each would move the
  // allocation's cache line between the submitting and retiring threads);
  // the newest lease drops them all when it retires. Under the tracker lock.
  std::uint32_t counts = 0;
  driver::AccessMode mode = driver::AccessMode::read;
  // In its allocation's tracker. Written under the tracker lock; read
  // without it (std::atomic_ref) by retirement, which skips a lease a newer
  // one already displaced (it holds no counts any more).
  bool tracked = false;

  [[nodiscard]] bool is_tracked() const noexcept {
    return std::atomic_ref<bool>(const_cast<bool&>(tracked)).load(std::memory_order_acquire);
  }
  void set_tracked(bool v) noexcept { std::atomic_ref<bool>(tracked).store(v, std::memory_order_release); }
};

// `marker`: internal, no work, no leases; its event proves done the
// allocations and frees enqueued on its stream before it (stream_state.hpp).
enum class SubmissionKind : std::uint8_t { kernel, copy, upload, download, memset, graph_replay, marker };
enum class SubmissionState : std::uint8_t { pending, retired, quarantined };
// Where the submit path is with it. Its leases are published in the
// trackers before the work is enqueued (so the trackers are not locked
// across the driver calls); until `enqueued` its event is not recorded yet,
// and a submitter on another stream that must wait for it spins until the
// phase leaves `publishing`. `failed`: the driver refused the work; its
// leases are being withdrawn and order nothing.
enum class SubmissionPhase : std::uint8_t { publishing, enqueued, failed };

[[nodiscard]] const char* submission_kind_name(SubmissionKind k) noexcept;

// Cache-line aligned: records are recycled between the submitting threads and
// retirement, and two records sharing a line would make each other miss.
struct alignas(64) Submission {
  // One reference for the stream's pending queue, one per launch future.
  // Recycled by its stream when only the queue's reference is left at
  // retirement; otherwise deleted by the last future.
  std::atomic<std::uint32_t> refs{1};
  std::atomic<SubmissionState> state{SubmissionState::pending};
  std::atomic<SubmissionPhase> phase{SubmissionPhase::publishing};
  SubmissionKind kind = SubmissionKind::kernel;
  std::uint64_t id = 0;   // process-unique
  std::uint64_t seq = 0;  // position on its stream
  StreamState* stream = nullptr;   // valid while pending
  std::uint64_t stream_id = 0;
  // Completion. None if recording it failed (completion unknown), or when
  // `covered`: the submission shares the next event recorded on its stream
  // after it (a later submission's or an ordering marker's), which stream
  // order makes prove it done too (ContextOptions::share_completion_events).
  driver::EventHandle event;
  bool covered = false;
  // Recorded before the work by the first submission after new allocations
  // on its stream: what another stream's first use of them waits for
  // (stream_state.hpp). Part of this submission: if its completion is
  // unknown, so is the submission's.
  driver::EventHandle birth_mark;
  // steady_clock ns at submit when the context measures retirement latency
  // (ContextOptions::measure_retirement_latency), else 0.
  std::uint64_t submitted_ns = 0;
  // The stream's pending queue. Left intact when retirement unlinks and
  // gives the record back, for a walk of the queue that started before.
  Submission* next = nullptr;
  SmallVector<Lease, 3> leases;
  std::shared_ptr<void> keep_alive;  // host memory a transfer reads or writes

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  [[nodiscard]] bool user_visible() const noexcept { return kind != SubmissionKind::marker; }
  // Its own event can be queried or waited on (not covered, recorded).
  [[nodiscard]] bool evented() const noexcept { return !covered && static_cast<bool>(event); }
  [[nodiscard]] static std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }
};

}  // namespace tandem::detail
