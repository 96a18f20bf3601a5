// smoke.hpp — `tandem smoke`: a short end-to-end exercise of the runtime on
// one device, reported as JSON: buffers cycled with forgotten futures and
// dropped handles, a cross-stream conflict under both policies, uniqueness
// checks, then retirement, leak counters and the device free-memory baseline.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "tandem/device.hpp"

namespace tandem::cli {

struct SmokeOptions {
  int cycles = 64;                            // buffers cycled
  std::uint64_t buffer_bytes = 1 << 20;       // each
  std::uint64_t vram_tolerance = 8ull << 20;  // baseline check tolerance
};

// Returns the report; report["status"] is "pass" or "fail".
nlohmann::ordered_json run_smoke(const Device& device, const SmokeOptions& options);

}  // namespace tandem::cli
