// stream_state.hpp — an in-order queue on one context, and its pending
// submissions in submission order (spec/runtime.md §2, §6).
//
// References: one per user Stream handle, one held by the retirement
// service. When only the retirement service's is left and nothing is
// pending, retirement destroys the stream — so a stream dropped with work
// pending still retires that work, and the dropping thread never waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "submission.hpp"
#include "tandem/detail/locks.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::detail {

struct ContextState;
struct CaptureBuild;

struct StreamState {
  // Registers the stream with the retirement service (which takes the
  // first reference) and returns it with one more reference for the caller.
  static StreamState* create(ContextState& ctx, driver::StreamHandle handle, bool owned);

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept;
  // Retirement only: true once no user handle is left and nothing pends.
  [[nodiscard]] bool abandoned() const noexcept {
    return refs.load(std::memory_order_acquire) == 1 &&
           pending.load(std::memory_order_acquire) == 0;
  }
  // Retirement only: destroys the driver stream (if owned) and this object.
  void destroy() noexcept;

  // Recycled events and submission records (submit path, under `mu`).
  driver::EventHandle take_event() TANDEM_REQUIRES(mu);
  Submission* take_submission() TANDEM_REQUIRES(mu);
  void recycle(Submission* s) noexcept TANDEM_REQUIRES(mu);

  const std::uint64_t id;
  ContextState* const ctx;  // strong reference
  const driver::StreamHandle handle;
  const bool owned;

  // Held across enqueue + event record + queue push, so the queue's order is
  // the order of the events on the device stream.
  SpinLock mu;
  Submission* head TANDEM_GUARDED_BY(mu) = nullptr;  // oldest pending
  Submission* tail TANDEM_GUARDED_BY(mu) = nullptr;  // newest pending
  std::uint64_t next_seq TANDEM_GUARDED_BY(mu) = 1;
  bool capturing TANDEM_GUARDED_BY(mu) = false;
  std::unique_ptr<CaptureBuild> capture TANDEM_GUARDED_BY(mu);  // while capturing
  std::vector<driver::EventHandle> free_events TANDEM_GUARDED_BY(mu);
  Submission* free_submissions TANDEM_GUARDED_BY(mu) = nullptr;
  std::uint32_t free_submission_count TANDEM_GUARDED_BY(mu) = 0;

  // Read without the lock by retirement, stats and waiters.
  std::atomic<std::uint32_t> refs{1};
  std::atomic<std::uint32_t> pending{0};         // queue length (births included)
  std::atomic<std::uint64_t> submitted_seq{0};   // seq of the newest queued
  std::atomic<std::uint64_t> settled_seq{0};     // everything <= this settled
  std::atomic<std::uint64_t> user_submitted{0};  // kernel/copy/transfer/replay
  std::atomic<std::uint64_t> user_settled{0};
  std::atomic<std::uint64_t> leases_held{0};
  std::atomic<std::uint64_t> retired{0};
  std::atomic<std::uint64_t> quarantined{0};

 private:
  StreamState(std::uint64_t id, ContextState& ctx, driver::StreamHandle handle, bool owned);
};


}  // namespace tandem::detail
