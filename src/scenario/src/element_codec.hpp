// SPDX-License-Identifier: Apache-2.0
// element_codec.hpp — scenario numbers <-> device element bytes.
//
// A scenario writes every value as a JSON number; the device holds elements
// of a DType. These functions convert both ways exactly as the kernels do
// (integers wrap, f16/bf16 round to nearest even, iota uses the kernel's
// fused multiply-add), so `init`, `upload` and `check contents` agree with
// what a kernel would have written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tandem/dtype.hpp"
#include "tandem/scenario/value_form.hpp"

namespace tandem::scenario::detail {

// One element of `t` holding `v` (integers: truncated toward zero, then
// wrapped to the type's width; bool: v != 0).
void encode_element(DType t, double v, std::byte* out) noexcept;
// The element's value as a double (exact for every type but 64-bit integers
// beyond 2^53).
[[nodiscard]] double decode_element(DType t, const std::byte* in) noexcept;

// `count` elements of `t` for a value form: zero, fill, iota (start, step),
// random (seeded, reproducible: floats in [-1, 1), integers over the full
// width, bool 0/1), values (must have exactly `count` entries: the caller
// checks). `none` and `shadow` are not data forms.
[[nodiscard]] std::vector<std::byte> make_elements(DType t, const ValueForm& form, std::uint64_t count);

// Element i of what `form` describes (fill, iota, values only).
[[nodiscard]] double form_value(DType t, const ValueForm& form, std::uint64_t i) noexcept;

// Do two elements hold the same value? Bitwise, except that all NaNs are
// equal and +0 == -0.
[[nodiscard]] bool same_element(DType t, const std::byte* a, const std::byte* b) noexcept;

// Printable value of one element ("1.5", "-3", "true").
[[nodiscard]] std::string element_text(DType t, const std::byte* in);

}  // namespace tandem::scenario::detail
