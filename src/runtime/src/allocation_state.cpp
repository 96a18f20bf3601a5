#include "allocation_state.hpp"

#include <exception>
#include <string>

#include "context_state.hpp"
#include "ids.hpp"
#include "tandem/errors.hpp"

namespace tandem::detail {

std::uint64_t next_id(IdKind kind) noexcept {
  static std::atomic<std::uint64_t> counters[5] = {1, 1, 1, 1, 1};
  return counters[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
}

AllocationState::AllocationState(std::uint64_t id_, ContextState& ctx_, driver::DevicePtr base_,
                                 std::uint64_t bytes_, Origin origin_, std::function<void()> owner)
    : id(id_), ctx(&ctx_), base(base_), bytes(bytes_), origin(origin_), counts_(kView),
      owner_(std::move(owner)) {
  ctx_.add_ref();
  if (origin == Origin::empty) return;
  ctx_.live_allocations.fetch_add(1, std::memory_order_relaxed);
  ctx_.live_bytes.fetch_add(bytes, std::memory_order_relaxed);
  ctx_.allocations_total.fetch_add(1, std::memory_order_relaxed);
  if (origin == Origin::foreign) ctx_.foreign_unreleased.fetch_add(1, std::memory_order_relaxed);
}

AllocationState* AllocationState::create(ContextState& ctx, driver::DevicePtr base,
                                         std::uint64_t bytes, Origin origin,
                                         std::function<void()> owner) {
  return new AllocationState(next_id(IdKind::allocation), ctx, base, bytes, origin,
                             std::move(owner));
}

void AllocationState::add(std::uint64_t unit, std::uint64_t field_max, int shift,
                          const char* what) {
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
  if (origin == Origin::empty) return;
  ctx->live_allocations.fetch_sub(1, std::memory_order_relaxed);
  ctx->live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  ctx->quarantined_allocations.fetch_add(1, std::memory_order_relaxed);
  ctx->quarantined_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

// Every view, lease and graph reference is gone: the memory is no longer
// used by anyone, host or device. Runs on whichever thread got here.
void AllocationState::last_use_gone() noexcept {
  ContextState* c = ctx;
  switch (origin) {
    case Origin::runtime:
      c->free_memory(base, bytes);
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
  if (origin != Origin::empty) {
    c->live_allocations.fetch_sub(1, std::memory_order_relaxed);
    c->live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    c->frees_total.fetch_add(1, std::memory_order_relaxed);
  }
  freed_.store(true, std::memory_order_release);
  release_record_ref();
  c->release();
}

void AllocationState::release_record_ref() noexcept {
  if (record_refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace tandem::detail
