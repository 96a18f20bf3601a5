// SPDX-License-Identifier: Apache-2.0
// handle_table.hpp — what a run's handle names hold, by slot, and the
// engine's own count of what holds each allocation (the uniqueness model).
//
// Locks: each slot has its own mutex; the model is split in shards by
// allocation id, each with its own mutex. No lock covers the whole table,
// so threads on different handles never meet. A step that changes what
// counts an allocation (a new view, a consumed one, a dropped handle) holds
// that allocation's shard while the runtime's count and the model change,
// so `check unique` compares like with like while other threads create and
// drop views. Order: slots (ascending), then one shard; the releasing list
// before any shard. A Handle is destroyed by its shared_ptr's deleter,
// which takes its allocation's shard: no code lets go of a handle while it
// holds a shard (victims are moved out and released after).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "handles.hpp"
#include "program.hpp"
#include "tandem/allocation_watch.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/errors.hpp"

namespace tandem::scenario::detail {

class Shadow;

// What a step calls the handle it looks up, for messages: "<a><b><c>"
// (built only when the look-up fails).
struct Role {
  const char* a;
  const char* b = "";
  const char* c = "";
};

class HandleTable {
 public:
  HandleTable(const std::vector<std::string>& names, Shadow* shadow);
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;
  ~HandleTable();

  [[nodiscard]] const std::string& name(Slot s) const noexcept { return slots_[s]->name; }

  // Looks: throw Error(invalid_handle) naming the handle when the slot is
  // empty or holds the wrong kind.
  [[nodiscard]] std::shared_ptr<Handle> find(Slot s);
  [[nodiscard]] std::shared_ptr<Handle> view(Slot s, Role role);
  [[nodiscard]] Stream stream(Slot s);
  [[nodiscard]] bool holds_stream(Slot s);
  [[nodiscard]] Context context(Slot s);      // "'x' is a ..., not a borrowed context"
  [[nodiscard]] LaunchFuture future(Slot s);  // "wait: 'x' is a ..., not a future"
  [[nodiscard]] std::shared_ptr<Handle> graph(Slot s);
  [[nodiscard]] std::optional<AllocationWatch> watch(Slot s);  // the last view named in it, if any
  void require_free(Slot s);

  // A step refused by a name (gone, never made, taken, of the wrong kind):
  // throws Error(code) and marks the calling thread's step as refused
  // before the runtime, for a recording (take_refusal, record_refused_use).
  [[noreturn]] static void refuse(ErrorCode code, std::string message);
  // Whether refuse() ran on this thread since the last clear_refusal().
  [[nodiscard]] static bool refused() noexcept;
  static void clear_refusal() noexcept;

  // Puts: the name must be free (another thread may have taken it meanwhile).
  // A new allocation's first view; returns its handle (the name may be
  // dropped by another thread the moment the lock is let go).
  std::shared_ptr<Handle> put_view(Slot s, View v);
  void put_future(Slot s, LaunchFuture f);
  void put_graph(Slot s, std::shared_ptr<GraphRecord> g);  // counts its references
  void put_stream(Slot s, Stream st);                      // a declared stream: replaces what the name held
  // A borrowed stream or context: the name must be free.
  void put_borrowed(Slot s, Stream st);
  void put_borrowed(Slot s, Context c);

  // A new view of `of`'s allocation, made by `make` under the locks.
  void derive(Slot id, Slot of, const std::function<View(const View&)>& make);
  // Consumes `from` into a new view in `id` (which may be `from`). `make`
  // gets the model's answer to "unique?" (and whether it knows) to compare.
  void convert(Slot id, Slot from, const std::function<View(View&&, bool known, bool unique)>& make);
  void split(Slot of, std::array<Slot, 2> ids, std::uint64_t at);

  // A replay of `g` is in flight (its references stay until it retires).
  void add_replay(GraphRecord& g, const LaunchFuture& f);

  // Removes the handle; `forget` leaks it until the run's end (a future's
  // submission record is leaked for good).
  void drop(Slot s, bool forget);
  // End of a repetition: every handle goes (graphs' references per replays).
  void clear();
  // After the report: the forgotten handles go.
  void release_forgotten();

  // `check unique`: the runtime's answer and the model's, compared.
  struct Uniqueness {
    bool actual = false, model = false, known = false;
  };
  [[nodiscard]] Uniqueness uniqueness(Slot s, Role role);

  // Bumped whenever a slot's handle is put, replaced or removed: a step
  // that saw the same epoch before sees the same handles in every slot.
  // Only a run without `threads` may rely on it between its own calls (no
  // other thread changes the table meanwhile).
  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_.load(std::memory_order_relaxed); }

  [[nodiscard]] std::uint64_t uniqueness_checks() const noexcept { return checks_.load(); }
  [[nodiscard]] std::uint64_t uniqueness_failures() const noexcept { return failures_.load(); }
  void compare(bool known, bool expected, bool actual) noexcept;

 private:
  struct SlotState {
    std::string name;  // set once
    base::Mutex mu;
    std::shared_ptr<Handle> handle TANDEM_GUARDED_BY(mu);
    std::optional<AllocationWatch> watch TANDEM_GUARDED_BY(mu);
  };
  struct Shard {
    base::Mutex mu;
    std::unordered_map<std::uint64_t, AllocationModel> model TANDEM_GUARDED_BY(mu);
  };
  // Dropped graphs with replays in flight: what the model still counts for
  // them. Never the Graph itself (the runtime must be free to destroy it).
  struct PendingRelease {
    std::vector<std::uint64_t> allocations;
    std::vector<LaunchFuture> replays;
  };
  class Locks;  // several slots, ascending

  Shard& shard(std::uint64_t allocation) noexcept { return shards_[allocation % shards_.size()]; }
  // Counts a view: its shard is held (a view of no allocation needs none).
  std::shared_ptr<Handle> wrap(std::unique_ptr<Handle> h) TANDEM_NO_THREAD_SAFETY_ANALYSIS;
  void destroy(Handle* h) noexcept;
  static std::shared_ptr<Handle> find_locked(SlotState& s) TANDEM_REQUIRES(s.mu);
  static std::shared_ptr<Handle> view_locked(SlotState& s, Role role) TANDEM_REQUIRES(s.mu);
  static void require_free_locked(SlotState& s) TANDEM_REQUIRES(s.mu);
  // Puts `h` under a name that must be free (put_borrowed).
  void put_in_free(Slot s, std::unique_ptr<Handle> h);
  // The slot and the view's shard are held.
  void insert_view_locked(SlotState& s, View v) TANDEM_REQUIRES(s.mu);
  void settle_graph_releases() TANDEM_EXCLUDES(releasing_mu_);
  static void drop_graph_ref(Shard& sh, std::uint64_t allocation) TANDEM_REQUIRES(sh.mu);
  void release_graph(const GraphRecord& r) TANDEM_EXCLUDES(releasing_mu_, replays_mu_);

  std::vector<std::unique_ptr<SlotState>> slots_;
  std::array<Shard, 64> shards_;
  Shadow* shadow_;  // single-thread runs only; null when off
  base::Mutex releasing_mu_;
  std::vector<PendingRelease> releasing_ TANDEM_GUARDED_BY(releasing_mu_);
  std::atomic<std::size_t> releasing_count_{0};  // releasing_.size(), read without the lock
  base::Mutex replays_mu_;                       // every GraphRecord's `replays`
  base::Mutex forgotten_mu_;
  // Never dropped during the run: they go after the report is written.
  std::vector<std::shared_ptr<Handle>> forgotten_ TANDEM_GUARDED_BY(forgotten_mu_);
  std::atomic<std::uint64_t> checks_{0}, failures_{0};
  std::atomic<std::uint64_t> epoch_{0};
  void bump_epoch() noexcept { epoch_.fetch_add(1, std::memory_order_relaxed); }
};

}  // namespace tandem::scenario::detail
