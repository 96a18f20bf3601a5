// SPDX-License-Identifier: Apache-2.0
#include "tandem/scenario/device_json.hpp"

namespace tandem::scenario {

nlohmann::ordered_json device_json(const Device& d) {
  return {{"ordinal", d.ordinal()},
          {"name", d.name()},
          {"compute_capability", d.platform().is_sim() ? std::string("sim") : d.compute_capability()},
          {"uuid", d.uuid()},
          {"pci_bus_id", d.pci_bus_id()},
          {"driver", d.platform().driver_version()},
          {"total_bytes", d.total_memory()},
          {"multiprocessors", d.info().multiprocessors}};
}

}  // namespace tandem::scenario
