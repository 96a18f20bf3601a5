// SPDX-License-Identifier: Apache-2.0
// recorded_values.cpp — see recorded_values.hpp.
#include "recorded_values.hpp"

#include <charconv>
#include <cstring>

#include "tandem/base/element_value.hpp"

namespace tandem::detail::recorded {

// Names the writer gives need no escapes; a kernel's entry point or a
// description might (a symbol name is the program's).
std::string json_quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {

// {"iota": ...} for whole numbers start + i * step that every dtype holds
// exactly (below 2^24), else nullopt.
std::optional<std::string> iota_form(DType t, std::span<const std::byte> bytes, std::size_t n) {
  if (n < 3) return std::nullopt;
  const std::size_t size = dtype_size(t);
  const auto first = element_value(t, bytes.data()), second = element_value(t, bytes.data() + size);
  if (!first || !second) return std::nullopt;
  const double start = *first, step = *second - *first;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = element_value(t, bytes.data() + i * size);
    const double want = start + static_cast<double>(i) * step;
    if (!v || *v != want || want != static_cast<double>(static_cast<std::int64_t>(want)) || want >= 0x1p24 ||
        want <= -0x1p24) {
      return std::nullopt;
    }
  }
  return "{\"iota\": {\"start\": " + number(start) + ", \"step\": " + number(step) + "}}";
}

}  // namespace

// An upload's data as a `from` form: {"fill": v} when every element is the
// same, else the list of values.
std::optional<std::string> values_form(DType t, std::span<const std::byte> bytes) {
  const std::size_t size = dtype_size(t);
  const std::size_t n = bytes.size() / size;
  bool same = true;
  for (std::size_t i = 1; i < n && same; ++i) same = std::memcmp(&bytes[0], &bytes[i * size], size) == 0;
  if (n > 0 && same) {
    const auto v = element_value(t, bytes.data());
    if (!v) return std::nullopt;
    return "{\"fill\": " + number(*v) + "}";
  }
  if (auto iota = iota_form(t, bytes, n)) return iota;
  return values_list(t, bytes);
}

std::optional<std::string> values_list(DType t, std::span<const std::byte> bytes) {
  const std::size_t size = dtype_size(t);
  std::string out = "[";
  for (std::size_t i = 0; i < bytes.size() / size; ++i) {
    const auto v = element_value(t, bytes.data() + i * size);
    if (!v) return std::nullopt;
    out += (i ? ", " : "") + number(*v);
  }
  return out + "]";
}

std::string int_list(std::span<const std::int64_t> xs) {
  std::string out = "[";
  for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
  return out + "]";
}

std::string dims(const driver::Dim3& d) {
  std::string out = "[" + std::to_string(d.x);
  if (d.y != 1 || d.z != 1) out += ", " + std::to_string(d.y);
  if (d.z != 1) out += ", " + std::to_string(d.z);
  return out + "]";
}

double scalar_at(DType t, const void* p) {
  const auto v = element_value(t, static_cast<const std::byte*>(p));
  return v ? *v : 0.0;
}

std::string_view derive_op(ViewOrigin origin) noexcept {
  static constexpr std::string_view kOps[] = {"alloc",       "foreign",     "slice",       "peel",
                                              "atomic",      "as_buffer",   "tensor_view", "to_tensor",
                                              "into_buffer", "reinterpret", "split",       "split"};
  return kOps[static_cast<std::size_t>(origin)];
}

}  // namespace tandem::detail::recorded
