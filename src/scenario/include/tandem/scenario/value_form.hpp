// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/value_form.hpp — the data forms of `init`, upload `from`
// and check `equals`.
#pragma once

#include <cstdint>
#include <vector>

namespace tandem::scenario {

struct ValueForm {
  enum class Kind : std::uint8_t { none, zero, iota, fill, random, values, shadow };
  Kind kind = Kind::none;
  double fill = 0.0;        // fill
  std::uint64_t seed = 0;   // random
  double iota_start = 0.0;  // iota (init "iota" = start 0, step 1)
  double iota_step = 1.0;
  std::vector<double> values;  // values (bools as 0/1)
};

}  // namespace tandem::scenario
