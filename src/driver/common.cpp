// SPDX-License-Identifier: Apache-2.0
// Pieces of the driver layer shared by both backends.
#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::driver {

const char* status_name(Status s) noexcept {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::not_ready:
      return "not_ready";
    case Status::out_of_memory:
      return "out_of_memory";
    case Status::invalid_value:
      return "invalid_value";
    case Status::invalid_handle:
      return "invalid_handle";
    case Status::not_supported:
      return "not_supported";
    case Status::not_permitted:
      return "not_permitted";
    case Status::completion_unknown:
      return "completion_unknown";
    case Status::no_device:
      return "no_device";
    case Status::unknown:
      return "unknown";
  }
  return "unknown";
}

namespace {
std::atomic<std::uint32_t> g_next_slot{1};
}  // namespace

std::uint32_t KernelSymbol::cache_slot() const noexcept {
  std::uint32_t s = slot.load(std::memory_order_acquire);
  if (s != 0) return s;
  const std::uint32_t fresh = g_next_slot.fetch_add(1, std::memory_order_relaxed);
  std::uint32_t expected = 0;
  if (slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return fresh;
  return expected;  // another thread won; its slot stands (ours is simply unused)
}

}  // namespace tandem::driver
