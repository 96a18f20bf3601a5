// SPDX-License-Identifier: Apache-2.0
// tandem/dtype.hpp — element types, as users include them. The definitions
// are the base layer's (tandem/base/dtype.hpp), shared with the driver and
// the kernels; this path stays so user code keeps compiling.
#pragma once

#include "tandem/base/dtype.hpp"
