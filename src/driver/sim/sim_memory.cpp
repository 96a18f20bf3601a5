#include "sim_memory.hpp"

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

}  // namespace

Memory::Memory(std::size_t capacity_per_device, int devices)
    : capacity_(capacity_per_device), used_(static_cast<std::size_t>(devices), 0) {}

bool Memory::take_injected_failure() {
  if (fail_countdown_ == 0) {
    return false;
  }
  return --fail_countdown_ == 0;
}

void Memory::fail_nth_alloc(std::uint64_t n) {
  Lock lock(mu_);
  fail_countdown_ = n;
}

Status Memory::allocate(int device, std::size_t bytes, bool pooled, DevicePtr& out, std::string& why) {
  const auto slot = static_cast<std::size_t>(device);
  {
    Lock lock(mu_);
    if (take_injected_failure()) {
      why = "asked " + std::to_string(bytes) + " bytes on device " + std::to_string(device) +
            ": failed on purpose by fail_nth_alloc";
      return Status::out_of_memory;
    }
    const std::size_t free_bytes = capacity_ - used_[slot];
    if (bytes > free_bytes) {
      why = "asked " + std::to_string(bytes) + " bytes, " + std::to_string(free_bytes) + " free on device " +
            std::to_string(device);
      return Status::out_of_memory;
    }
    used_[slot] += bytes;  // reserved now; the host bytes are made unlocked
  }
  HostBytes storage = make_storage(bytes);
  if (!storage) {
    Lock lock(mu_);
    used_[slot] -= bytes;
    why = "asked " + std::to_string(bytes) + " bytes on device " + std::to_string(device) +
          ": the host could not provide them";
    return Status::out_of_memory;
  }
  out = reserve_address_space(bytes);
  insert(Block{out, bytes, device, pooled, std::move(storage), false});
  return Status::ok;
}

void Memory::insert(Block block) {
  Lock lock(mu_);
  live_count_.fetch_add(1, std::memory_order_relaxed);
  live_bytes_.fetch_add(block.bytes, std::memory_order_relaxed);
  const DevicePtr base = block.base;
  blocks_.emplace(base, std::move(block));
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

bool Memory::accept_free(DevicePtr ptr, std::string& why) {
  Lock lock(mu_);
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
  Lock lock(mu_);
  auto it = blocks_.find(ptr);
  if (it != blocks_.end()) {
    it->second.free_pending = false;
  }
}

std::optional<std::size_t> Memory::block_size(DevicePtr ptr, std::string& why) const {
  Lock lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end()) {
    why = hex(ptr) + " is not a live allocation (already freed?)";
    return std::nullopt;
  }
  return it->second.bytes;
}

std::optional<Block> Memory::release(DevicePtr ptr) {
  Lock lock(mu_);
  auto node = blocks_.extract(ptr);
  if (node.empty()) {
    return std::nullopt;
  }
  Block& b = node.mapped();
  used_[static_cast<std::size_t>(b.device)] -= b.bytes;
  live_count_.fetch_sub(1, std::memory_order_relaxed);
  live_bytes_.fetch_sub(b.bytes, std::memory_order_relaxed);
  return std::move(b);
}

std::optional<Pin> Memory::pin(DevicePtr ptr, std::uint64_t bytes, bool allow_end, std::string& why) const {
  Lock lock(mu_);
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
  Lock lock(mu_);
  const Block* b = find(ptr, false);
  if (b == nullptr) {
    return false;
  }
  device = b->device;
  pooled = b->pooled;
  return true;
}

void Memory::info(int device, std::size_t& free_bytes, std::size_t& total_bytes) const {
  Lock lock(mu_);
  total_bytes = capacity_;
  free_bytes = capacity_ - used_[static_cast<std::size_t>(device)];
}

}  // namespace tandem::driver::sim
