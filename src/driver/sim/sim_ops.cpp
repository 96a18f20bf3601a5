// SPDX-License-Identifier: Apache-2.0
#include "sim_ops.hpp"

#include <cstring>

namespace tandem::driver::sim {

namespace {
constexpr std::size_t kParamAlign = 16;
constexpr std::size_t round_up(std::size_t n) { return (n + kParamAlign - 1) / kParamAlign * kParamAlign; }
}  // namespace

ParamBuffer::ParamBuffer(const KernelSymbol& symbol, void* const* values) {
  offsets_.reserve(symbol.param_count);
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < symbol.param_count; ++i) {
    offsets_.push_back(total);
    total += round_up(symbol.params[i].size);
  }
  chunks_.resize(total / kParamAlign);
  for (std::uint32_t i = 0; i < symbol.param_count; ++i) {
    if (symbol.params[i].size > 0) {
      std::memcpy(value(i), values[i], symbol.params[i].size);
    }
  }
}

std::byte* ParamBuffer::value(std::size_t i) noexcept {
  // Byte access to the Chunk array's object representation.
  return reinterpret_cast<std::byte*>(chunks_.data()) + offsets_[i];
}

std::vector<void*> ParamBuffer::pointers() {
  std::vector<void*> out;
  out.reserve(count());
  for (std::size_t i = 0; i < count(); ++i) {
    out.push_back(value(i));
  }
  return out;
}

}  // namespace tandem::driver::sim
