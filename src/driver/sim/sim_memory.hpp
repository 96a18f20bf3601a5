// SPDX-License-Identifier: Apache-2.0
// sim_memory.hpp — the simulated device memory (private to src/driver/sim).
//
// Device addresses are virtual: bump-allocated from one process-wide counter
// (so they are never reused, within a backend or across backends), 256-byte
// aligned, with an unmapped guard gap after each block so that a pointer one
// past the end of a block never lands inside the next one. Each block owns its
// own host bytes; translation goes through an ordered map of live blocks, so
// any address outside a live block is freed or was never valid.
//
// Host bytes are reference counted: an operation "pins" the blocks it touches
// for as long as it runs, so a free that races with it (a runtime bug the
// sim reports) never turns into a host use-after-free inside the sim itself.
//
// Capacity models a CUDA stream-ordered pool. A block's bytes come back to the
// device when its free executes, but a pool allocation on the stream where a
// free of a block of the same pool is queued may use that block's bytes at
// once: stream order puts every use of the new block after the free, which is
// what lets cuMemFreeAsync's memory be reused without waiting for the host.
// Other streams and mem_alloc see the bytes only once the free executed. The
// reuse is accounting only: the new block still gets a fresh address and fresh
// host bytes, and the old block stays live (and checked) until its free runs.
// The bytes a block lent are not given back again when its free executes, so
// the device's charge is always the sum over live blocks of bytes - lent.
#pragma once

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tandem/base/guard.hpp"
#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::driver::sim {

// What fresh memory is filled with, so that reading uninitialised device
// memory gives a recognisable value rather than a plausible zero.
inline constexpr std::uint8_t kFreshFill = 0xCD;

using HostBytes = std::shared_ptr<std::byte[]>;

struct Block {
  DevicePtr base = 0;
  std::size_t bytes = 0;
  int device = 0;
  std::uint64_t pool = 0;  // the stream-ordered pool it came from; 0: mem_alloc
  HostBytes storage;
  bool free_pending = false;  // a free of it has been accepted (maybe queued)
  // The stream whose queued free of it lends its bytes to that stream's
  // pool allocations; 0 (never a stream id): not lending.
  std::uint64_t lending_on = 0;
  std::size_t lent = 0;  // bytes that newer blocks took over (<= bytes)
};

// What allocate() is asked for.
struct AllocRequest {
  int device = 0;
  std::size_t bytes = 0;
  std::uint64_t pool = 0;    // 0: not pooled (mem_alloc), reuses nothing
  std::uint64_t stream = 0;  // a pool allocation's stream: frees queued there lend
};

// Why allocate() failed.
struct Refusal {
  std::string why;
  bool injected = false;  // by fail_nth_alloc(_with_driver_error), not a shortage
};

// A live block's host bytes, held while an operation uses them.
struct Pin {
  HostBytes storage;
  std::byte* host = nullptr;  // the translated address
};

class Memory {
 public:
  Memory(std::size_t capacity_per_device, int devices);

  // Status::ok, or out_of_memory with `refusal` naming what was asked and
  // found (Status::unknown when fail_nth_alloc_with_driver_error fired).
  Status allocate(const AllocRequest& request, DevicePtr& out, Refusal& refusal) TANDEM_EXCLUDES(mu_);
  // The n-th allocate() call from now fails (1 = the next one); 0 disarms.
  void fail_nth_alloc(std::uint64_t n) TANDEM_EXCLUDES(mu_);
  // The same with a driver error (Status::unknown); its own countdown over
  // the same calls (out_of_memory wins when both land on one call).
  void fail_nth_alloc_with_driver_error(std::uint64_t n) TANDEM_EXCLUDES(mu_);

  // The live pool block based at `ptr`, of exactly `bytes` from `pool`, with
  // no free accepted, passes to a new owner (Backend::mem_reuse_async):
  // counted as an allocation call, so an injected failure fires on it as on
  // allocate(). invalid_value and `refusal` when the block is not that.
  Status reuse(DevicePtr ptr, std::size_t bytes, std::uint64_t pool, Refusal& refusal) TANDEM_EXCLUDES(mu_);
  // Accepts a free of the block based at `ptr`: false (and `why`) when `ptr`
  // is not the base of a live block or a free of it was already accepted.
  bool accept_free(DevicePtr ptr, std::string& why) TANDEM_EXCLUDES(mu_);
  // Undoes accept_free when the free could not be queued (never after
  // lend_until_freed, so nothing of the block has been lent).
  void withdraw_free(DevicePtr ptr) TANDEM_EXCLUDES(mu_);
  // The accepted free of pool block `ptr` is queued on `stream`: until it
  // executes, that stream's allocations from the same pool may use its bytes.
  // Called once it is queued, never before (a withdrawn free lends nothing);
  // nothing happens when the free already ran or the block is not pooled.
  void lend_until_freed(DevicePtr ptr, std::uint64_t stream) TANDEM_EXCLUDES(mu_);
  // The size of the live block based at `ptr`, or nullopt and `why`.
  std::optional<std::size_t> block_size(DevicePtr ptr, std::string& why) const TANDEM_EXCLUDES(mu_);
  // Removes the live block based at `ptr` and returns it (its bytes that it
  // did not lend count as free from now on); nullopt when it is not live.
  std::optional<Block> release(DevicePtr ptr) TANDEM_EXCLUDES(mu_);

  // [ptr, ptr + bytes) must lie inside one live block (bytes > 0).
  std::optional<Pin> pin_range(DevicePtr ptr, std::uint64_t bytes, std::string& why) const
      TANDEM_EXCLUDES(mu_);
  // A kernel's pointer argument: inside a live block or one past its end.
  std::optional<Pin> pin_pointer(DevicePtr ptr, std::string& why) const TANDEM_EXCLUDES(mu_);

  // Where the live block containing `ptr` lives: its device and whether it
  // came from a pool; false when `ptr` is in no live block.
  bool owner_of(DevicePtr ptr, int& device, bool& pooled) const TANDEM_EXCLUDES(mu_);

  void info(int device, std::size_t& free_bytes, std::size_t& total_bytes) const TANDEM_EXCLUDES(mu_);
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint64_t live_allocations() const noexcept {
    return live_count_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t live_bytes() const noexcept {
    return live_bytes_.load(std::memory_order_relaxed);
  }

 private:
  // Queued frees that lend to one pool's allocations on one stream.
  struct LendKey {
    std::uint64_t pool = 0;
    std::uint64_t stream = 0;
    auto operator<=>(const LendKey&) const = default;
  };
  struct Lenders {
    std::deque<DevicePtr> blocks;  // queue order; a block leaves once fully lent
    std::size_t spare = 0;         // sum of bytes - lent over `blocks`
  };

  // Counts one allocate() call on both countdowns: the injected status, or ok.
  Status take_injected_failure() TANDEM_REQUIRES(mu_);
  // Empty when `request` fits now (free bytes, plus what it may borrow), or why not.
  std::string shortage(const AllocRequest& request) const TANDEM_REQUIRES(mu_);
  // Takes `bytes` of spare from the lenders of `key`, oldest free first;
  // returns how many it took (at most their spare).
  std::size_t borrow(const LendKey& key, std::size_t bytes) TANDEM_REQUIRES(mu_);
  // Takes `block` out of its lenders (its free executed or was withdrawn).
  void stop_lending(Block& block) TANDEM_REQUIRES(mu_);
  const Block* find(DevicePtr ptr, bool allow_end) const TANDEM_REQUIRES(mu_);
  std::optional<Pin> pin(DevicePtr ptr, std::uint64_t bytes, bool allow_end, std::string& why) const
      TANDEM_EXCLUDES(mu_);

  const std::size_t capacity_;
  mutable base::Mutex mu_;
  std::map<DevicePtr, Block> blocks_ TANDEM_GUARDED_BY(mu_);  // live blocks by base
  // Bytes charged per device: over its live blocks, bytes - lent.
  std::vector<std::size_t> used_ TANDEM_GUARDED_BY(mu_);
  std::map<LendKey, Lenders> lenders_ TANDEM_GUARDED_BY(mu_);  // no entry without spare
  std::uint64_t fail_countdown_ TANDEM_GUARDED_BY(mu_) = 0;    // 0: no injected failure
  std::uint64_t error_countdown_ TANDEM_GUARDED_BY(mu_) = 0;   // 0: no injected driver error
  // Mirrors of blocks_ for the cheap noexcept getters (written under mu_).
  std::atomic<std::uint64_t> live_count_{0};
  std::atomic<std::uint64_t> live_bytes_{0};
};

}  // namespace tandem::driver::sim
