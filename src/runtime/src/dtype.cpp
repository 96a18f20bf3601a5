#include "tandem/dtype.hpp"

namespace tandem {

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i8: return "i8";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
    case DType::boolean: return "bool";
    case DType::tf32: return "tf32";
    case DType::fp8_e4m3: return "fp8_e4m3";
    case DType::fp8_e5m2: return "fp8_e5m2";
    case DType::fp4_e2m1x2: return "fp4_e2m1x2";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) noexcept {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == name) return t;
  }
  return std::nullopt;
}

}  // namespace tandem
