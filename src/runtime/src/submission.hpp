// SPDX-License-Identifier: Apache-2.0
// submission.hpp — one unit of GPU work on one stream and the leases it
// holds until the runtime has proven it complete (spec/runtime.md §2, §4, §6).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "allocation_state.hpp"
#include "tandem/base/tick_clock.hpp"
#include "tandem/detail/small_vector.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::detail {

struct StreamState;
struct Submission;

// One declared access, held until its submission retires. Lives inside its
// Submission; the allocation's tracker points at it. 32 bytes, so that a
// record keeps three inline in two cache lines (below): the range's start
// and end are 48 bits each, their words' spare bits hold the counts and the
// mode.
struct Lease {
  // Ranges are below 2^48 bytes (256 TiB): allocate() and adopt() refuse
  // larger allocations, and every lease lies within one.
  static constexpr std::uint64_t kMaxBytes = (std::uint64_t{1} << 48) - 1;
  // The most counts one lease holds (compact() in submit.cpp hands no more
  // on to it; the tracker keeps another entry instead).
  static constexpr std::uint32_t kMaxCounts = 0xffff;

  Lease(AllocationState* a, Submission* o, std::uint64_t offset, std::uint64_t bytes, driver::AccessMode mode,
        std::uint32_t counts) noexcept
      : alloc(a),
        owner(o),
        offset_counts_(offset | std::uint64_t{counts} << 48),
        end_mode_((offset + bytes) | std::uint64_t{static_cast<std::uint8_t>(mode)} << 48) {}

  AllocationState* alloc = nullptr;
  Submission* owner = nullptr;

  // Bytes from the allocation's start.
  [[nodiscard]] std::uint64_t offset() const noexcept {
    return word().load(std::memory_order_relaxed) & kMaxBytes;
  }
  [[nodiscard]] std::uint64_t end() const noexcept { return end_mode_ & kMaxBytes; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return end() - offset(); }
  [[nodiscard]] driver::AccessMode mode() const noexcept {
    return static_cast<driver::AccessMode>(end_mode_ >> 48);
  }
  // Its mode includes every access `o`'s does (write covers read).
  [[nodiscard]] bool mode_covers(const Lease& o) const noexcept {
    return ((o.end_mode_ & ~end_mode_) >> 48) == 0;
  }
  // Lease counts of the allocation this lease holds (AllocationState's
  // counter word). A lease displaced from the tracker by a newer one of its
  // stream hands its counts to the lease being published, so a hot buffer's
  // launches neither add nor drop counts one by one (each would move the
  // allocation's cache line between the submitting and retiring threads);
  // the newest lease drops them all when it retires. Changed under the
  // tracker lock.
  [[nodiscard]] std::uint32_t counts() const noexcept {
    return static_cast<std::uint32_t>(word().load(std::memory_order_relaxed) >> 48);
  }
  // In its allocation's tracker: exactly while it holds counts (it has them
  // from when it is published until it is taken out or displaced). Read
  // without the lock by retirement, which skips a lease a newer one already
  // displaced.
  [[nodiscard]] bool is_tracked() const noexcept {
    return (word().load(std::memory_order_acquire) >> 48) != 0;
  }
  // The counts, leaving none (no longer tracked), if they are at most
  // `at_most`; else none are taken (0) and it keeps them. Under the tracker
  // lock.
  std::uint32_t take_counts(std::uint32_t at_most = kMaxCounts) noexcept {
    const std::uint64_t w = word().load(std::memory_order_relaxed);
    const auto c = static_cast<std::uint32_t>(w >> 48);
    if (c > at_most) return 0;
    word().store(w & kMaxBytes, std::memory_order_release);
    return c;
  }

 private:
  // Retirement reads it without the lock while a submitter's compact() may
  // take its counts: every access after the constructor's is atomic (a
  // plain load or store on x86).
  [[nodiscard]] std::atomic_ref<std::uint64_t> word() const noexcept {
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(offset_counts_));
  }

  std::uint64_t offset_counts_ = 0;  // offset | counts << 48
  std::uint64_t end_mode_ = 0;       // offset + bytes | mode << 48; written once, before it is published
};

static_assert(sizeof(Lease) == 32);

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
// Three lines (static_assert below): the first what every submission writes,
// the other two its leases, three inline, none across a line. 192 bytes take
// a 208-byte heap chunk, within the 256 bytes per in-flight submission that
// bench/README.md ("Measured memory") judges; a fourth line would not be.
struct alignas(64) Submission {
  // One reference for the stream's pending queue, one per launch future.
  // Recycled by its stream when only the queue's reference is left at
  // retirement; otherwise deleted by the last future.
  std::atomic<std::uint32_t> refs{1};
  std::atomic<SubmissionState> state{SubmissionState::pending};
  std::atomic<SubmissionPhase> phase{SubmissionPhase::publishing};
  SubmissionKind kind = SubmissionKind::kernel;
  // The submission shares the next event recorded on its stream after it (a
  // later submission's or an ordering marker's), which stream order makes
  // prove it done too, and has no `event` of its own
  // (ContextOptions::share_completion_events).
  bool covered = false;
  std::uint64_t id = 0;           // process-unique
  std::uint64_t seq = 0;          // position on its stream
  StreamState* stream = nullptr;  // valid while pending
  std::uint64_t stream_id = 0;
  // Completion. None if recording it failed (completion unknown), or when
  // `covered`.
  driver::EventHandle event;
  // Recorded before the work by the first submission after new allocations
  // on its stream: what another stream's first use of them waits for
  // (stream_state.hpp). Part of this submission: if its completion is
  // unknown, so is the submission's.
  driver::EventHandle birth_mark;
  // stamp_clock() ticks at submit when the context measures retirement
  // latency (ContextOptions::measure_retirement_latency), else 0.
  std::uint64_t submitted_ticks = 0;
  // The stream's pending queue. Left intact when retirement unlinks and
  // gives the record back, for a walk of the queue that started before.
  Submission* next = nullptr;
  // Host memory a transfer reads or writes, held until it retires. One word
  // here, the shared_ptr in a block of its own: only uploads and downloads
  // hold any, and they copy their bytes into a new block anyway.
  std::unique_ptr<std::shared_ptr<void>> keep_alive;
  SmallVector<Lease, 3> leases;

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  [[nodiscard]] bool user_visible() const noexcept { return kind != SubmissionKind::marker; }
  // Its own event can be queried or waited on (not covered, recorded).
  [[nodiscard]] bool evented() const noexcept { return !covered && static_cast<bool>(event); }
  // The clock of submitted_ticks: process-wide, so that its ns-per-tick
  // factor is measured over the process's life, not a new context's first
  // microseconds.
  [[nodiscard]] static const base::TickClock& stamp_clock() noexcept {
    static const base::TickClock clock;
    return clock;
  }
  [[nodiscard]] static std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }
};

static_assert(sizeof(Submission) == std::size_t{3} * 64);

}  // namespace tandem::detail
