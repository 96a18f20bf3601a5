// SPDX-License-Identifier: Apache-2.0
// Reading a kernel's parameters on the host side (internal to kernels/).
// Memory behind them is reached only through host_span.hpp.
#pragma once

#include <cstdint>
#include <cstring>

#include "tandem/kernel_params.hpp"

namespace tandem::kernels::host {

// The value of parameter i, copied out (no aliasing assumptions).
template <class P>
[[nodiscard]] P param(void* const* params, int i) noexcept {
  P v;
  std::memcpy(&v, params[i], sizeof(P));
  return v;
}

}  // namespace tandem::kernels::host
