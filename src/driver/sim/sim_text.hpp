// SPDX-License-Identifier: Apache-2.0
// sim_text.hpp — how the simulated device names things in messages
// (private to src/driver/sim). One spelling for addresses, byte ranges,
// streams and access modes, so every violation and error reads alike.
#pragma once

#include <cstdint>
#include <string>

#include "tandem/driver/types.hpp"

namespace tandem::driver::sim {

// Stream ids are per backend and start at 1; 0 is the host (a synchronous
// mem_free runs on the calling thread, outside every stream).
inline constexpr std::uint64_t kHostStream = 0;

std::string hex(std::uint64_t value);
// "[0x100000000000, 0x100000000100) (256 bytes)"
std::string byte_range(DevicePtr ptr, std::uint64_t bytes);
// "stream #3", or "the host" for kHostStream.
std::string stream_name(std::uint64_t stream);
// "reads" | "writes" | "reads and writes"
const char* mode_verb(AccessMode mode);

}  // namespace tandem::driver::sim
