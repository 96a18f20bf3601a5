// SPDX-License-Identifier: Apache-2.0
// prepared_launch.hpp — one catalog kernel with its two views (one read,
// one write), launch dimensions and packed parameters prepared once, so
// that the raw and the tracked launch hand the driver the same function,
// grid, block and parameter bytes on the same stream.
//
//   raw()      cuLaunchKernel straight from libcuda (no leases, no event)
//   tracked()  tandem::launch with the same parameters and the accesses the
//              catalog gives the kernel's parameters
//   catalog()  kernels::launch: the user-facing launcher, which also checks
//              the arguments and packs the parameters on every call
#pragma once

#include <cstdint>

#include "bench_env.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

enum class KernelKind : std::uint8_t {
  simt_copy,  // SIMT copy f32, 1 element, <<<1, 32>>>
  tile_copy,  // Tile copy f32, rank 1, the default 4096 tile, one tile: 1 block
};

class PreparedLaunch {
 public:
  // Allocates the views on `stream` and waits for the stream (not for
  // retirement: it is safe while the loaded state holds work in flight).
  PreparedLaunch(const Env& e, const tandem::Stream& stream, KernelKind kind);
  PreparedLaunch(const PreparedLaunch&) = delete;  // parameters point into this object
  PreparedLaunch& operator=(const PreparedLaunch&) = delete;

  // Returns the CUresult; 0 on success.
  int raw(const RawDriver& d) const {
    const tandem::driver::LaunchDims& g = dims_;
    return d.launch(function_, g.grid.x, g.grid.y, g.grid.z, g.block.x, g.block.y, g.block.z, g.shared_bytes,
                    native_stream_, params_, nullptr);
  }
  tandem::LaunchFuture tracked() const;
  tandem::LaunchFuture catalog() const;

  [[nodiscard]] const tandem::kernels::KernelEntry& entry() const { return *entry_; }
  [[nodiscard]] void* native_stream() const { return native_stream_; }
  [[nodiscard]] const tandem::Stream& stream() const { return stream_; }
  [[nodiscard]] void** params() const { return params_; }
  [[nodiscard]] const tandem::driver::LaunchDims& dims() const { return dims_; }

 private:
  tandem::Stream stream_;
  void* native_stream_ = nullptr;
  KernelKind kind_;
  const tandem::kernels::KernelEntry* entry_ = nullptr;
  tandem::View src_;
  tandem::View dst_;
  tandem::kernels::PackedParams packed_;
  void** params_ = nullptr;
  tandem::driver::LaunchDims dims_;
  tandem::ViewAccess accesses_[2] = {};
  tandem::kernels::Arg args_[2];
  void* function_ = nullptr;
};

}  // namespace tandem_bench
