// SPDX-License-Identifier: Apache-2.0
#include "element_codec.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "tandem/base/element_value.hpp"
#include "tandem/base/half.hpp"

namespace tandem::scenario::detail {

namespace {

namespace hn = tandem;  // the half-precision conversions of the base layer

template <class T>
void store(std::byte* out, T v) noexcept {
  std::memcpy(out, &v, sizeof v);
}
template <class T>
T load(const std::byte* in) noexcept {
  T v;
  std::memcpy(&v, in, sizeof v);
  return v;
}

// Truncate toward zero, then wrap modulo 2^64 (NaN -> 0, +-inf and values
// beyond 2^64 saturate before wrapping).
std::uint64_t wrap_integer(double v) noexcept {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  constexpr double k2p63 = 9223372036854775808.0;
  if (v >= 2 * k2p63) return std::numeric_limits<std::uint64_t>::max();
  if (v >= k2p63) return static_cast<std::uint64_t>(v);
  if (v <= -k2p63) return static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::min());
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
}

std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool is_float(DType t) noexcept {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16 || t == DType::tf32;
}

// One random element: uniform in [-1, 1) for floats (a multiple of 2^-24,
// exact in f32), full-width bits for integers, 0/1 for bool.
void random_element(DType t, std::uint64_t bits, std::byte* out) noexcept {
  if (t == DType::boolean) {
    store<std::uint8_t>(out, static_cast<std::uint8_t>(bits & 1U));
  } else if (is_float(t)) {
    const double v = static_cast<double>(bits >> 40) * 0x1p-23 - 1.0;
    encode_element(t, v, out);
  } else {
    std::memcpy(out, &bits, dtype_size(t));  // little-endian: the low bytes
  }
}

// iota as the SIMT kernel computes it: fma(T(i), step, start) in T.
void iota_element(DType t, double start, double step, std::uint64_t i, std::byte* out) noexcept {
  switch (t) {
    case DType::f32:
    case DType::tf32:
      store<float>(out, std::fma(static_cast<float>(i), static_cast<float>(step), static_cast<float>(start)));
      return;
    case DType::f64:
      store<double>(out, std::fma(static_cast<double>(i), step, start));
      return;
    case DType::f16:
    case DType::bf16:
      encode_element(t,
                     static_cast<double>(std::fma(static_cast<float>(i), static_cast<float>(step),
                                                  static_cast<float>(start))),
                     out);
      return;
    case DType::boolean:
      store<std::uint8_t>(out, static_cast<double>(i) * step + start != 0.0 ? 1 : 0);
      return;
    default: {
      const std::uint64_t v = i * wrap_integer(step) + wrap_integer(start);  // wraps like the kernel
      std::memcpy(out, &v, dtype_size(t));
      return;
    }
  }
}

}  // namespace

void encode_element(DType t, double v, std::byte* out) noexcept {
  switch (t) {
    case DType::f32:
    case DType::tf32:
      store<float>(out, static_cast<float>(v));
      return;
    case DType::f64:
      store<double>(out, v);
      return;
    case DType::f16:
      store<std::uint16_t>(out, hn::to_half(static_cast<float>(v)).bits);
      return;
    case DType::bf16:
      store<std::uint16_t>(out, hn::to_bfloat16(static_cast<float>(v)).bits);
      return;
    case DType::boolean:
      store<std::uint8_t>(out, v != 0.0 ? 1 : 0);
      return;
    default: {
      const std::uint64_t w = wrap_integer(v);
      std::memcpy(out, &w, dtype_size(t));
      return;
    }
  }
}

double decode_element(DType t, const std::byte* in) noexcept {
  // The float storage formats without a conversion: their byte, as u8.
  return element_value(t, in).value_or(static_cast<double>(load<std::uint8_t>(in)));
}

double form_value(DType t, const ValueForm& form, std::uint64_t i) noexcept {
  switch (form.kind) {
    case ValueForm::Kind::fill:
      return form.fill;
    case ValueForm::Kind::values:
      return i < form.values.size() ? form.values[i] : 0.0;
    case ValueForm::Kind::iota: {
      std::byte b[8] = {};
      iota_element(t, form.iota_start, form.iota_step, i, b);
      return decode_element(t, b);
    }
    default:
      return 0.0;
  }
}

std::vector<std::byte> make_elements(DType t, const ValueForm& form, std::uint64_t count) {
  const std::size_t es = dtype_size(t);
  std::vector<std::byte> out(count * es);
  switch (form.kind) {
    case ValueForm::Kind::fill: {
      std::byte one[8] = {};
      encode_element(t, form.fill, one);
      for (std::uint64_t i = 0; i < count; ++i) std::memcpy(out.data() + i * es, one, es);
      break;
    }
    case ValueForm::Kind::iota:
      for (std::uint64_t i = 0; i < count; ++i)
        iota_element(t, form.iota_start, form.iota_step, i, out.data() + i * es);
      break;
    case ValueForm::Kind::random: {
      std::uint64_t state = form.seed;
      for (std::uint64_t i = 0; i < count; ++i) random_element(t, splitmix64(state), out.data() + i * es);
      break;
    }
    case ValueForm::Kind::values:
      for (std::uint64_t i = 0; i < count && i < form.values.size(); ++i)
        encode_element(t, form.values[i], out.data() + i * es);
      break;
    default:
      break;  // zero (and the non-data forms): all bytes 0
  }
  return out;
}

bool same_element(DType t, const std::byte* a, const std::byte* b) noexcept {
  if (is_float(t)) {
    const double x = decode_element(t, a), y = decode_element(t, b);
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y;
  }
  return std::memcmp(a, b, dtype_size(t)) == 0;
}

std::string element_text(DType t, const std::byte* in) {
  if (t == DType::boolean)
    return load<std::uint8_t>(in) == 0 ? "false" : load<std::uint8_t>(in) == 1 ? "true" : "invalid-bool";
  if (t == DType::i64) return std::to_string(load<std::int64_t>(in));
  if (t == DType::u64) return std::to_string(load<std::uint64_t>(in));
  std::ostringstream s;
  s.precision(9);
  s << decode_element(t, in);
  return s.str();
}

}  // namespace tandem::scenario::detail
