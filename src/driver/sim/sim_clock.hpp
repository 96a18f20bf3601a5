// SPDX-License-Identifier: Apache-2.0
// sim_clock.hpp — vector clocks of the simulated device (private to
// src/driver/sim): what each stream, and the host, has seen happen.
//
// The race check (sim_shadow.hpp) orders two accesses only through what the
// device and driver order: stream order, an event wait (the waiting stream
// joins the clock its record captured), and the host's observations — a
// stream synchronize or a stream query that finds it idle, an event
// synchronize or a query that finds it complete — after which every later
// submission, on any stream, carries the host's clock. All host threads
// share one component (kHostStream): the runtime orders its own threads by
// locks the sim cannot see, and over-ordering only hides races, never invents
// them. Timing never enters: two accesses that ran far apart in time are
// still unordered when nothing above orders them.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tandem/base/guard.hpp"
#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"

namespace tandem::driver::sim {

// One stream's n-th operation (ticks start at 1; 0 means "none").
struct Epoch {
  std::uint64_t stream = 0;
  std::uint64_t tick = 0;
  friend bool operator==(const Epoch&, const Epoch&) = default;
};

class VectorClock {
 public:
  [[nodiscard]] std::uint64_t at(std::uint64_t stream) const noexcept;
  // The next epoch of `stream`, now part of this clock.
  Epoch tick(std::uint64_t stream);
  // Componentwise maximum; returns whether anything grew.
  bool join(const VectorClock& other);
  // Everything `other` has seen, this clock has seen too.
  [[nodiscard]] bool covers_all(const VectorClock& other) const noexcept;
  // `e` happened before (or is) what this clock has seen.
  [[nodiscard]] bool covers(const Epoch& e) const noexcept { return e.tick <= at(e.stream); }

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ticks_;  // sorted by stream
};

using ClockSnapshot = std::shared_ptr<const VectorClock>;

// The host's clock. Snapshots are immutable, so a submission carries one by
// pointer and a stream worker joins it when it reaches that submission.
class HostClock {
 public:
  HostClock() : now_(std::make_shared<VectorClock>()) {}
  [[nodiscard]] ClockSnapshot snapshot() const TANDEM_EXCLUDES(mu_);
  // The host has observed everything `seen` covers.
  void join(const VectorClock& seen) TANDEM_EXCLUDES(mu_);
  // A host operation on device memory (mem_free): its own epoch and clock.
  VectorClock tick(Epoch& epoch) TANDEM_EXCLUDES(mu_);

 private:
  mutable base::Mutex mu_;
  ClockSnapshot now_ TANDEM_GUARDED_BY(mu_);
};

}  // namespace tandem::driver::sim
