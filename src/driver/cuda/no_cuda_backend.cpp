// SPDX-License-Identifier: Apache-2.0
// Built when no CUDA Toolkit was found at configure time.
#include "tandem/driver/backend.hpp"

namespace tandem::driver {

std::unique_ptr<Backend> load_cuda_backend(std::string& why) {
  why = "this tandem was built without the CUDA Toolkit (simulated device only)";
  return nullptr;
}

}  // namespace tandem::driver
