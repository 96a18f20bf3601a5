// SPDX-License-Identifier: Apache-2.0
// tandem/base/dtype.hpp — element types: DType (what a tensor may hold) and
// DeviceCopy (what may be copied bit-for-bit to and from the device).
//
// The two are independent (spec/runtime.md §7):
//   - every DeviceCopy type here is a DType;
//   - `bool` is a DType but not DeviceCopy: not every byte is a valid bool, so
//     a bool view is only made from bytes that were validated (0 or 1).
// The Tile numeric storage wrappers (tf32, fp8 e4m3/e5m2, packed fp4 e2m1)
// are DeviceCopy: they hold bits, and every bit pattern is a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace tandem {

enum class DType : std::uint8_t {
  f32,
  f64,
  f16,
  bf16,
  i8,
  i32,
  i64,
  u8,
  u32,
  u64,
  boolean,
  tf32,
  fp8_e4m3,
  fp8_e5m2,
  fp4_e2m1x2,
};

inline constexpr DType kAllDTypes[] = {DType::f32,      DType::f64,      DType::f16,       DType::bf16,
                                       DType::i8,       DType::i32,      DType::i64,       DType::u8,
                                       DType::u32,      DType::u64,      DType::boolean,   DType::tf32,
                                       DType::fp8_e4m3, DType::fp8_e5m2, DType::fp4_e2m1x2};

[[nodiscard]] constexpr std::uint32_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::f64:
    case DType::i64:
    case DType::u64:
      return 8;
    case DType::f32:
    case DType::i32:
    case DType::u32:
    case DType::tf32:
      return 4;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::i8:
    case DType::u8:
    case DType::boolean:
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::fp4_e2m1x2:
      return 1;
  }
  return 1;
}

// Scenario-file spelling: "f32", "bool", "fp8_e4m3", ...
[[nodiscard]] constexpr std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::i8:
      return "i8";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::u8:
      return "u8";
    case DType::u32:
      return "u32";
    case DType::u64:
      return "u64";
    case DType::boolean:
      return "bool";
    case DType::tf32:
      return "tf32";
    case DType::fp8_e4m3:
      return "fp8_e4m3";
    case DType::fp8_e5m2:
      return "fp8_e5m2";
    case DType::fp4_e2m1x2:
      return "fp4_e2m1x2";
  }
  return "?";
}

// The inverse of dtype_name; nullopt for any other text.
[[nodiscard]] constexpr std::optional<DType> dtype_from_name(std::string_view name) noexcept {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == name) return t;
  }
  return std::nullopt;
}

// Is every bit pattern of this element type a valid value?
[[nodiscard]] constexpr bool dtype_is_device_copy(DType t) noexcept { return t != DType::boolean; }

// --- storage wrappers (host side; device code uses the CUDA types of equal
// size and layout) -----------------------------------------------------------
struct half {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};
struct tf32 {
  std::uint32_t bits;
};  // fp32 layout, 10-bit mantissa used
struct fp8_e4m3 {
  std::uint8_t bits;
};
struct fp8_e5m2 {
  std::uint8_t bits;
};
struct fp4_e2m1x2 {
  std::uint8_t bits;
};  // two e2m1 values per byte

// --- traits ------------------------------------------------------------------
template <class T>
struct dtype_of;  // DType tag for a C++ element type
#define TANDEM_DTYPE_OF(T, TAG)                \
  template <>                                  \
  struct dtype_of<T> {                         \
    static constexpr DType value = DType::TAG; \
  }
TANDEM_DTYPE_OF(float, f32);
TANDEM_DTYPE_OF(double, f64);
TANDEM_DTYPE_OF(half, f16);
TANDEM_DTYPE_OF(bfloat16, bf16);
TANDEM_DTYPE_OF(std::int8_t, i8);
TANDEM_DTYPE_OF(std::int32_t, i32);
TANDEM_DTYPE_OF(std::int64_t, i64);
TANDEM_DTYPE_OF(std::uint8_t, u8);
TANDEM_DTYPE_OF(std::uint32_t, u32);
TANDEM_DTYPE_OF(std::uint64_t, u64);
TANDEM_DTYPE_OF(bool, boolean);
TANDEM_DTYPE_OF(tf32, tf32);
TANDEM_DTYPE_OF(fp8_e4m3, fp8_e4m3);
TANDEM_DTYPE_OF(fp8_e5m2, fp8_e5m2);
TANDEM_DTYPE_OF(fp4_e2m1x2, fp4_e2m1x2);
#undef TANDEM_DTYPE_OF

template <class T>
inline constexpr DType dtype_v = dtype_of<std::remove_cv_t<T>>::value;

// A type a tensor may hold.
template <class T>
concept DTypeElement = requires {
  dtype_of<std::remove_cv_t<T>>::value;
};

// A type that may be copied bit-for-bit to and from the device: every bit
// pattern is a valid value. Excludes bool.
template <class T>
concept DeviceCopy = DTypeElement<T> && std::is_trivially_copyable_v<T> && dtype_is_device_copy(dtype_v<T>) &&
    !std::is_same_v<std::remove_cv_t<T>, bool>;

static_assert(DeviceCopy<float> && DeviceCopy<half> && DeviceCopy<tf32> && DeviceCopy<fp8_e4m3>);
static_assert(DTypeElement<bool> && !DeviceCopy<bool>);

}  // namespace tandem
