// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/device_json.hpp — a device (and its backend) as report JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "tandem/device.hpp"

namespace tandem::scenario {

nlohmann::ordered_json device_json(const Device& device);

}  // namespace tandem::scenario
