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
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim_sync.hpp"
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
  bool pooled = false;  // from a stream-ordered pool (peers need a pool grant)
  HostBytes storage;
  bool free_pending = false;  // a free of it has been accepted (maybe queued)
};

// A live block's host bytes, held while an operation uses them.
struct Pin {
  HostBytes storage;
  std::byte* host = nullptr;  // the translated address
};

class Memory {
 public:
  Memory(std::size_t capacity_per_device, int devices);

  // Status::ok, or out_of_memory with `why` naming what was asked and found.
  Status allocate(int device, std::size_t bytes, bool pooled, DevicePtr& out, std::string& why)
      SIM_EXCLUDES(mu_);
  // The n-th allocate() call from now fails (1 = the next one); 0 disarms.
  void fail_nth_alloc(std::uint64_t n) SIM_EXCLUDES(mu_);

  // Accepts a free of the block based at `ptr`: false (and `why`) when `ptr`
  // is not the base of a live block or a free of it was already accepted.
  bool accept_free(DevicePtr ptr, std::string& why) SIM_EXCLUDES(mu_);
  void withdraw_free(DevicePtr ptr) SIM_EXCLUDES(mu_);
  // The size of the live block based at `ptr`, or nullopt and `why`.
  std::optional<std::size_t> block_size(DevicePtr ptr, std::string& why) const SIM_EXCLUDES(mu_);
  // Removes the live block based at `ptr` and returns it (its bytes count as
  // free from now on); nullopt when it is not live any more.
  std::optional<Block> release(DevicePtr ptr) SIM_EXCLUDES(mu_);

  // [ptr, ptr + bytes) must lie inside one live block (bytes > 0).
  std::optional<Pin> pin_range(DevicePtr ptr, std::uint64_t bytes, std::string& why) const SIM_EXCLUDES(mu_);
  // A kernel's pointer argument: inside a live block or one past its end.
  std::optional<Pin> pin_pointer(DevicePtr ptr, std::string& why) const SIM_EXCLUDES(mu_);

  // Where the live block containing `ptr` lives: its device and whether it
  // came from a pool; false when `ptr` is in no live block.
  bool owner_of(DevicePtr ptr, int& device, bool& pooled) const SIM_EXCLUDES(mu_);

  void info(int device, std::size_t& free_bytes, std::size_t& total_bytes) const SIM_EXCLUDES(mu_);
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint64_t live_allocations() const noexcept {
    return live_count_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t live_bytes() const noexcept {
    return live_bytes_.load(std::memory_order_relaxed);
  }

 private:
  bool take_injected_failure() SIM_REQUIRES(mu_);
  const Block* find(DevicePtr ptr, bool allow_end) const SIM_REQUIRES(mu_);
  std::optional<Pin> pin(DevicePtr ptr, std::uint64_t bytes, bool allow_end, std::string& why) const
      SIM_EXCLUDES(mu_);
  void insert(Block block) SIM_EXCLUDES(mu_);

  const std::size_t capacity_;
  mutable Mutex mu_;
  std::map<DevicePtr, Block> blocks_ SIM_GUARDED_BY(mu_);  // live blocks by base
  std::vector<std::size_t> used_ SIM_GUARDED_BY(mu_);      // reserved bytes per device
  std::uint64_t fail_countdown_ SIM_GUARDED_BY(mu_) = 0;   // 0: no injected failure
  // Mirrors of blocks_ for the cheap noexcept getters (written under mu_).
  std::atomic<std::uint64_t> live_count_{0};
  std::atomic<std::uint64_t> live_bytes_{0};
};

}  // namespace tandem::driver::sim
