// SPDX-License-Identifier: Apache-2.0
// loaded_state.hpp — the runtime under load: 100,000 live allocations and
// 10,000 tracked submissions in flight, held while loaded benchmarks run.
//
// How the submissions stay in flight: kHolderStreams streams each start
// with a `spin` kernel that keeps the GPU busy for kHold, then queue their
// share of copy launches behind it (each reading one live allocation and
// writing another, no two streams touching the same one). A CUDA stream
// blocks the host after about a thousand queued operations, and each
// submission queues two (the launch and its completion event), so the
// 10,000 are spread at 500 per stream over 20 streams. tandem's own bound
// on the device's queue (256 by default) would block them sooner: the
// holder streams turn theirs off (Stream::set_max_queued(0)). With the 10
// streams made before them (the benchmark stream, 8 lanes, tandem's free
// stream) that is 30 of the 32 hardware queues main() asks for: no measured stream
// shares a queue with a held one. The hold is re-armed (after waiting on
// the device for the old spins to end) when less of it is left than a
// benchmark needs; arming that blocks (a queue full after all) fails with
// the count at which it blocked.
//
// The load can also be taken off and put back (unload(), load()), so that
// one benchmark alternates segments in the empty and the loaded state
// (BM_PairedSimtLaunchLoaded). Empty means no loaded allocation live and
// nothing held in flight; the holder streams stay, idle, with their 256-byte
// spin allocations: making streams anew would map them onto other hardware
// queues, one of them perhaps a measured stream's.
//
// A loaded benchmark checks the state after its measurement: if the held
// submissions retired meanwhile, the figure was not taken under load and
// the benchmark fails instead of reporting it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench_env.hpp"
#include "tandem/launch.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

class LoadedState {
 public:
  static constexpr std::size_t kLiveAllocations = 100'000;
  static constexpr std::size_t kInFlight = 10'000;
  static constexpr int kHolderStreams = 20;
  static constexpr std::chrono::milliseconds kHold{3000};

  // The state, loaded and armed with at least `need` of hold left. Throws
  // when it cannot be built or held (the caller's benchmark fails with the
  // reason).
  static LoadedState& ready(Env& e, std::chrono::milliseconds need);
  // The state with its load taken off (unload()): holders made, nothing
  // loaded. Waits out a hold in progress.
  static LoadedState& empty(Env& e);

  // Allocates the live allocations and arms a hold of `hold`; a loaded state
  // is re-armed. Throws as ready() does.
  void load(std::chrono::milliseconds hold);
  // Waits for the hold to end on the device, drops the held submissions and
  // the live allocations and waits until the context has retired them.
  void unload();
  [[nodiscard]] bool loaded() const { return !live_.empty(); }

  // Held submissions not yet retired (status loads, lock-free).
  [[nodiscard]] std::size_t in_flight() const;
  // Counters: live_allocations, inflight_at_start/_end; throws when the
  // load retired during the measurement.
  void check_held(benchmark::State& st, std::size_t at_start) const;

  // Host heap growth (glibc mallinfo2, all arenas) while the allocations and
  // the in-flight submissions were made, per allocation / per submission.
  // Includes the driver's own host memory; 0 when not measured.
  [[nodiscard]] double heap_per_allocation() const { return heap_per_allocation_; }
  [[nodiscard]] double heap_per_submission() const { return heap_per_submission_; }

  explicit LoadedState(Env& e);
  LoadedState(const LoadedState&) = delete;
  LoadedState& operator=(const LoadedState&) = delete;
  ~LoadedState();

 private:
  void warm_kernels();
  void arm(std::chrono::milliseconds hold);

  Env& e_;
  std::vector<tandem::Stream> holders_;
  std::vector<tandem::View> holder_bytes_;  // what each holder's spin leases
  std::vector<tandem::View> live_;
  std::vector<tandem::LaunchFuture> flight_;
  Clock::time_point hold_until_{};
  double heap_per_allocation_ = 0;
  double heap_per_submission_ = 0;
};

}  // namespace tandem_bench
