// SPDX-License-Identifier: Apache-2.0
#include "sim_memory.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "sim_text.hpp"

namespace tandem::driver::sim {

namespace {

constexpr std::uint64_t kAlignment = 256;
constexpr std::uint64_t kGuardGap = 256;  // unmapped bytes after every block
constexpr DevicePtr kFirstAddress = 0x100000000000;

// One counter for the whole process: a device address is never handed out
// twice, even by two backends, so a late touch can never hit a newer block.
std::atomic<DevicePtr> g_next_address{kFirstAddress};

DevicePtr reserve_address_space(std::size_t bytes) {
  const std::uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  const std::uint64_t span = (rounded == 0 ? kAlignment : rounded) + kGuardGap;
  return g_next_address.fetch_add(span, std::memory_order_relaxed);
}

// Host bytes for a block, filled with kFreshFill; null when the host is out
// of memory. A zero-byte block still gets a (zero-length) non-null array, so
// a kernel argument pointing at it translates to a non-null pointer.
HostBytes make_storage(std::size_t bytes) {
  HostBytes storage(new (std::nothrow) std::byte[bytes]);
  if (storage && bytes > 0) {
    std::memset(storage.get(), kFreshFill, bytes);
  }
  return storage;
}

// One countdown step: true when it reaches 0 now (0 stays disarmed).
bool count_down(std::uint64_t& left) {
  if (left == 0) {
    return false;
  }
  return --left == 0;
}

// Which armed fault an injected failure came from.
const char* fault_name(Status injected) {
  return injected == Status::out_of_memory ? "fail_nth_alloc"
                                           : "fail_nth_alloc_with_driver_error (a driver error)";
}

}  // namespace

Memory::Memory(std::size_t capacity_per_device, int devices)
    : capacity_(capacity_per_device), used_(static_cast<std::size_t>(devices), 0) {}

Status Memory::take_injected_failure() {
  const bool oom = count_down(fail_countdown_);
  const bool error = count_down(error_countdown_);  // counted even when oom fires
  if (oom) {
    return Status::out_of_memory;
  }
  return error ? Status::unknown : Status::ok;
}

void Memory::fail_nth_alloc(std::uint64_t n) {
  base::Lock lock(mu_);
  fail_countdown_ = n;
}

void Memory::fail_nth_alloc_with_driver_error(std::uint64_t n) {
  base::Lock lock(mu_);
  error_countdown_ = n;
}

std::string Memory::shortage(const AllocRequest& request) const {
  const std::size_t free_bytes = capacity_ - used_[static_cast<std::size_t>(request.device)];
  std::size_t reusable = 0;
  if (request.pool != 0) {
    if (auto it = lenders_.find(LendKey{request.pool, request.stream}); it != lenders_.end()) {
      reusable = it->second.spare;
    }
  }
  if (request.bytes <= free_bytes || request.bytes - free_bytes <= reusable) {
    return {};
  }
  std::string why = "asked " + std::to_string(request.bytes) + " bytes, " + std::to_string(free_bytes) +
                    " free on device " + std::to_string(request.device);
  if (reusable > 0) {
    why +=
        " and " + std::to_string(reusable) + " reusable from frees queued on " + stream_name(request.stream);
  }
  return why;
}

std::size_t Memory::borrow(const LendKey& key, std::size_t bytes) {
  auto it = lenders_.find(key);
  if (it == lenders_.end()) {
    return 0;
  }
  Lenders& lenders = it->second;
  std::size_t taken = 0;
  while (taken < bytes && !lenders.blocks.empty()) {
    Block& lender = blocks_.at(lenders.blocks.front());
    const std::size_t take = std::min(bytes - taken, lender.bytes - lender.lent);
    lender.lent += take;
    lenders.spare -= take;
    taken += take;
    if (lender.lent == lender.bytes) {
      lenders.blocks.pop_front();
      lender.lending_on = 0;
    }
  }
  if (lenders.blocks.empty()) {
    lenders_.erase(it);
  }
  return taken;
}

void Memory::stop_lending(Block& block) {
  if (block.lending_on == 0) {
    return;
  }
  auto it = lenders_.find(LendKey{block.pool, block.lending_on});
  block.lending_on = 0;
  if (it == lenders_.end()) {
    return;  // cannot happen: a lending block is listed
  }
  Lenders& lenders = it->second;
  // Frees run in queue order, so the block is nearly always at the front.
  if (auto at = std::find(lenders.blocks.begin(), lenders.blocks.end(), block.base);
      at != lenders.blocks.end()) {
    lenders.blocks.erase(at);
    lenders.spare -= block.bytes - block.lent;
  }
  if (lenders.blocks.empty()) {
    lenders_.erase(it);
  }
}

Status Memory::allocate(const AllocRequest& request, DevicePtr& out, Refusal& refusal) {
  {
    base::Lock lock(mu_);
    if (const Status injected = take_injected_failure(); injected != Status::ok) {
      refusal = Refusal{"asked " + std::to_string(request.bytes) + " bytes on device " +
                            std::to_string(request.device) + ": failed on purpose by " + fault_name(injected),
                        true};
      return injected;
    }
    if (std::string why = shortage(request); !why.empty()) {
      refusal = Refusal{std::move(why), false};
      return Status::out_of_memory;
    }
  }
  // Made and filled unlocked (a large block takes a while), so the room is
  // checked again before it is taken.
  HostBytes storage = make_storage(request.bytes);
  if (!storage) {
    refusal = Refusal{"asked " + std::to_string(request.bytes) + " bytes on device " +
                          std::to_string(request.device) + ": the host could not provide them",
                      false};
    return Status::out_of_memory;
  }
  base::Lock lock(mu_);
  if (std::string why = shortage(request); !why.empty()) {
    refusal = Refusal{std::move(why), false};
    return Status::out_of_memory;
  }
  const std::size_t borrowed =
      request.pool == 0 ? 0 : borrow(LendKey{request.pool, request.stream}, request.bytes);
  used_[static_cast<std::size_t>(request.device)] += request.bytes - borrowed;
  out = reserve_address_space(request.bytes);
  blocks_.emplace(out, Block{.base = out,
                             .bytes = request.bytes,
                             .device = request.device,
                             .pool = request.pool,
                             .storage = std::move(storage)});
  live_count_.fetch_add(1, std::memory_order_relaxed);
  live_bytes_.fetch_add(request.bytes, std::memory_order_relaxed);
  return Status::ok;
}

const Block* Memory::find(DevicePtr ptr, bool allow_end) const {
  auto it = blocks_.upper_bound(ptr);
  if (it == blocks_.begin()) {
    return nullptr;
  }
  --it;
  const Block& b = it->second;
  const DevicePtr end = b.base + b.bytes;
  if (ptr < end || (allow_end && ptr == end)) {
    return &b;
  }
  return nullptr;
}

Status Memory::reuse(DevicePtr ptr, std::size_t bytes, std::uint64_t pool, Refusal& refusal) {
  base::Lock lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || it->second.free_pending || it->second.pool != pool || pool == 0 ||
      it->second.bytes != bytes) {
    std::string found = "no live allocation based there";
    if (it != blocks_.end()) {
      const Block& b = it->second;
      found = b.free_pending ? "a block whose free is already queued"
                             : "a block of " + std::to_string(b.bytes) + " bytes from " +
                                   (b.pool == 0 ? std::string("no pool") : "pool " + std::to_string(b.pool));
    }
    refusal = Refusal{"reusing " + hex(ptr) + " as " + std::to_string(bytes) + " bytes of pool " +
                          std::to_string(pool) + ": found " + found,
                      false};
    return Status::invalid_value;
  }
  if (const Status injected = take_injected_failure(); injected != Status::ok) {
    refusal = Refusal{"reusing " + hex(ptr) + " as " + std::to_string(bytes) +
                          " bytes: failed on purpose by " + fault_name(injected),
                      true};
    return injected;
  }
  return Status::ok;
}

bool Memory::accept_free(DevicePtr ptr, std::string& why) {
  base::Lock lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end()) {
    const Block* inside = find(ptr, false);
    why = inside != nullptr ? hex(ptr) + " is inside allocation " + byte_range(inside->base, inside->bytes) +
                                  ", not its base"
                            : hex(ptr) + " is not a live allocation (already freed, or never allocated)";
    return false;
  }
  if (it->second.free_pending) {
    why = "a free of " + hex(ptr) + " is already queued";
    return false;
  }
  it->second.free_pending = true;
  return true;
}

void Memory::withdraw_free(DevicePtr ptr) {
  base::Lock lock(mu_);
  auto it = blocks_.find(ptr);
  if (it != blocks_.end()) {
    it->second.free_pending = false;
    stop_lending(it->second);
  }
}

void Memory::lend_until_freed(DevicePtr ptr, std::uint64_t stream) {
  base::Lock lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end()) {
    return;  // the free already ran: its bytes are the device's again
  }
  Block& block = it->second;
  if (block.pool == 0 || !block.free_pending || block.lending_on != 0 || block.lent == block.bytes) {
    return;
  }
  block.lending_on = stream;
  Lenders& lenders = lenders_[LendKey{block.pool, stream}];
  lenders.blocks.push_back(ptr);
  lenders.spare += block.bytes - block.lent;
}

std::optional<std::size_t> Memory::block_size(DevicePtr ptr, std::string& why) const {
  base::Lock lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end()) {
    why = hex(ptr) + " is not a live allocation (already freed?)";
    return std::nullopt;
  }
  return it->second.bytes;
}

std::optional<Block> Memory::release(DevicePtr ptr) {
  base::Lock lock(mu_);
  auto node = blocks_.extract(ptr);
  if (node.empty()) {
    return std::nullopt;
  }
  Block& b = node.mapped();
  stop_lending(b);
  // What it lent is charged to the borrowers now.
  used_[static_cast<std::size_t>(b.device)] -= b.bytes - b.lent;
  live_count_.fetch_sub(1, std::memory_order_relaxed);
  live_bytes_.fetch_sub(b.bytes, std::memory_order_relaxed);
  return std::move(b);
}

std::optional<Pin> Memory::pin(DevicePtr ptr, std::uint64_t bytes, bool allow_end, std::string& why) const {
  base::Lock lock(mu_);
  const Block* b = find(ptr, allow_end);
  if (b == nullptr) {
    why = hex(ptr) + " is not inside a live allocation (freed, or never allocated here)";
    return std::nullopt;
  }
  const std::uint64_t room = b->base + b->bytes - ptr;
  if (bytes > room) {
    why = byte_range(ptr, bytes) + " runs " + std::to_string(bytes - room) +
          " bytes past the end of allocation " + byte_range(b->base, b->bytes);
    return std::nullopt;
  }
  return Pin{b->storage, b->storage.get() + (ptr - b->base)};
}

std::optional<Pin> Memory::pin_range(DevicePtr ptr, std::uint64_t bytes, std::string& why) const {
  return pin(ptr, bytes, false, why);
}

std::optional<Pin> Memory::pin_pointer(DevicePtr ptr, std::string& why) const {
  return pin(ptr, 0, true, why);
}

bool Memory::owner_of(DevicePtr ptr, int& device, bool& pooled) const {
  base::Lock lock(mu_);
  const Block* b = find(ptr, false);
  if (b == nullptr) {
    return false;
  }
  device = b->device;
  pooled = b->pool != 0;
  return true;
}

void Memory::info(int device, std::size_t& free_bytes, std::size_t& total_bytes) const {
  base::Lock lock(mu_);
  total_bytes = capacity_;
  free_bytes = capacity_ - used_[static_cast<std::size_t>(device)];
}

}  // namespace tandem::driver::sim
