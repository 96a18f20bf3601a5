// SPDX-License-Identifier: Apache-2.0
// platform_state.hpp — one driver backend instance and its devices.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "tandem/driver/backend.hpp"

namespace tandem::detail {

struct PlatformState {
  explicit PlatformState(std::unique_ptr<driver::Backend> b);

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  std::atomic<std::uint32_t> refs{1};
  const std::unique_ptr<driver::Backend> backend;
  driver::SimBackend* const sim;  // the same object when the backend is the sim (Backend::as_sim)
  std::vector<driver::DeviceInfo> devices;
};

}  // namespace tandem::detail

namespace tandem::detail {}  // namespace tandem::detail
