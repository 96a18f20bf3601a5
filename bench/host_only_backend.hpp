// SPDX-License-Identifier: Apache-2.0
// host_only_backend.hpp — a backend whose device work costs nothing: the
// simulated device's memory, streams, events and kernels, but launches,
// copies, event records, waits and queries return at once, and an event
// completes a fixed time after its record (TANDEM_BENCH_HOST_EVENT_US,
// default 5), as after an empty kernel. A `spin` launch holds its stream
// busy for its duration (later events on it complete after it), so the
// loaded state holds its submissions in flight here too. Under TANDEM_BENCH_BACKEND=host the tracked
// benchmarks measure tandem's own CPU path (leases, records, retirement) with no driver cost beside it, for
// profiling on a machine without a GPU. No figure it gives is a GPU figure, and nothing runs on the device:
// contents are garbage.
#pragma once

#include <memory>

#include "tandem/driver/backend.hpp"

namespace tandem_bench {

std::unique_ptr<tandem::driver::Backend> make_host_only_backend();

}  // namespace tandem_bench
