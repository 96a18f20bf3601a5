// SPDX-License-Identifier: Apache-2.0
#include "sim_text.hpp"

#include <cstdio>

namespace tandem::driver::sim {

std::string hex(std::uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string byte_range(DevicePtr ptr, std::uint64_t bytes) {
  return "[" + hex(ptr) + ", " + hex(ptr + bytes) + ") (" + std::to_string(bytes) + " bytes)";
}

std::string stream_name(std::uint64_t stream) {
  return stream == kHostStream ? std::string("the host") : "stream #" + std::to_string(stream);
}

const char* mode_verb(AccessMode mode) {
  switch (mode) {
    case AccessMode::read:
      return "reads";
    case AccessMode::write:
      return "writes";
    case AccessMode::read_write:
      return "reads and writes";
    case AccessMode::atomic:  // the runtime declares atomics as writes; kept for completeness
      return "atomically updates";
  }
  return "touches";
}

}  // namespace tandem::driver::sim
