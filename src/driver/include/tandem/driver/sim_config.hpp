// SPDX-License-Identifier: Apache-2.0
// tandem/driver/sim_config.hpp — how to build a simulated device.
//
// A plain struct of its own so that the runtime's public headers
// (Platform::sim, Platform::open) can take one without including the
// simulated device itself (sim_backend.hpp).
#pragma once

#include <cstddef>

namespace tandem::driver {

struct SimConfig {
  std::size_t memory_bytes = std::size_t{1} << 30;  // capacity of each device
  int devices = 1;
  // Whether distinct devices can access each other (device_can_access_peer);
  // false models a machine without P2P, where enabling peer access fails.
  bool peer_capable = true;
};

}  // namespace tandem::driver
