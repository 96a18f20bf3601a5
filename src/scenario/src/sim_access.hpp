// sim_access.hpp — TEMPORARY until the runtime's testing header lands.
#pragma once

#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/driver/sim_backend.hpp"
#include "tandem/errors.hpp"
#include "tandem/view.hpp"

namespace tandem::testing {

inline driver::SimBackend* sim_backend(const Platform& p) noexcept { return p.sim_backend(); }

inline View adopt_foreign(const Platform& p, Context& ctx, DType t, std::uint64_t len) {
  const std::uint64_t bytes = len * dtype_size(t);
  driver::Backend& b = p.backend();
  const driver::ContextHandle ch = ctx.native();
  driver::DevicePtr ptr = 0;
  if (bytes > 0) {
    const driver::Result r = b.mem_alloc(ch, bytes, ptr);
    if (!r.ok()) {
      throw Error(r.status == driver::Status::out_of_memory ? ErrorCode::out_of_memory : ErrorCode::driver,
                  "foreign allocation of " + std::to_string(bytes) + " bytes outside the runtime failed: " +
                      b.describe(r));
    }
  }
  Platform keep = p;
  try {
    return adopt(ctx, ptr, t, len, [keep, ch, ptr] {
      if (ptr != 0) (void)keep.backend().mem_free(ch, ptr);
    });
  } catch (...) {
    if (ptr != 0) (void)b.mem_free(ch, ptr);
    throw;
  }
}

}  // namespace tandem::testing
