// SPDX-License-Identifier: Apache-2.0
#include "allocation_state.hpp"

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "context_state.hpp"
#include "ids.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/detail/trace.hpp"
#include "tandem/errors.hpp"
#include "tuning.hpp"

namespace tandem::detail {

std::uint64_t next_id(IdKind kind) noexcept {
  static std::atomic<std::uint64_t> counters[5] = {1, 1, 1, 1, 1};
  // Every launch and every allocation takes one: a block per thread keeps
  // threads that submit or allocate on their own streams off one shared
  // cache line, and spares all but one in kBlock of them a locked
  // read-modify-write (about 20 cycles even uncontended). Ids stay unique
  // and increase along each thread's submissions and allocations; across
  // threads they are in no time order, and nothing asks them to be (an
  // allocation id only names it and orders tracker locks, docs/runtime.md).
  if (kind == IdKind::submission || kind == IdKind::allocation) {
    constexpr std::uint64_t kBlock = 256;
    thread_local std::uint64_t next[2] = {}, end[2] = {};
    const int k = kind == IdKind::allocation ? 1 : 0;
    if (next[k] == end[k]) {
      next[k] = counters[static_cast<int>(kind)].fetch_add(kBlock, std::memory_order_relaxed);
      end[k] = next[k] + kBlock;
    }
    return next[k]++;
  }
  return counters[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
}

// Records live in ::operator new blocks (allocation_bin.hpp).
static_assert(alignof(AllocationState) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

AllocationState::AllocationState(std::uint64_t id_, ContextState& ctx_, driver::DevicePtr base_,
                                 std::uint64_t bytes_, Origin origin_, std::function<void()> owner,
                                 StreamAnchor* birth_, std::uint64_t birth_seq_) noexcept
    : id(id_),
      ctx(&ctx_),
      birth(birth_),
      origin(origin_),
      base(base_),
      bytes(bytes_),
      birth_seq(birth_seq_),
      counts_(kView),
      owner_(std::move(owner)) {
  if (birth) birth->add_ref();
  if (!context_kept_by_birth()) ctx_.add_ref();
  if (origin == Origin::foreign) ctx_.foreign_unreleased.fetch_add(1, std::memory_order_relaxed);
  if (!holds_memory()) return;
  ctx_.hold_bytes(bytes);
  ctx_.allocations_total.fetch_add(1, std::memory_order_release);
}

namespace {

// The spare block: each thread keeps one block of a record it destroyed
// (when it keeps none yet), for the next record it makes, of whichever
// context (every record's block is ::operator new(sizeof(AllocationState)),
// and the bins take any). At most one block a thread, freed when the
// thread exits. An allocation made and dropped on one thread with nothing
// in flight then takes no bin lock and gives none back: two locked
// read-modify-writes fewer. Off with the bins (AllocationBin::on). Both
// variables are trivially destructible, so a record destroyed late in the
// thread's exit (a thread_local view, after the reaper ran) still finds
// them: `t_spare_reaped` sends its block to the bin.
thread_local void* t_spare = nullptr;
thread_local bool t_spare_reaped = false;
struct SpareReaper {
  SpareReaper() = default;
  SpareReaper(const SpareReaper&) = delete;
  SpareReaper& operator=(const SpareReaper&) = delete;
  ~SpareReaper() {
    ::operator delete(std::exchange(t_spare, nullptr));
    t_spare_reaped = true;
  }
};
thread_local SpareReaper t_reaper;  // its destructor registered at the first spare kept

void* take_block(ContextState& ctx) {
  if (void* b = t_spare) {
    t_spare = nullptr;
    return b;
  }
  return ctx.allocation_bin.take();
}

void give_block(ContextState& ctx, void* block) noexcept {
  if (t_spare == nullptr && !t_spare_reaped && ctx.allocation_bin.on()) {
    (void)&t_reaper;  // the first use registers its destructor
    t_spare = block;
    return;
  }
  ctx.allocation_bin.give(block);
}

}  // namespace

AllocationState* AllocationState::create(ContextState& ctx, driver::DevicePtr base, std::uint64_t bytes,
                                         Origin origin, std::function<void()> owner) {
  // In the thread's spare block or one from the context's bin
  // (allocation_bin.hpp); nothing can throw after take_block().
  return new (take_block(ctx))
      AllocationState(next_id(IdKind::allocation), ctx, base, bytes, origin, std::move(owner), nullptr, 0);
}

AllocationState* AllocationState::create_born(ContextState& ctx, driver::DevicePtr base, std::uint64_t bytes,
                                              StreamAnchor& birth, std::uint64_t birth_seq) {
  return new (take_block(ctx))
      AllocationState(next_id(IdKind::allocation), ctx, base, bytes, Origin::runtime, {}, &birth, birth_seq);
}

void AllocationState::add(std::uint64_t unit, std::uint64_t field_max, int shift, const char* what) {
  const std::uint64_t before = counts_.fetch_add(unit, std::memory_order_relaxed);
  if (((before >> shift) & field_max) == field_max) {
    counts_.fetch_sub(unit, std::memory_order_relaxed);
    throw Error(ErrorCode::unsupported, "allocation " + std::to_string(id) + " already has " +
                                            std::to_string(field_max) + " " + what +
                                            ", the most one allocation can hold");
  }
}

void AllocationState::add_view() { add(kView, kMaxViews, 0, "views"); }
void AllocationState::add_graph() { add(kGraph, kMaxGraphs, 24, "graph references"); }
void AllocationState::add_leases(std::uint32_t n) {
  const std::uint64_t before = counts_.fetch_add(kLease * n, std::memory_order_relaxed);
  if ((before >> 40) + n > kMaxLeases) {
    counts_.fetch_sub(kLease * n, std::memory_order_relaxed);
    throw Error(ErrorCode::unsupported, "allocation " + std::to_string(id) +
                                            " already has the most leases one allocation can hold (" +
                                            std::to_string(kMaxLeases) + ")");
  }
}

void AllocationState::mark_quarantined() noexcept {
  if (quarantined_.exchange(true, std::memory_order_acq_rel)) return;
  if (!holds_memory()) return;
  // Awaiting or released, it is neither any more: retained forever.
  (void)move_release(Release::settled, Release::settled);
  ctx->quarantined_allocations.fetch_add(1, std::memory_order_release);
  ctx->quarantined_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

bool AllocationState::move_release(Release from, Release to) noexcept {
  Release was = from;
  if (from == Release::settled) {
    was = release_.exchange(to, std::memory_order_acq_rel);
  } else if (!release_.compare_exchange_strong(was, to, std::memory_order_acq_rel)) {
    return false;
  }
  count_release_move(was, to);
  return true;
}

bool AllocationState::context_kept_by_birth() const noexcept { return birth != nullptr && birth->ctx == ctx; }

void AllocationState::count_release_move(Release was, Release to) noexcept {
  ContextState& c = *ctx;
  const auto count = [&](Release r, std::int64_t sign) {
    const std::uint64_t n = static_cast<std::uint64_t>(sign), b = static_cast<std::uint64_t>(sign) * bytes;
    if (r == Release::awaiting) {
      c.awaiting_release_allocations.fetch_add(n, std::memory_order_relaxed);
      c.awaiting_release_bytes.fetch_add(b, std::memory_order_relaxed);
    } else if (r == Release::released) {
      c.released_unproven_allocations.fetch_add(n, std::memory_order_relaxed);
      c.released_unproven_bytes.fetch_add(b, std::memory_order_relaxed);
    }
  };
  // What keeps memory from the device (ContextState::held_bytes): released
  // memory no longer does, nor settled memory (freed or quarantined). Live
  // bytes are held plus released ones: each step takes off before it adds,
  // so a reader never sees a byte counted twice.
  const bool lets_go = to == Release::released || (to == Release::settled && was != Release::released &&
                                                   was != Release::settled && holds_memory());
  if (lets_go) c.unhold_bytes(bytes);
  count(was, -1);
  count(to, +1);
  if (was == Release::released && to == Release::awaiting) c.hold_bytes(bytes);
}

// Runs on the thread that drops the last view while submissions still
// lease the allocation. The view becomes a count of the release's own in
// the lease field (views 1 -> 0, leases + 1, one atomic step): a lease that
// retires meanwhile cannot bring the word to zero and free the memory a
// second time. When every lease is on one stream of this context, the free
// goes onto that stream behind them (StreamState::push_release: its next
// submitter, allocator or the retirement thread enqueues it); when they are
// on several streams of this context and it has a release stream
// (MultiStreamRelease::release_stream), onto that one, whose drain orders
// it after each lease stream's work. The memory is then reusable in stream
// order before the host has proven anything. Either way the drop makes no
// driver call.
void AllocationState::release_in_stream_order() noexcept {
  counts_.fetch_add(kLease - kView, std::memory_order_acq_rel);
  (void)move_release(Release::none, Release::awaiting);
  if (base::mutant(base::Mutant::release_unordered)) {         // freed now, on the free stream, unordered
    (void)move_release(Release::awaiting, Release::released);  // last_use_gone frees no more
    ctx->free_memory(base, nullptr, 0, false);
    drop(kLease);
    return;
  }
  if (!host_proven_release_forced() && !Retirement::process_is_exiting()) {
    base::Guard g(tracker_lock);
    // A tracked lease's owner is pending, so its stream exists, or
    // quarantined, its stream cleared (retirement.cpp, quarantine); no new
    // lease can appear (no view is left).
    StreamState* target = nullptr;
    bool one_stream = !quarantined();
    bool this_context = one_stream;  // every lease on a live stream of this context
    for (const Lease* l : leases) {
      StreamState* st = l->owner->stream;
      if (st == nullptr || st->ctx != ctx) this_context = false;
      if (st == nullptr || (target && st != target)) one_stream = false;
      target = st;
    }
    if (target && one_stream && target->ctx == ctx && target->push_release(this)) return;
    if (target && !one_stream && this_context) {
      // Null unless the context releases this way (and could make the stream).
      StreamState* r = ctx->release_stream.load(std::memory_order_acquire);
      if (r && r->push_release(this)) return;
    }
  }
  // Nothing leased any more (it retired meanwhile), leases on several
  // streams (host_proven mode) or on another context's stream: the free
  // waits for host proof that the work is done, as for graph-held and
  // foreign memory (docs/runtime.md, "Release in stream order").
  drop(kLease);
}

bool AllocationState::begin_device_release() noexcept {
  return !quarantined() && move_release(Release::awaiting, Release::released);
}

void AllocationState::abandon_device_release() noexcept {
  (void)move_release(Release::released, Release::awaiting);
  drop(kLease);
}

void AllocationState::finish_device_release(bool executed) noexcept {
  if (!executed) {
    mark_quarantined();  // the release's count stays: retained forever
    return;
  }
  ctx->stream_ordered_releases.fetch_add(1, std::memory_order_relaxed);
  drop(kLease);
}

// Every view, lease and graph reference is gone: the memory is no longer
// used by anyone, host or device. Runs on whichever thread got here.
void AllocationState::last_use_gone() noexcept {
  TANDEM_TRACE("last use gone: alloc %lu (%s)", id, quarantined() ? "quarantined" : "freed");
  // A quarantined lease may have handed its counts on to a newer lease of
  // its stream (submit.cpp), which then retired: retained forever all the
  // same.
  if (quarantined()) return;
  ContextState* c = ctx;
  StreamAnchor* const b = birth;
  const bool context_ref = !context_kept_by_birth();
  // Only a holder of a count moves the release state (a release holds one
  // of its own in the lease field, and a quarantined lease marks before its
  // count is dropped), and every count is gone: nothing moves it any more,
  // and the drop that brought the word to zero (acq_rel) saw every move.
  // So no exchange, a locked instruction on every free, is needed here.
  const Release release = release_.load(std::memory_order_relaxed);
  if (release == Release::awaiting) c->host_proven_releases.fetch_add(1, std::memory_order_relaxed);
  release_.store(Release::settled, std::memory_order_relaxed);
  count_release_move(release, Release::settled);
  switch (origin) {
    case Origin::runtime:
      // Released: its free ran on the device, proven (finish_device_release).
      // Here on the retirement thread, the last lease's work is proven
      // done, and with it the allocation (ContextState::free_memory).
      if (release != Release::released) {
        c->free_memory(base, birth, birth_seq, Retirement::instance().on_retirement_thread());
      }
      break;
    case Origin::foreign:
      if (owner_) {
        try {
          owner_();
        } catch (...) {
          // An owner that throws must not take the runtime down; the memory
          // is still counted as released because it is no longer ours.
        }
        owner_ = nullptr;
      }
      owner_released_.store(true, std::memory_order_release);
      c->foreign_unreleased.fetch_sub(1, std::memory_order_relaxed);
      break;
    case Origin::empty:
      break;
  }
  if (holds_memory()) c->frees_total.fetch_add(1, std::memory_order_release);
  freed_.store(true, std::memory_order_release);
  // No view is left, so no observer can appear any more: without one, no
  // other thread can reach this record.
  if (record_refs_.load(std::memory_order_acquire) == 1) {
    this->~AllocationState();
    give_block(*c, this);  // the context lives until its reference goes below
  } else {
    release_record_ref();
  }
  // The anchor last: it may hold the context's reference.
  if (b) b->release();
  if (context_ref) c->release();
}

void AllocationState::release_record_ref() noexcept {
  if (record_refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace tandem::detail
