// SPDX-License-Identifier: Apache-2.0
// sim_launch_frame.hpp — the bounds check of one kernel launch on the
// simulated device (private to src/driver/sim): the HostAccessFrame that the
// kernel's host reference asks before touching memory (see
// tandem/driver/host_access.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim_checker.hpp"
#include "sim_memory.hpp"
#include "tandem/driver/host_access.hpp"

namespace tandem::driver::sim {

// A pointer-led parameter: where it points on the device and on the host.
struct ParamAddress {
  int index = 0;
  DevicePtr device = 0;
  const std::byte* host = nullptr;
};

class LaunchFrame final : public HostAccessFrame {
 public:
  // `declared[i]` is translated by `pins[i]`; `who` names the launch.
  LaunchFrame(Checker& checker, std::string who, std::span<const Access> declared, std::span<const Pin> pins,
              std::vector<ParamAddress> params);
  ~LaunchFrame() override;  // records what was refused, once per launch
  LaunchFrame(const LaunchFrame&) = delete;
  LaunchFrame& operator=(const LaunchFrame&) = delete;

  [[nodiscard]] HostWindow window_of(const void* p) const noexcept override;
  bool admit(int param, const void* p, std::size_t bytes, bool write) noexcept override;

 private:
  struct Window {
    HostWindow host;
    Access declared;
  };
  std::string explain(int param, const std::byte* p, std::size_t bytes, bool write,
                      const Window* read_only) const;

  Checker& checker_;
  std::string who_;
  std::vector<Window> windows_;
  std::vector<ParamAddress> params_;
  std::string first_refusal_;
  std::uint64_t refused_ = 0;
};

}  // namespace tandem::driver::sim
