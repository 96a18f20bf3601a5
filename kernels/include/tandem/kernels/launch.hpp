// SPDX-License-Identifier: Apache-2.0
// tandem/kernels/launch.hpp — launching a catalog kernel through the shared
// runtime: the one dynamic launcher both programming models use.
//
//   namespace k = tandem::kernels;
//   const k::KernelEntry* axpy = k::find(k::Model::simt, "axpy", tandem::DType::f32);
//   k::Arg args[] = {k::Arg::of(x), k::Arg::of(y), k::Arg::value(2.0)};
//   tandem::LaunchFuture f = k::launch(stream, *axpy, args);
//
// The kernel's parameter list decides the accesses: every view parameter is
// leased with the mode the catalog gives it (atomic parameters as writes),
// so a caller cannot forget or weaken one. SIMT kernels take buffer views
// (grid/block optional: the catalog's default rule); Tile kernels take
// tensor views and derive the grid from the partition (a grid or block is
// an error). Ordering, blocking and errors are those of tandem::launch; a
// catalog rule that fails (arity, dtype, rank, shapes, scalar range) throws
// Error(invalid_dtype | out_of_range | unsupported) before anything is leased
// (and reaches a recording: tandem/refused_launch.hpp).
#pragma once

#include <optional>
#include <span>

#include "tandem/context.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/launch.hpp"

namespace tandem::kernels {

// One argument, in parameter order: a view, a scalar, or the scalar's default.
struct Arg {
  const View* view = nullptr;
  std::optional<ScalarValue> scalar;

  [[nodiscard]] static Arg of(const View& v) noexcept { return Arg{&v, std::nullopt}; }
  [[nodiscard]] static Arg value(ScalarValue s) noexcept { return Arg{nullptr, s}; }
  [[nodiscard]] static Arg defaulted() noexcept { return Arg{}; }
};

// The shape the catalog sees for a view (buffer: rank 1, stride 1).
[[nodiscard]] ArgShape shape_of(const View& v) noexcept;

// Sync: loads every catalog kernel into `ctx` (Context::load_kernel), so
// that no later first launch waits for work running on the device (CUDA
// loads modules lazily, and a load waits for running kernels). The kernel
// with no body (declared.hpp) too.
void load_catalog(const Context& ctx);

LaunchFuture launch(StreamRef stream, const KernelEntry& entry, std::span<const Arg> args,
                    std::optional<driver::Dim3> grid = std::nullopt,
                    std::optional<driver::Dim3> block = std::nullopt);
// SIMT with an explicit LaunchConfig (shared memory must be 0: the catalog's
// kernels use none).
LaunchFuture launch(StreamRef stream, const KernelEntry& entry, std::span<const Arg> args,
                    const LaunchConfig& config);

}  // namespace tandem::kernels
