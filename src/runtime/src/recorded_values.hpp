// SPDX-License-Identifier: Apache-2.0
// recorded_values.hpp — how a recording (scenario_writer.hpp) writes
// numbers, lists and device data as tandem.scenario/1 JSON text.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tandem/driver/types.hpp"
#include "tandem/dtype.hpp"
#include "tandem/recorder.hpp"

namespace tandem::detail::recorded {

[[nodiscard]] std::string json_quoted(std::string_view s);
// The shortest text that reads back as `v`.
[[nodiscard]] std::string number(double v);
// An upload's data as a `from` form: {"fill": v} when every element is the
// same, {"iota": ...} for whole numbers start + i * step that every dtype
// holds exactly, else the list of values; nullopt for a type a scenario
// cannot write.
[[nodiscard]] std::optional<std::string> values_form(DType t, std::span<const std::byte> bytes);
// Always the list of values: a fill or iota would take the view's length,
// not the data's (an upload refused for its size must stay refused).
[[nodiscard]] std::optional<std::string> values_list(DType t, std::span<const std::byte> bytes);
[[nodiscard]] std::string int_list(std::span<const std::int64_t> xs);
// A launch dimension as [x], [x, y] or [x, y, z].
[[nodiscard]] std::string dims(const driver::Dim3& d);
// The scalar of type `t` at `p` (0 for a type a scenario cannot write).
[[nodiscard]] double scalar_at(DType t, const void* p);
// The scenario op a derivation is written as (split: its halves).
[[nodiscard]] std::string_view derive_op(ViewOrigin origin) noexcept;

}  // namespace tandem::detail::recorded
