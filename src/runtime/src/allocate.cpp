// SPDX-License-Identifier: Apache-2.0
// allocate.cpp — stream-ordered allocation, and allocation under pressure
// (spec/runtime.md §6, "Allocation under pressure").
#include <limits>
#include <string>

#include "allocation_state.hpp"
#include "context_state.hpp"
#include "deadline.hpp"
#include "record_hook.hpp"
#include "retire_profile.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/errors.hpp"
#include "tandem/stream.hpp"
#include "tuning.hpp"
#include "view_factory.hpp"

namespace tandem {

namespace {

struct Placed {
  driver::DevicePtr ptr = 0;
  std::uint64_t birth_seq = 0;
};

// The context's release stream (MultiStreamRelease::release_stream): made
// at the first allocation, and the frees dropped onto it since enqueued
// now, before the pool is asked (a drop makes no driver call: the
// allocating thread and the retirement thread drain it). Outside `s`'s
// lock: that drain takes the allocations' tracker locks and the lease
// streams' locks (stream_state.hpp, lock order).
void drain_release_stream(detail::ContextState& ctx) {
  if (ctx.multi_stream_release != MultiStreamRelease::release_stream) return;
  detail::StreamState* r = ctx.ensure_release_stream();
  if (r == nullptr || !r->inbox_ready.load(std::memory_order_acquire)) return;
  const detail::ProfileScope timed(&detail::RetireProfile::submitter_drain);
  base::Guard g(r->mu);
  r->drain_releases(r->next_seq);
}

// One try: under the stream lock, so that exactly the submissions numbered
// birth_seq and later are enqueued after the allocation. The frees dropped
// behind this stream's work go first: the pool can then hand their memory
// to this allocation at once (stream order makes that safe).
driver::Result place(detail::StreamState& s, std::uint64_t bytes, Placed& out) {
  detail::ContextState& ctx = *s.ctx;
  drain_release_stream(ctx);
  base::Guard g(s.mu);
  if (s.capture) {
    throw Error(ErrorCode::unsupported, "allocate on stream " + std::to_string(s.id) +
                                            " while it captures a graph: allocate before capturing");
  }
  detail::StreamState::BlockWanted wanted;
  wanted.bytes = bytes;
  if (s.inbox_ready.load(std::memory_order_relaxed)) {
    const detail::ProfileScope timed(&detail::RetireProfile::submitter_drain);
    s.drain_releases(s.next_seq, detail::same_stream_reuse_on() ? &wanted : nullptr);
  }
  out.ptr = wanted.taken;
  driver::Result r = wanted.result;
  // An injected failure of the reuse is this allocation's (it counts as one).
  if (out.ptr == 0 && !r.injected) {
    const detail::ProfileScope timed(&detail::RetireProfile::alloc);
    r = ctx.backend().mem_alloc_async(ctx.handle, ctx.pool, bytes, s.handle, out.ptr);
  }
  if (r.ok()) {
    out.birth_seq = s.next_seq;
    s.untracked_seq = out.birth_seq;
    s.unmarked_count = s.unmarked_allocation ? s.unmarked_count + 1 : 1;
    s.unmarked_base = out.ptr;
    s.unmarked_bytes = bytes;
    s.unmarked_allocation = true;
  }
  return r;
}

bool refused_for_memory(const driver::Result& r) {
  return r.status == driver::Status::out_of_memory && !r.injected;
}

// The driver refused for want of memory. PyTorch's caching allocator does
// the same at out-of-memory: give back what can be given back, then retry;
// then wait (bounded) for tandem's work in flight and retry once more.
driver::Result place_under_pressure(detail::StreamState& s, std::uint64_t bytes, Placed& out) {
  detail::ContextState& ctx = *s.ctx;
  ctx.pressure_retries.fetch_add(1, std::memory_order_relaxed);
  const bool may_wait = ctx.out_of_memory_wait > std::chrono::nanoseconds::zero();
  const auto deadline = detail::deadline_after(ctx.out_of_memory_wait);
  detail::Retirement& retirement = detail::Retirement::instance();
  ctx.flush_releases();
  if (may_wait) (void)retirement.wait_sweep(deadline);  // what is proven now frees now
  (void)ctx.backend().pool_trim(ctx.handle, ctx.pool, 0);
  driver::Result r = place(s, bytes, out);
  // Frees enqueued but not run yet (the dropped memory's last work still
  // runs, or the stream has not reached them) and work in flight: wait for
  // them to be proven, then once more.
  if (refused_for_memory(r) && may_wait && ctx.cover_untracked_work()) {
    (void)retirement.wait_settled(&ctx, nullptr, deadline);
    ctx.flush_releases();
    (void)ctx.backend().pool_trim(ctx.handle, ctx.pool, 0);
    r = place(s, bytes, out);
  }
  if (r.ok()) ctx.pressure_recoveries.fetch_add(1, std::memory_order_relaxed);
  return r;
}

[[noreturn]] void fail_allocation(const detail::StreamState& s, const driver::Result& r, std::uint64_t bytes,
                                  std::uint64_t count, DType dtype) {
  detail::ContextState& ctx = *s.ctx;
  std::size_t free_bytes = 0, total = 0;
  (void)ctx.backend().mem_info(ctx.handle, free_bytes, total);
  std::string what = "allocating " + std::to_string(bytes) + " bytes (" + std::to_string(count) + " x " +
                     std::string(dtype_name(dtype)) + ") on stream " + std::to_string(s.id) + " of device " +
                     std::to_string(ctx.ordinal) + " (" + std::to_string(free_bytes) + " of " +
                     std::to_string(total) + " bytes free)";
  if (refused_for_memory(r)) {
    const RuntimeStats st = ctx.stats();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.out_of_memory_wait).count();
    what += ", after releasing, retiring, trimming and waiting up to " + std::to_string(ms) +
            " ms for work in flight; context " + std::to_string(ctx.id) + " holds " +
            std::to_string(st.live_allocations) + " live allocations (" + std::to_string(st.live_bytes) +
            " bytes), of which " + std::to_string(st.awaiting_release_bytes) +
            " bytes are dropped and held by work in flight and " +
            std::to_string(st.released_unproven_bytes) + " bytes are released but not yet proven freed; " +
            std::to_string(st.quarantined_bytes) + " bytes are quarantined; " +
            std::to_string(st.pending_submissions) + " submissions in flight";
  }
  ctx.fail(r, r.status == driver::Status::out_of_memory ? ErrorCode::out_of_memory : ErrorCode::driver, what);
}

}  // namespace

namespace {

View allocate_unrecorded(StreamRef stream, DType dtype, std::uint64_t count) {
  if (!stream.state()) throw Error(ErrorCode::invalid_handle, "allocate on an empty stream handle");
  detail::StreamState& s = *stream.state();
  detail::ContextState& ctx = *s.ctx;
  const std::uint32_t size = dtype_size(dtype);
  if (count > std::numeric_limits<std::uint64_t>::max() / size) {
    throw Error(ErrorCode::out_of_range, std::to_string(count) + " elements of " +
                                             std::string(dtype_name(dtype)) + " overflow 64 bits");
  }
  const std::uint64_t bytes = count * size;
  if (bytes > detail::Lease::kMaxBytes) {  // a lease's range is 48 bits (submission.hpp)
    throw Error(ErrorCode::out_of_range,
                std::to_string(bytes) + " bytes: tandem tracks allocations below 2^48 bytes");
  }
  if (bytes == 0) {
    if (s.capturing.load(std::memory_order_acquire)) {
      base::Guard g(s.mu);
      if (s.capture) {
        throw Error(ErrorCode::unsupported, "allocate on stream " + std::to_string(s.id) +
                                                " while it captures a graph: allocate before capturing");
      }
    }
    // No driver allocation, ever.
    return make_view(detail::AllocationState::create(ctx, 0, 0, detail::Origin::empty), dtype, 0, 0);
  }
  Placed placed;
  driver::Result r = place(s, bytes, placed);
  if (refused_for_memory(r)) r = place_under_pressure(s, bytes, placed);
  if (!r.ok()) fail_allocation(s, r, bytes, count, dtype);
  // No event and no submission: work on `s` is ordered after the allocation
  // by the stream; the first use on another stream waits for `s` to reach
  // it (submit.cpp), and the free goes back on `s`.
  detail::AllocationState* a;
  try {
    a = detail::AllocationState::create_born(ctx, placed.ptr, bytes, *s.anchor, placed.birth_seq);
  } catch (...) {
    ctx.free_memory(placed.ptr, s.anchor, placed.birth_seq);
    throw;
  }
  return make_view(a, dtype, 0, count);
}

}  // namespace

View allocate(StreamRef stream, DType dtype, std::uint64_t count) {
  Recorder* recorder = detail::active_recorder();
  if (recorder == nullptr) [[likely]]
    return allocate_unrecorded(stream, dtype, count);
  View v;
  try {
    v = allocate_unrecorded(stream, dtype, count);
  } catch (const Error& e) {
    if (stream.state()) recorder->on_allocate_failed(stream, dtype, count, e.code());
    throw;
  }
  recorder->on_view_derived(ViewOrigin::allocate, nullptr, v, DeriveArgs{.len = count}, &stream);
  return v;
}

}  // namespace tandem
