// SPDX-License-Identifier: Apache-2.0
// tandem/base/element_value.hpp — one element's value as a double, read from
// unaligned bytes.
//
// The scenario engine reads elements this way (checks, reports) and the
// runtime's recorder writes what it reads back into a scenario the engine
// then reads: one decoding, so that both agree on every type.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>

#include "tandem/base/dtype.hpp"
#include "tandem/base/half.hpp"

namespace tandem {

// The value of the element of type `t` at `p`, for the types with a numeric
// value of their own (tf32 is read as the f32 it is stored as); nullopt for
// the 8-bit and 4-bit float storage formats, which have no conversion here.
[[nodiscard]] inline std::optional<double> element_value(DType t, const std::byte* p) noexcept {
  const auto load = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case DType::f32:
    case DType::tf32:
      return load(float{});
    case DType::f64:
      return load(double{});
    case DType::f16:
      return static_cast<double>(to_float(half{load(std::uint16_t{})}));
    case DType::bf16:
      return static_cast<double>(to_float(bfloat16{load(std::uint16_t{})}));
    case DType::i8:
      return load(std::int8_t{});
    case DType::i32:
      return load(std::int32_t{});
    case DType::i64:
      return static_cast<double>(load(std::int64_t{}));
    case DType::u8:
    case DType::boolean:
      return load(std::uint8_t{});
    case DType::u32:
      return load(std::uint32_t{});
    case DType::u64:
      return static_cast<double>(load(std::uint64_t{}));
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::fp4_e2m1x2:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace tandem
