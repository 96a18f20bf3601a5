// SPDX-License-Identifier: Apache-2.0
// tandem/testing/sim.hpp — what tests, benchmarks and the scenario engine
// may do that users of the runtime may not: reach the simulated device's own
// controls, and hand the runtime memory from outside it.
//
// The runtime's public headers name no concrete backend; this header is the
// one place above src/driver that includes the simulated device
// (sim_backend.hpp). scripts/check-layers enforces that.
#pragma once

#include <chrono>
#include <cstdint>

#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/driver/sim_backend.hpp"
#include "tandem/dtype.hpp"
#include "tandem/recorder.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace tandem::testing {

// The simulated device's controls (faults, delays, violations); nullptr when `p` does not run the sim.
[[nodiscard]] driver::SimBackend* sim_backend(const Platform& p) noexcept;

// Memory from outside the runtime (as another library would hand it over): `len` elements of `t`
// allocated with the platform's raw driver in `ctx`, adopted with an owner that frees it with the
// driver once the runtime says nobody uses it (the owner keeps the platform alive until then).
// len 0 adopts a null pointer. Throws tandem::Error(out_of_memory when the driver says so, else driver)
// with the message "foreign allocation of <bytes> bytes outside the runtime failed: <driver's description>".
[[nodiscard]] View adopt_foreign(const Platform& p, Context& ctx, DType t, std::uint64_t len);

// The sim's controls as the scenario engine uses them, reached through the
// runtime so that a recording (TANDEM_RECORD) writes them in its "sim"
// section. Each does nothing when `p` does not run the sim.
//   stream_delay_us: every operation later enqueued on `s` takes at least `value` µs;
//   completion_unknown: the next event recorded on `s` reports completion unknown;
//   alloc_fail, alloc_error, launch_fail, copy_fail: the value-th call of that
//   kind from now fails (SimBackend::fail_nth_*); 0 disarms. `s` is unused.
void sim_control(const Platform& p, SimControl what, const Stream* s, std::uint64_t value);

}  // namespace tandem::testing
