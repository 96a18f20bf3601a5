// SPDX-License-Identifier: Apache-2.0
// sim_executor.hpp — runs one operation on a stream worker (private to
// src/driver/sim): registers its accesses with the checker, translates device
// addresses to host bytes, does the work, and stays active for the stream
// delay. Stateless apart from references to the backend's shared parts, so
// every worker uses the same Executor concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "sim_checker.hpp"
#include "sim_clock.hpp"
#include "sim_events.hpp"
#include "sim_launch_frame.hpp"
#include "sim_memory.hpp"
#include "sim_ops.hpp"

namespace tandem::driver::sim {

class Executor {
 public:
  using Clock = std::chrono::steady_clock;

  Executor(Memory& memory, Checker& checker, Events& events, HostClock& host)
      : memory_(memory), checker_(checker), events_(events), host_(host) {}

  // Runs work and waits; a MarkerOp needs nothing here (Stream completes
  // it when it records the op as finished). `clock` is the stream's: work
  // ticks it, a wait joins the awaited record's.
  void run(Op& op, std::uint64_t stream, VectorClock& clock);

  // Frees the block based at `ptr` on behalf of `label` (a stream's queued
  // free, or the host's mem_free) at `epoch` of `clock`: checks that every
  // other use of it is ordered before, poisons it with SimBackend::kPoison
  // and releases its bytes. Stays active until `deadline`.
  void free_block(DevicePtr ptr, const OpLabel& label, const Epoch& epoch, const VectorClock& clock,
                  Clock::time_point deadline);
  // The host's mem_free: a host operation with its own epoch.
  void free_from_host(DevicePtr ptr, const char* api);

  [[nodiscard]] HostClock& host_clock() noexcept { return host_; }

 private:
  void run_work(Work& work, std::uint64_t stream, const Epoch& epoch, const VectorClock& clock,
                Clock::time_point deadline);
  // Pins every non-empty access; records a use_after_free for each one that
  // is not inside a live block and returns false if there was any.
  bool pin_all(const OpLabel& label, std::span<const Access> accesses, std::vector<Pin>& pins);
  // Replaces each pointer-led parameter's DevicePtr by its host address.
  // Records each one's addresses in `addresses`.
  bool translate_pointers(const OpLabel& label, LaunchWork& work, std::vector<Pin>& pins,
                          std::vector<ParamAddress>& addresses);
  void perform(const OpLabel& label, Work& work, std::vector<Pin>& pins);

  Memory& memory_;
  Checker& checker_;
  Events& events_;
  HostClock& host_;
};

}  // namespace tandem::driver::sim
