// SPDX-License-Identifier: Apache-2.0
// sha256.hpp — SHA-256 of a byte string, as lower-case hex (the report's
// scenario.sha256 names exactly which file ran).
#pragma once

#include <string>
#include <string_view>

namespace tandem::scenario::detail {

[[nodiscard]] std::string sha256_hex(std::string_view data);

}  // namespace tandem::scenario::detail
