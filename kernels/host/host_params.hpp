// Reading a kernel's parameters on the host side (internal to kernels/).
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

// Element (i, j) of a rank-2 / element i of a rank-1 strided tensor.
template <class T>
[[nodiscard]] T& at(const TensorParam<T, 2>& t, std::int64_t i, std::int64_t j) noexcept {
  return t.data[i * t.stride[0] + j * t.stride[1]];
}
template <class T>
[[nodiscard]] T& at(const TensorParam<T, 1>& t, std::int64_t i) noexcept {
  return t.data[i * t.stride[0]];
}

// f(element reference) for every element of a rank-1/2 tensor, or f(i, j).
template <class T, class F>
void for_each_index(const TensorParam<T, 2>& t, F f) {
  for (std::int64_t i = 0; i < t.shape[0]; ++i) {
    for (std::int64_t j = 0; j < t.shape[1]; ++j) f(i, j);
  }
}

}  // namespace tandem::kernels::host
