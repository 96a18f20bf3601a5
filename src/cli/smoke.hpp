// SPDX-License-Identifier: Apache-2.0
// smoke.hpp — `tandem smoke`: a short end-to-end exercise of the runtime on
// one device, run by the scenario engine from an embedded scenario (so its
// report is an ordinary tandem.report/1): buffers cycled and dropped while
// their fills may be in flight, a free-memory check after retirement,
// uniqueness of a buffer and its slice, and a cross-stream conflict under
// the reject policy (refused while a spin kernel holds the buffer,
// accepted once it is done).
#pragma once

#include <string>

#include "tandem/device.hpp"
#include "tandem/scenario/executor.hpp"

namespace tandem::cli {

// The embedded scenario's text, for `device` (tandem.scenario/1).
[[nodiscard]] std::string smoke_scenario(int device);

// Runs it on `backend`.
[[nodiscard]] scenario::RunResult run_smoke(BackendKind backend, int device);

}  // namespace tandem::cli
