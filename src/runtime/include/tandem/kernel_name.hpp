// SPDX-License-Identifier: Apache-2.0
// tandem/kernel_name.hpp — catalog names of kernel symbols, registered by the
// kernels library (the runtime does not depend on it) so that a recording
// (tandem/recorder.hpp) writes a catalog launch by name.
#pragma once

#include <cstdint>
#include <span>

#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/dtype.hpp"

namespace tandem {

// A catalog kernel's name, registered by the kernels library so that a
// launch of its symbol is recorded as a catalog `launch` step.
struct KernelName {
  const char* model = "";  // "simt" | "tile"
  const char* name = "";
  std::span<const std::int64_t> tile;  // tile shape when not the default
  struct Param {
    const char* name = "";
    bool view = true;
    DType scalar_dtype = DType::f32;
  };
  std::span<const Param> params;
};
// `name` and what it points at must live as long as the process.
void register_kernel_name(const driver::KernelSymbol* symbol, const KernelName* name);
[[nodiscard]] const KernelName* kernel_name(const driver::KernelSymbol* symbol);

}  // namespace tandem
