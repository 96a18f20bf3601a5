// SPDX-License-Identifier: Apache-2.0
// program_generator.hpp — random valid scenario programs and the model that
// keeps them valid (tests/scenario/program_fuzz_test.cpp runs them).
//
// The generator tracks what the contract implies: views per allocation and
// graph references (uniqueness), each view's elements in its allocation and
// the leases that may still be held (the reject policy), the device of each
// allocation (two devices). A step whose outcome the model says must fail
// carries expect_error.
//
// The steps' bodies: program_generator.cpp (the programs, the step mix, the
// model's queries), program_generator_views.cpp (allocations, views,
// conversions, drops, borrowed streams) and program_generator_launches.cpp
// (launches, copies, graphs).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "scenario/program_model.hpp"

namespace tandem::scenario::test {

// Uniqueness in the model: alloc, slice, split, peel, as_buffer and
// tensor_view add a view, to_tensor and into_buffer move one, drop removes
// one; a capture adds a graph reference, which a dropped graph gives back
// once retirement is waited for.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(std::uint64_t seed) : rng_(seed), seed_(seed) {}

  // One thread: `steps` random steps, then the shadow contents of every
  // live handle.
  json make(int steps);

  // One thread, two simulated devices with peer access: two streams each;
  // launches on each device's own views, copies between the devices.
  json make_two_devices(int steps);

  // One thread, and the sim reports completion_unknown for one launch that
  // kept its future: exactly the allocations that launch used are
  // quarantined (runtime.md §6), everything else is freed, and retirement
  // still settles. The work itself ran, so the shadow contents hold.
  json make_quarantine(int steps);

  // One thread, and the sim fails one driver allocation (an alloc step
  // among the first dozen): that step must fail with out_of_memory and the
  // rest run as if it had never been asked (shadow contents, no leak).
  json make_oom(int steps) {
    oom_at_ = 1 + below(12);
    json sc = make(steps);
    if (oom_nth_ != 0) sc["sim"]["faults"] = json::array({{{"kind", "alloc_fail"}, {"nth", oom_nth_}}});
    return sc;
  }

  // One thread under the reject policy: the program waits for retirement
  // before any submission that could conflict with work in flight, so
  // only the one deliberate conflict may be rejected: no false conflict
  // (disjoint slices, reads, one stream, retired leases), shadow contents.
  json make_reject(int steps) {
    reject_ = true;
    return make(steps);
  }

  // Two or three threads of `steps` steps each, over their own handles and
  // launching also on buffers and a tensor the main steps made (shared,
  // never viewed, converted or dropped by a thread, so every step stays
  // valid whatever the interleaving). Threads and streams cross freely:
  // the order policy must keep the sim free of violations.
  json make_threaded(int steps);

 private:
  template <class T>
  T pick(std::initializer_list<T> options) {
    return *(options.begin() + static_cast<std::ptrdiff_t>(rng_() % options.size()));
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  json header();
  std::string fresh() { return named('h'); }
  static std::string named_thread(std::size_t t) {
    std::string name = "w";  // not "w" + to_string: g++ 12 -O3 warns (-Wrestrict) on that inlined
    name += std::to_string(t);
    return name;
  }
  std::string named(char prefix) {
    std::string name(1, prefix);
    name += std::to_string(next_name_++);
    return name;
  }
  std::string stream() { return streams_[below(streams_.size())]; }
  int device_of_stream(const std::string& s) const {
    return stream_device_[static_cast<std::size_t>(std::find(streams_.begin(), streams_.end(), s) -
                                                   streams_.begin())];
  }
  int device_of(const Handle& h) const { return alloc_device_[h.alloc]; }
  // A stream of `device`, other than `not_this` where the device has another.
  std::string stream_on(int device, const std::string& not_this = {});
  bool unique(std::size_t alloc) const { return views_[alloc] == 1 && graph_refs_[alloc] == 0; }

  // Launch operands may be shared handles; views, conversions, drops and
  // checks (`owned_only`) touch only the current thread's own.
  std::vector<std::size_t> live_of(bool tensor, bool owned_only = false) const;
  std::vector<std::size_t> owned() const;
  // `count` live handles of one kind with equal element counts (tensors:
  // equal shapes), each on a different allocation, on `device` (< 0: any
  // device, for copies); empty if there are none.
  std::vector<std::size_t> matching(bool tensor, std::size_t count, int device = -1);

  json shadow_check(const Handle& h) const {
    return {{"op", "check"}, {"what", "contents"}, {"of", h.name}, {"equals", "shadow"}};
  }

  // Could `acc` on stream `s` conflict with a lease that may still be held?
  // (runtime.md §4: overlapping, another stream, a write among the two.)
  bool conflicts(const std::vector<Access>& acc, const std::string& s) const;

  // Emits a submission. Under the reject policy a submission that could
  // conflict with work not yet proven retired is preceded by `wait all`, so
  // no step of a generated program is rejected unless it says so. The model
  // forgets a lease only where retirement is certain (wait all, retire);
  // kept longer, it only adds waits.
  void submit(json& body, json step, const std::string& s, const std::vector<Access>& acc);
  void settled(json& body) {
    body.push_back({{"op", "wait"}, {"all", true}});
    pending_.clear();
  }

  void step(json& body);

  // Under reject, once per program, after a wait for everything: work held
  // in flight for 300 ms on one stream and, right after it on another
  // stream, a use of the same memory that must be rejected with `conflict`
  // and change nothing, or a read beside a read that must not be
  // (runtime.md §3, §4). The pair is one of: a write of a buffer and a fill
  // of it; a write and a read of only its last element (a lease must cover
  // it); a write through an atomic view and a plain read (atomic accesses
  // count as writes); a write of one half of a buffer and of the other (no
  // conflict), then of the first; a read through a peel and a read of its
  // buffer (a peel of a plain view shares reads), then a write of the peel.
  void rejected(json& body);

  // A buffer of `want` elements (0: a random length) on `device` (< 0: a
  // random stream's).
  void alloc(json& body);
  Handle alloc_buffer(json& body, std::uint32_t want = 0, int device = -1);

  // Two devices: a copy from a buffer of one device into one of the other
  // (made if there is none of that length), on a stream of either side.
  void cross_copy(json& body);

  void slice(json& body);

  // A launch of a kernel outside the catalog, as a recording writes it:
  // 1-3 buffers of distinct allocations, each read, written, read-written
  // or atomically updated (leased as a write). No body: the shadow model
  // sees no effect, the leases are the point.
  void declared(json& body);

  // In a loop body (`loop_stream`) only the launch itself, on that stream,
  // appended to `loop_acc` for the loop to submit: no future kept and no
  // allocation made instead, so the model does not change.
  void simt(json& body, const std::string* loop_stream = nullptr, std::vector<Access>* loop_acc = nullptr);

  // split consumes its source and yields two disjoint views (one more view
  // in all); peel adds a one-element view.
  void split_or_peel(json& body);

  // A counted sub-view of a tensor: its top-left quarter, strided unless it
  // is a single row.
  void sub_tensor(json& body);

  // A kept launch future is waited for, dropped or forgotten: none of it
  // changes the submission's leases.
  void future(json& body);

  // Launches repeated by a loop, on one stream (under reject, launches of
  // two streams could conflict with each other's earlier rounds):
  // handle-neutral, so the model is unchanged.
  void loop(json& body);

  // A Tile launch on a random live tensor; the other operands are live
  // tensors of the shape the kernel needs on other allocations, or made
  // for it (a fresh buffer turned into a tensor).
  void tile(json& body);

  Handle make_tensor(json& body, std::uint32_t rows, std::uint32_t cols, int device);

  // A buffer becomes a tensor (moving its view) when the allocation is
  // unique; otherwise the step must fail with `aliased` and leave it usable.
  void to_tensor(json& body);

  // A tensor goes back into a buffer (unique) or lends a borrowed buffer view.
  void from_tensor(json& body);

  void transfer(json& body);

  void drop(json& body);

  // Capture a scale of a buffer, replay it, or drop a graph. A dropped graph
  // releases its references only when its replays retire (runtime.md §8),
  // so the program waits for retirement before the model forgets them.
  void graph(json& body);

  // Interop (runtime.md §2): a driver stream made outside the runtime is
  // borrowed and joins the streams every later step picks from, or one is
  // dropped (its work may be in flight: its leases must still be honoured,
  // and the runtime must leave the driver stream alive for the run to
  // destroy); or a borrowed context gets a borrowed stream and a buffer of
  // its own, the context and stream dropped with work in flight. Not in
  // threaded programs (another thread may be using the stream), on two
  // devices, or before an oom program's failing allocation.
  void borrowed(json& body);
  void borrowed_context(json& body);

  void wait(json& body);

  // Threads check uniqueness only: the shadow model needs one program order.
  void check(json& body);

  std::mt19937_64 rng_;
  std::uint64_t seed_;
  std::vector<std::string> streams_{"s0", "s1", "s2"};
  std::vector<int> stream_device_{0, 0, 0};
  std::vector<int> alloc_device_;  // per allocation
  std::vector<Handle> live_;
  std::vector<int> views_;       // per allocation
  std::vector<int> graph_refs_;  // per allocation
  std::vector<Graph> graphs_;
  std::vector<std::string> borrowed_;  // borrowed streams not yet dropped (also in streams_)
  std::vector<std::string> futures_;   // kept launch futures not yet waited, dropped or forgotten
  std::map<std::string, std::vector<std::size_t>> launch_allocs_;  // launches with an id: their allocations
  std::size_t oom_at_ = 0;           // make_oom: which plain alloc step fails (1-based; 0: none)
  std::size_t plain_allocs_ = 0;     // alloc steps asked for so far
  std::uint64_t driver_allocs_ = 0;  // driver allocations the program has made so far
  std::uint64_t oom_nth_ = 0;        // the failing one's number, for the sim's alloc_fail
  bool threaded_ = false;
  bool reject_ = false;                                  // the reject policy (make_reject)
  bool two_devices_ = false;                             // make_two_devices
  bool rejected_ = false;                                // the one deliberate conflict is made
  std::vector<std::pair<Access, std::string>> pending_;  // leases that may still be held, and their streams
  int next_name_ = 0;
};

}  // namespace tandem::scenario::test
