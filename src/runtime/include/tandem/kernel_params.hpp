// SPDX-License-Identifier: Apache-2.0
// tandem/kernel_params.hpp — the parameter ABI between launchers and kernels
// (BufferParam, TensorParam), as kernels and users include it. Defined once
// in the base layer (tandem/base/param_abi.hpp) with its slot sizes.
#pragma once

#include "tandem/base/param_abi.hpp"
