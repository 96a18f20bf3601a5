// submission.hpp — one unit of GPU work on one stream and the leases it
// holds until the runtime has proven it complete (spec/runtime.md §2, §4, §6).
#pragma once

#include <atomic>
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
  driver::AccessMode mode = driver::AccessMode::read;
  // Internal ordering lease (an allocation's stream-ordered birth): later
  // work on other streams is ordered after it, never rejected because of it.
  bool internal = false;
  Submission* owner = nullptr;
};

enum class SubmissionKind : std::uint8_t { kernel, copy, upload, download, memset, graph_replay, birth };
enum class SubmissionState : std::uint8_t { pending, retired, quarantined };

[[nodiscard]] const char* submission_kind_name(SubmissionKind k) noexcept;

struct Submission {
  // One reference for the stream's pending queue, one per launch future.
  // Recycled by its stream when only the queue's reference is left at
  // retirement; otherwise deleted by the last future.
  std::atomic<std::uint32_t> refs{1};
  std::atomic<SubmissionState> state{SubmissionState::pending};
  SubmissionKind kind = SubmissionKind::kernel;
  std::uint64_t id = 0;   // process-unique
  std::uint64_t seq = 0;  // position on its stream
  StreamState* stream = nullptr;   // valid while pending
  std::uint64_t stream_id = 0;
  driver::EventHandle event;       // completion; none if recording it failed
  Submission* next = nullptr;      // the stream's pending queue / free list
  SmallVector<Lease, 3> leases;
  std::shared_ptr<void> keep_alive;  // host memory a transfer reads or writes

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  [[nodiscard]] bool user_visible() const noexcept { return kind != SubmissionKind::birth; }
};

}  // namespace tandem::detail
