// SPDX-License-Identifier: Apache-2.0
// tandem/launch.hpp — the one submission path both programming models use.
//
// A kernel launch names its device entry (a KernelSymbol), its grid, its
// packed parameters, and — derived by the typed launchers from the kernel's
// parameter list, so callers cannot forget one — every view it touches with
// its access mode. The runtime turns each access into a lease:
//   - validates that every view belongs to the stream's context
//     (Error(device_mismatch) before any lease is taken);
//   - finds conflicting leases (overlapping bytes, at least one write,
//     another stream); policy `order` makes this stream wait for them on the
//     device (no host block), `reject` throws ConflictError and takes nothing;
//   - enqueues the work and records a pooled completion event;
//   - holds the leases (and so the memory) until retirement proves the work
//     complete, whatever happens to the returned future.
// Two accesses of one launch that alias each other are the kernel's
// business, not a conflict. Empty ranges take no lease.
//
// Ordering: async on `stream`. Blocking: waits for the device only while it
// runs more than ContextOptions::max_queued_per_stream submissions (256 by
// default) behind `stream`, holding no lock (docs/runtime.md, "The bound on
// the device's queue"), as the driver's full queue would make it wait.
// Thread-safety: any thread, any stream.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/launch_future.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace tandem {

// How a launch touches a view: the base layer's AccessMode (read, write,
// read_write, atomic), under the name launches have always used.
using Access = AccessMode;

// The one launch configuration type of both models: SIMT launches pass
// their grid and block; Tile launches leave them to the tile partition.
struct LaunchConfig {
  driver::Dim3 grid;
  driver::Dim3 block;
  std::uint32_t shared_bytes = 0;
  [[nodiscard]] driver::LaunchDims dims() const noexcept { return {grid, block, shared_bytes}; }
};

[[nodiscard]] driver::AccessMode lease_mode(Access a, bool view_is_atomic) noexcept;

struct ViewAccess {
  const View* view;
  Access access;
};

// Launches `symbol` with cuLaunchKernel-style `params` (params[i] points at
// parameter i). Throws Error(device_mismatch | invalid_handle | unsupported |
// driver) or ConflictError; on any throw nothing was submitted and nothing
// is held.
LaunchFuture launch(StreamRef stream, const driver::KernelSymbol& symbol, const driver::LaunchDims& dims,
                    void** params, std::span<const ViewAccess> accesses);

// --- transfers: submissions too, with the same lease rules ---------------------
// Device-to-device copy of equal-sized contiguous views.
LaunchFuture copy(StreamRef stream, const View& src, const View& dst);
// Sets every byte of a contiguous view.
LaunchFuture memset_bytes(StreamRef stream, const View& dst, std::uint8_t value);
// Host-to-device: `bytes` is copied into the submission at the call (so the
// caller's memory may be reused at once); its size must equal the view's.
LaunchFuture upload(StreamRef stream, const View& dst, std::span<const std::byte> bytes);

// A device-to-host transfer in flight. get() waits for retirement and
// returns the bytes.
class Download {
 public:
  Download(LaunchFuture f, std::shared_ptr<std::vector<std::byte>> data) noexcept
      : future_(std::move(f)), data_(std::move(data)) {}
  [[nodiscard]] const LaunchFuture& future() const noexcept { return future_; }
  // Blocks until the transfer has retired. Throws Error(timeout) or
  // Error(driver) when its completion is unknown.
  std::vector<std::byte> get(std::chrono::nanoseconds timeout = std::chrono::hours(24));

 private:
  LaunchFuture future_;
  std::shared_ptr<std::vector<std::byte>> data_;
};
// Device-to-host of a contiguous view (a read lease).
Download download(StreamRef stream, const View& src);
// download(...).get() of any view: a strided tensor view is gathered on the
// host into row-major element order.
std::vector<std::byte> read_back(StreamRef stream, const View& src,
                                 std::chrono::nanoseconds timeout = std::chrono::hours(24));

}  // namespace tandem
