// SPDX-License-Identifier: Apache-2.0
// tandem/testing/sim.hpp: the sim's controls and foreign memory, for tests,
// benchmarks and the scenario engine.
#include <string>

#include "platform_state.hpp"
#include "record_hook.hpp"
#include "tandem/errors.hpp"
#include "tandem/testing/sim.hpp"

namespace tandem::testing {

driver::SimBackend* sim_backend(const Platform& p) noexcept { return p.state()->sim; }

View adopt_foreign(const Platform& p, Context& ctx, DType t, std::uint64_t len) {
  const std::uint64_t bytes = len * dtype_size(t);
  driver::Backend& b = p.backend();
  const driver::ContextHandle ch = ctx.native();
  driver::DevicePtr ptr = 0;
  if (bytes > 0) {
    const driver::Result r = b.mem_alloc(ch, bytes, ptr);
    if (!r.ok()) {
      throw Error(r.status == driver::Status::out_of_memory ? ErrorCode::out_of_memory : ErrorCode::driver,
                  "foreign allocation of " + std::to_string(bytes) +
                      " bytes outside the runtime failed: " + b.describe(r));
    }
  }
  // The owner object: frees the memory with the driver when the runtime
  // says nobody uses it any more. It keeps the platform (and so the
  // backend) alive until then.
  try {
    return adopt(ctx, ptr, t, len, [keep = p, ch, ptr] {
      if (ptr != 0) (void)keep.backend().mem_free(ch, ptr);
    });
  } catch (...) {
    if (ptr != 0) (void)b.mem_free(ch, ptr);
    throw;
  }
}

void sim_control(const Platform& p, SimControl what, const Stream* s, std::uint64_t value) {
  driver::SimBackend* sim = p.state()->sim;
  if (sim == nullptr) return;
  switch (what) {
    case SimControl::stream_delay_us:
      sim->set_stream_delay(s->native(), std::chrono::microseconds(value));
      break;
    case SimControl::completion_unknown:
      sim->arm_completion_unknown(s->native());
      break;
    case SimControl::alloc_fail:
      sim->fail_nth_alloc(value);
      break;
    case SimControl::alloc_error:
      sim->fail_nth_alloc_with_driver_error(value);
      break;
    case SimControl::launch_fail:
      sim->fail_nth_launch(value);
      break;
    case SimControl::copy_fail:
      sim->fail_nth_copy(value);
      break;
  }
  if (Recorder* r = detail::active_recorder()) [[unlikely]] {
    const StreamRef ref(s != nullptr ? s->state() : nullptr);
    r->on_sim_control(what, s != nullptr ? &ref : nullptr, value);
  }
}

}  // namespace tandem::testing
