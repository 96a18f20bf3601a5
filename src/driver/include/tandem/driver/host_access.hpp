// SPDX-License-Identifier: Apache-2.0
// tandem/driver/host_access.hpp — what a kernel's host reference may touch
// while the simulated device runs it.
//
// The sim installs a HostAccessFrame on its worker thread for the length of
// one host reference call. The kernels' host references reach memory only
// through bounds-checked spans (kernels/host/host_span.hpp) that ask the
// frame: an access outside every declared range of the launch, or a write
// through a range declared read-only, is refused (not performed) and
// recorded as a violation naming the kernel, the launch and the offset
// asked. Outside a sim launch there is no frame and nothing is checked.
#pragma once

#include <cstddef>

#include "tandem/driver/types.hpp"

namespace tandem::driver {

// One declared access, translated to host addresses: [lo, hi).
struct HostWindow {
  const std::byte* lo = nullptr;
  const std::byte* hi = nullptr;
  AccessMode mode = AccessMode::read;
};

class HostAccessFrame {
 public:
  virtual ~HostAccessFrame() = default;
  // The declared window containing `p`, or an empty one.
  [[nodiscard]] virtual HostWindow window_of(const void* p) const noexcept = 0;
  // Whether parameter `param` may touch [p, p + bytes) (writing when
  // `write`); when not, records a violation and returns false.
  virtual bool admit(int param, const void* p, std::size_t bytes, bool write) noexcept = 0;
};

// The frame of the launch running on this thread, or null.
[[nodiscard]] HostAccessFrame* current_host_access() noexcept;

// Installs `frame` on this thread for the scope's lifetime.
class HostAccessScope {
 public:
  explicit HostAccessScope(HostAccessFrame* frame) noexcept;
  ~HostAccessScope();
  HostAccessScope(const HostAccessScope&) = delete;
  HostAccessScope& operator=(const HostAccessScope&) = delete;

 private:
  HostAccessFrame* previous_;
};

}  // namespace tandem::driver
