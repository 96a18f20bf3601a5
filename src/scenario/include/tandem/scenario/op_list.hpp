// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/op_list.hpp — the scenario ops as data, from the engine's
// own op table: `tandem ops`, the docs' op list and the malformed-input
// corpus generator read it, so none of them can drift from what the loader
// accepts and the engine runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tandem::scenario {

// [{"op", "family", "doc", "fields": [{"name", "kind", "required", "doc"}]}], in table order.
[[nodiscard]] nlohmann::ordered_json op_list_json();
// The same as a markdown table (docs/scenario-ops.md is this output).
[[nodiscard]] std::string op_list_markdown();

}  // namespace tandem::scenario
