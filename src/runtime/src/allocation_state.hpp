// SPDX-License-Identifier: Apache-2.0
// allocation_state.hpp — one device byte range, its identity, its counters
// and its lease tracker (spec/runtime.md §2, §4, §5).
//
// Three counters, packed into ONE atomic word:
//   bits  0..23  views   — user-visible handles (buffers, slices, tensors...)
//   bits 24..39  graphs  — graphs that captured work touching it
//   bits 40..63  leases  — accesses of submissions not yet proven complete
// is_unique() reads views and graphs from one load; retirement only ever
// changes the lease field. So no interleaving with retirement can make a
// unique allocation look aliased or the reverse (the upstream bug was one
// shared count doing two jobs). Whoever moves the word to zero frees, and
// because it is one word that decision is a single atomic step: never both,
// never neither.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "tandem/base/guard.hpp"
#include "tandem/base/mutant.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/spin_lock.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/detail/small_vector.hpp"
#include "tandem/detail/trace.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::detail {

struct ContextState;
struct Lease;
struct StreamAnchor;

enum class Origin : std::uint8_t {
  runtime,  // from the context's stream-ordered pool
  foreign,  // made elsewhere, adopted with an owner object
  empty,    // zero bytes: no driver allocation, no driver free, ever
};

// What every launch reads (the id it sorts by, the context it checks, the
// birth stream, the lease tracker and its lock) comes first, within 64
// bytes: on the GPU the launch path pays for the lines it fetches after the
// driver's work evicted them (bench/README.md). Not cache-line aligned: on
// the H200 that measured no faster and cost 48 bytes per allocation.
class AllocationState {
 public:
  static constexpr std::uint64_t kView = 1;
  static constexpr std::uint64_t kGraph = std::uint64_t{1} << 24;
  static constexpr std::uint64_t kLease = std::uint64_t{1} << 40;
  static constexpr std::uint64_t kMaxViews = (std::uint64_t{1} << 24) - 1;
  static constexpr std::uint64_t kMaxGraphs = (std::uint64_t{1} << 16) - 1;
  static constexpr std::uint64_t kMaxLeases = (std::uint64_t{1} << 24) - 1;

  // A new allocation with one view (the caller's) and no leases. Takes a
  // reference on `ctx`. `owner` (foreign only) is run exactly once, after
  // the memory is no longer used.
  static AllocationState* create(ContextState& ctx, driver::DevicePtr base, std::uint64_t bytes,
                                 Origin origin, std::function<void()> owner = {});
  // A runtime allocation enqueued on the stream of `birth` (a reference is
  // taken, which keeps `ctx`) before that stream's submission numbered
  // `birth_seq`.
  static AllocationState* create_born(ContextState& ctx, driver::DevicePtr base, std::uint64_t bytes,
                                      StreamAnchor& birth, std::uint64_t birth_seq);

  // --- counters (all lock-free) ----------------------------------------------
  // The caller must already hold a view, lease or graph reference (counts
  // never rise from zero). Throw Error(unsupported) on counter overflow.
  void add_view();
  void add_graph();
  void add_leases(std::uint32_t n);
  // May free the memory / release the owner on the calling thread; never
  // call with a runtime lock held. The last view of a pool allocation that
  // work still leases is released in stream order (release_in_stream_order).
  void drop_view() noexcept {
    const std::uint64_t w = counts_.load(std::memory_order_acquire);
    if (w == kView) {
      // The dropping view is the only count left, of any kind: every count
      // is added by a holder of one (so by this view's owner, who is
      // dropping it), and retirement only takes leases off, of which there
      // are none. Nothing can change the word any more, and the load saw
      // every drop before it (acquire): the fetch_sub, a locked
      // read-modify-write on every free of an allocation nothing uses,
      // would decide nothing. Zero still, for observers of the record.
      TANDEM_TRACE("drop alloc %lu: its last view", id);
      counts_.store(0, std::memory_order_relaxed);
      last_use_gone();
      return;
    }
    if (views_of(w) == 1 && graphs_of(w) == 0 && (w >> 40) != 0 && origin == Origin::runtime) {
      release_in_stream_order();
      return;
    }
    drop(kView);
  }
  void drop_graph() noexcept { drop(kGraph); }
  void drop_leases(std::uint32_t n) noexcept { drop(kLease * n); }

  [[nodiscard]] bool is_unique() const noexcept {
    const std::uint64_t w = counts_.load(std::memory_order_acquire);
    if (base::mutant(base::Mutant::lease_counted_as_view))
      return views_of(w) + (w >> 40) == 1 && graphs_of(w) == 0;
    if (base::mutant(base::Mutant::graph_refs_ignored)) return views_of(w) == 1;
    return views_of(w) == 1 && graphs_of(w) == 0;
  }
  [[nodiscard]] std::uint64_t views() const noexcept { return views_of(load()); }
  [[nodiscard]] std::uint64_t graphs() const noexcept { return graphs_of(load()); }
  [[nodiscard]] std::uint64_t leases_count() const noexcept { return load() >> 40; }

  // --- weak observers (a record outlives its memory while observed) ---------
  void add_record_ref() noexcept { record_refs_.fetch_add(1, std::memory_order_relaxed); }
  void release_record_ref() noexcept;

  // Retained forever: a submission touching it has unknown completion.
  void mark_quarantined() noexcept;

  // --- stream-ordered release (spec/runtime.md §6; stream_state.hpp) -------
  // Where the memory of a dropped allocation is: `awaiting` its free (work
  // in flight still uses it), `released` (the free is enqueued behind that
  // work, not yet proven executed). Each state is counted in the context.
  enum class Release : std::uint8_t { none, awaiting, released, settled };
  // The stream's drain (under its lock): the free is about to be enqueued.
  // False when the allocation was quarantined meanwhile (no free, ever).
  bool begin_device_release() noexcept;
  // The enqueue failed: the release waits for host proof after all.
  void abandon_device_release() noexcept;
  // Retirement, once the submission after the free settled: `executed`
  // when it completed (the free ran: the allocation is freed), else the
  // allocation is quarantined. Drops the release's count.
  void finish_device_release(bool executed) noexcept;

  [[nodiscard]] bool freed() const noexcept { return freed_.load(std::memory_order_acquire); }
  [[nodiscard]] bool quarantined() const noexcept { return quarantined_.load(std::memory_order_acquire); }
  [[nodiscard]] bool owner_released() const noexcept {
    return owner_released_.load(std::memory_order_acquire);
  }

  const std::uint64_t id;
  // Strong: a reference of its own, or its birth anchor's (StreamAnchor::ctx);
  // dropped after the memory is freed.
  ContextState* const ctx;
  // Stream-ordered births (runtime allocations): the stream the allocation
  // was enqueued on, and where (stream_state.hpp, "untracked work"). Work on
  // another stream is ordered after that point before its first use there;
  // the free goes back on that stream. Null for foreign and empty ones,
  // which are ready on every stream.
  StreamAnchor* const birth;
  // The lease tracker: leases of pending submissions on this allocation.
  SmallVector<Lease*, 2> leases TANDEM_GUARDED_BY(tracker_lock);
  base::SpinLock tracker_lock;
  const Origin origin;

  const driver::DevicePtr base;
  const std::uint64_t bytes;
  const std::uint64_t birth_seq;
  // Counted in the context's live/freed/quarantined allocations: it holds
  // device memory. An empty view holds none, whatever its origin: an adopted
  // zero-byte buffer still has its owner run and counted, but is not a live
  // allocation (scenario-format "live_allocations").
  bool holds_memory() const noexcept { return origin != Origin::empty && bytes != 0; }

 private:
  std::atomic<std::uint64_t> counts_;

 public:
  // The stream whose work was last made to wait for the birth: its later
  // work follows the wait in stream order, so it need not wait again.
  std::atomic<std::uint64_t> birth_waited_by{0};

 private:
  AllocationState(std::uint64_t id, ContextState& ctx, driver::DevicePtr base, std::uint64_t bytes,
                  Origin origin, std::function<void()> owner, StreamAnchor* birth,
                  std::uint64_t birth_seq) noexcept;
  ~AllocationState() = default;

  static std::uint64_t views_of(std::uint64_t w) noexcept { return w & kMaxViews; }
  static std::uint64_t graphs_of(std::uint64_t w) noexcept { return (w >> 24) & kMaxGraphs; }
  std::uint64_t load() const noexcept { return counts_.load(std::memory_order_acquire); }
  void add(std::uint64_t unit, std::uint64_t field_max, int shift, const char* what);
  void drop(std::uint64_t amount) noexcept {
    TANDEM_TRACE("drop alloc %lu: %lu views %lu graphs %lu leases", id, views_of(amount), graphs_of(amount),
                 (amount >> 40));
    if (counts_.fetch_sub(amount, std::memory_order_acq_rel) == amount) last_use_gone();
  }
  void last_use_gone() noexcept;
  // The dropping thread of the last view while leases remain (cold).
  [[gnu::cold, gnu::noinline]] void release_in_stream_order() noexcept;
  // Moves the release state from `from` (or any, when from == settled) to
  // `to`, adjusting the context's counters; false if it was not `from`.
  bool move_release(Release from, Release to) noexcept;
  // The context's counters for a move from `was` to `to`.
  void count_release_move(Release was, Release to) noexcept;
  // Born on a user stream of `ctx`: its birth anchor's reference keeps the
  // context (StreamAnchor::ctx), and the record holds none of its own.
  [[nodiscard]] bool context_kept_by_birth() const noexcept;

  std::atomic<std::uint32_t> record_refs_{1};  // 1 = "the memory is alive"
  std::atomic<bool> freed_{false};
  std::atomic<bool> quarantined_{false};
  std::atomic<bool> owner_released_{false};
  std::atomic<Release> release_{Release::none};
  std::function<void()> owner_;
};

// A weak handle on an allocation record: lets a caller ask "freed yet?" after
// every view is gone (the scenario executor's `check freed`).
class AllocationObserver {
 public:
  AllocationObserver() = default;
  explicit AllocationObserver(AllocationState* a) noexcept : a_(a) {
    if (a_) a_->add_record_ref();
  }
  AllocationObserver(const AllocationObserver& o) noexcept : AllocationObserver(o.a_) {}
  AllocationObserver& operator=(AllocationObserver o) noexcept {
    std::swap(a_, o.a_);
    return *this;
  }
  ~AllocationObserver() {
    if (a_) a_->release_record_ref();
  }
  [[nodiscard]] const AllocationState* get() const noexcept { return a_; }

 private:
  AllocationState* a_ = nullptr;
};

}  // namespace tandem::detail
