// SPDX-License-Identifier: Apache-2.0
// Packing a launch's parameter values (catalog.hpp: pack_params).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "tandem/kernels/catalog.hpp"

namespace tandem::kernels {

namespace {

std::string number_string(const ScalarValue& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    std::string s = std::to_string(*d);
    return s;
  }
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return std::to_string(std::get<std::uint64_t>(v));
}

// v as an integer of type I, exactly; false when not integral or out of range.
template <class I>
bool to_integer(const ScalarValue& v, I& out) {
  if (const auto* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d) || std::trunc(*d) != *d) return false;
    // Both bounds are exact powers of two (or zero) as doubles.
    const double lo = static_cast<double>(std::numeric_limits<I>::min());
    const double hi_excl = static_cast<double>(std::numeric_limits<I>::max()) + 1.0;
    if (*d < lo || *d >= hi_excl) return false;
    out = static_cast<I>(*d);
    return true;
  }
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    if (!std::in_range<I>(*i)) return false;
    out = static_cast<I>(*i);
    return true;
  }
  const std::uint64_t u = std::get<std::uint64_t>(v);
  if (!std::in_range<I>(u)) return false;
  out = static_cast<I>(u);
  return true;
}

double to_double(const ScalarValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return static_cast<double>(std::get<std::uint64_t>(v));
}

template <class C>
void put(std::byte* dst, C value) {
  std::memcpy(dst, &value, sizeof(C));
}

// Writes scalar `v` as the C type of `type` into dst; returns "" or why not.
std::string put_scalar(std::byte* dst, DType type, const ScalarValue& v) {
  auto integer = [&](auto tag) -> std::string {
    using I = decltype(tag);
    I x{};
    if (!to_integer(v, x)) {
      return number_string(v) + " is not an integer in [" + std::to_string(std::numeric_limits<I>::min()) +
             ", " + std::to_string(std::numeric_limits<I>::max()) + "]";
    }
    put(dst, x);
    return {};
  };
  switch (type) {
    case DType::f32: {
      const double d = to_double(v);
      if (!std::isfinite(d) || std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) {
        return number_string(v) + " is not a finite f32 value";
      }
      put(dst, static_cast<float>(d));
      return {};
    }
    case DType::f64: {
      const double d = to_double(v);
      if (!std::isfinite(d)) return number_string(v) + " is not a finite f64 value";
      put(dst, d);
      return {};
    }
    case DType::i8:
      return integer(std::int8_t{});
    case DType::i32:
      return integer(std::int32_t{});
    case DType::i64:
      return integer(std::int64_t{});
    case DType::u8:
      return integer(std::uint8_t{});
    case DType::u32:
      return integer(std::uint32_t{});
    case DType::u64:
      return integer(std::uint64_t{});
    default:
      break;
  }
  return "scalars of this dtype are not supported";
}

}  // namespace

void** PackedParams::pointers() noexcept {
  for (std::uint32_t i = 0; i < count_; ++i) pointers_[i] = storage_[i];
  return pointers_;
}

std::span<const std::byte> PackedParams::bytes(std::uint32_t i) const noexcept {
  if (i >= count_) return {};
  return {storage_[i], sizes_[i]};
}

std::string pack_params(const KernelEntry& entry, std::span<const LaunchArg> args, PackedParams& out) {
  // Built only for a message: a launch that passes builds no string.
  const auto who = [&] { return std::string(model_name(entry.model)) + " kernel '" + entry.name + "'"; };
  if (args.size() != entry.params.size()) {
    return who() + " takes " + std::to_string(entry.params.size()) + " parameters; got " +
           std::to_string(args.size());
  }
  if (args.size() > PackedParams::kMaxParams || entry.symbol == nullptr ||
      entry.symbol->param_count != entry.params.size()) {
    return who() + ": inconsistent parameter table";  // a kernels/ bug
  }
  // Only the slots used are cleared (a whole PackedParams is over 600
  // bytes, written on every launch otherwise); a scalar narrower than its
  // slot leaves the rest zero.
  out.count_ = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& p = entry.params[i];
    const LaunchArg& a = args[i];
    std::byte* dst = out.storage_[i];
    const std::uint16_t size = entry.symbol->params[i].size;
    std::memset(dst, 0, std::min<std::size_t>(size, PackedParams::kSlotBytes));
    out.sizes_[i] = size;
    if (p.kind == ArgKind::view) {
      put(dst, static_cast<std::uint64_t>(a.ptr));
      if (p.rank == 0) {  // BufferParam {T* data; uint64 len}
        std::uint64_t len = static_cast<std::uint64_t>(std::max<std::int64_t>(a.shape.elements(), 0));
        if (a.shape.rank == 0) len = 0;
        if (p.bytes) len *= dtype_size(a.shape.dtype);
        put(dst + kBufferParamLenOffset, len);
      } else {  // TensorParam<T, R> {T* data; int64 shape[R]; int64 stride[R]}
        if (a.shape.rank != p.rank) {
          return who() + ": '" + p.name + "' must be a rank-" + std::to_string(p.rank) +
                 " tensor; got rank " + std::to_string(a.shape.rank);
        }
        for (int k = 0; k < p.rank; ++k) {
          const std::size_t at = sizeof(std::int64_t) * static_cast<std::size_t>(k);
          put(dst + kTensorParamShapeOffset + at, a.shape.shape[k]);
          put(dst + tensor_param_stride_offset(p.rank) + at, a.shape.stride[k]);
        }
      }
    } else {
      std::optional<ScalarValue> v = a.scalar;
      if (!v && p.default_value) v = *p.default_value;
      if (!v) return who() + ": missing scalar '" + p.name + "'";
      if (std::string err = put_scalar(dst, p.scalar_dtype, *v); !err.empty()) {
        return who() + ": scalar '" + p.name + "' = " + err;
      }
    }
  }
  out.count_ = static_cast<std::uint32_t>(args.size());
  return {};
}

}  // namespace tandem::kernels
