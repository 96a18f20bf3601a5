// SPDX-License-Identifier: Apache-2.0
// launch_memo.hpp — what kernels::launch remembers, per host thread, of the
// last launch whose checks and packing passed.
//
// check_args, launch_dims and the packed parameter bytes are functions of
// the kernel, its arguments' shapes, its scalars, the requested grid and
// block, and (for the bytes) the views' device pointers. A loop launches the
// same kernel on the same shapes again and again: a repeat that matches in
// all but the pointers takes the remembered dimensions and bytes, and only
// the pointers are written anew. On the host-only backend the checks took
// about 390 of kernels::launch's 1,030 own instructions, and building the
// shapes, the launch arguments and the packed bytes another 370. Anything
// that differs (another kernel, a shape, a stride, a dtype, a scalar, grid
// or block) takes the full path again, and so gets its errors from it.
// A few launches are remembered, one per kernel: loops alternate kernels
// (the sustained-load loop: SIMT fill, Tile scale). Thread-local: no lock,
// no sharing, nothing to invalidate (catalog entries live for the process).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "tandem/driver/types.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/view.hpp"

namespace tandem::kernels::detail {

// One remembered launch. The fields a repeat reads first sit together at
// the front (the count, grid and block, and per argument whether it is a
// view, its access and whether it is empty); the shapes, scalars and bytes
// follow, each read only for the arguments the kernel has. A repeat reads
// nothing of the catalog entry but its address.
class RememberedLaunch {
 public:
  // Whether a launch with n arguments, `grid` and `block` may be the
  // remembered one (LaunchMemo::find matched the kernel); the arguments are
  // then compared one by one.
  [[nodiscard]] bool may_repeat(std::size_t n, const std::optional<driver::Dim3>& grid,
                                const std::optional<driver::Dim3>& block) const noexcept {
    return n_ == n && grid_ == grid && block_ == block;
  }
  // Parameter i: a view (else a scalar), and its access when it is one.
  [[nodiscard]] bool is_view(std::size_t i) const noexcept { return view_[i]; }
  [[nodiscard]] AccessMode access(std::size_t i) const noexcept { return access_[i]; }
  // Whether view `v` as argument i has the remembered shape; if so, its
  // device pointer is written into the remembered bytes.
  bool repoint(std::size_t i, const View& v) noexcept {
    if (!same(shapes_[i], v)) return false;
    // An empty view (a zero extent, as View::extent_bytes says) is packed
    // with a null pointer; the shape, equal, says whether it is one.
    packed_.set_view_pointer(static_cast<std::uint32_t>(i), empty_[i] ? 0 : v.device_ptr());
    return true;
  }
  [[nodiscard]] bool same_scalar(std::size_t i, const std::optional<ScalarValue>& s) const noexcept {
    return scalars_[i] == s;
  }
  [[nodiscard]] const driver::LaunchDims& dims() const noexcept { return dims_; }
  [[nodiscard]] void** params() const noexcept { return params_; }

 private:
  friend class LaunchMemo;

  // After check_args, launch_dims and pack_params passed for these (at most
  // kMaxParams shapes: LaunchMemo::remember checks).
  void remember(const KernelEntry& e, std::span<const ArgShape> shapes, std::span<const LaunchArg> args,
                const std::optional<driver::Dim3>& grid, const std::optional<driver::Dim3>& block,
                const driver::LaunchDims& dims, const PackedParams& packed) noexcept {
    n_ = shapes.size();
    for (std::size_t i = 0; i < n_; ++i) {
      view_[i] = e.params[i].kind == ArgKind::view;
      access_[i] = e.params[i].mode;
      empty_[i] = shapes[i].rank == 0 || shapes[i].elements() == 0;  // View::extent_bytes() == 0
      shapes_[i] = shapes[i];
      scalars_[i] = args[i].scalar;
    }
    grid_ = grid;
    block_ = block;
    dims_ = dims;
    packed_ = packed;
    params_ = packed_.pointers();  // into packed_, which never moves
  }

  // Equal as shape_of(v) would be, in what the checks and the packing see:
  // dtype, rank, and extent and stride in each of the rank's dimensions. A
  // buffer's view holds the rank-1 shape and stride 1 that
  // ArgShape::buffer gives it (View::set_buffer), so one comparison serves
  // buffers and tensors.
  static bool same(const ArgShape& a, const View& v) noexcept {
    if (a.dtype != v.dtype() || a.rank != v.rank()) return false;
    const std::int64_t* shape = v.shape().data();
    const std::int64_t* strides = v.strides().data();
    for (int k = 0; k < a.rank; ++k) {
      if (a.shape[k] != shape[k] || a.stride[k] != strides[k]) return false;
    }
    return true;
  }

  std::size_t n_ = 0;
  std::optional<driver::Dim3> grid_, block_;
  bool view_[PackedParams::kMaxParams] = {};
  AccessMode access_[PackedParams::kMaxParams] = {};
  bool empty_[PackedParams::kMaxParams] = {};
  driver::LaunchDims dims_;
  void** params_ = nullptr;
  ArgShape shapes_[PackedParams::kMaxParams];
  std::optional<ScalarValue> scalars_[PackedParams::kMaxParams];
  PackedParams packed_;
};

class LaunchMemo {
 public:
  static constexpr std::size_t kLaunches = 4;

  // The remembered launch of `e` (null if none). The kernels remembered are
  // kept apart, on one line: a launch of a kernel that is not among them
  // reads no remembered launch's lines (each is about 1.6 KB).
  [[nodiscard]] RememberedLaunch* find(const KernelEntry& e) noexcept {
    for (std::size_t i = 0; i < kLaunches; ++i) {
      if (entries_[i] == &e) return &launches_[i];
    }
    return nullptr;
  }
  // Remembers a launch of `e` whose checks and packing passed, in its own
  // place or the next in turn.
  void remember(const KernelEntry& e, std::span<const ArgShape> shapes, std::span<const LaunchArg> args,
                const std::optional<driver::Dim3>& grid, const std::optional<driver::Dim3>& block,
                const driver::LaunchDims& dims, const PackedParams& packed) noexcept {
    std::size_t i = 0;
    while (i < kLaunches && entries_[i] != &e) ++i;
    if (i == kLaunches) {
      i = next_;
      next_ = (next_ + 1) % kLaunches;
    }
    entries_[i] = nullptr;  // until complete
    if (shapes.size() > PackedParams::kMaxParams) return;
    launches_[i].remember(e, shapes, args, grid, block, dims, packed);
    entries_[i] = &e;
  }

 private:
  const KernelEntry* entries_[kLaunches] = {};
  std::size_t next_ = 0;
  RememberedLaunch launches_[kLaunches];
};

}  // namespace tandem::kernels::detail
