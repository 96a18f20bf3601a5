// SPDX-License-Identifier: Apache-2.0
// tandem/driver/kernel_symbol.hpp — how a kernel is named to the driver.
//
// A KernelSymbol is static data that the kernels layer defines once per
// compiled kernel instantiation. It names the device entry point (an
// `extern "C"` function inside an embedded fatbin) and, for the simulated
// device, the host reference that computes the same effect. The driver layer
// never includes kernels/: it only sees these descriptors.
//
// Parameter ABI (shared by device code, host references and the runtime's
// launchers): every kernel parameter is passed by value as one of
//   - a scalar (integer or floating point),
//   - a struct whose first member is a device pointer (BufferParam, TensorParam).
// `params[i]` in a launch points at parameter i's value, exactly as
// cuLaunchKernel expects. The sim copies the values, translates each
// pointer-led struct's leading pointer to host memory, and calls `host` with
// the same layout, so a host reference reads its parameters like the device
// function does.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tandem/driver/types.hpp"

namespace tandem::driver {

enum class ParamKind : std::uint8_t {
  scalar,       // a plain value
  pointer_led,  // a struct whose first 8 bytes are a DevicePtr
};

struct ParamSlot {
  ParamKind kind = ParamKind::scalar;
  std::uint16_t size = 0;  // sizeof the parameter value
};

// A fatbin (sm_90 SASS + compute_90 PTX) embedded in the binary. `data` is
// null when the build had no CUDA toolkit: such kernels run on `sim` only.
struct ModuleImage {
  const void* data = nullptr;
  std::size_t size = 0;
  const char* name = "";  // for messages: the .cu file it came from
};

// The host reference: same parameter layout as the device entry point, with
// every pointer-led parameter's pointer already translated to host memory.
using HostKernelFn = void (*)(void* const* params, const LaunchDims& dims);

struct KernelSymbol {
  const char* name = "";  // extern "C" entry point in `module`
  const ModuleImage* module = nullptr;
  HostKernelFn host = nullptr;
  const ParamSlot* params = nullptr;
  std::uint32_t param_count = 0;

  // Dense index for per-context function caches, assigned on first use.
  // 0 means "not assigned yet".
  mutable std::atomic<std::uint32_t> slot{0};

  // Returns this symbol's dense slot (1-based), assigning one if needed.
  [[nodiscard]] std::uint32_t cache_slot() const noexcept;
};

}  // namespace tandem::driver
