// SPDX-License-Identifier: Apache-2.0
// kernels_cmd.hpp — `tandem kernels`: the kernel registry, as a table on a
// terminal or as JSON (model, name, parameters with access modes, dtypes,
// tiles, effect).
#pragma once

#include <nlohmann/json.hpp>

namespace tandem::cli {

nlohmann::ordered_json kernels_json();
void print_kernels(const nlohmann::ordered_json& kernels);

}  // namespace tandem::cli
