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

// One remembered launch.
class RememberedLaunch {
 public:
  // Whether a launch of `e` with n arguments, `grid` and `block` may be the
  // remembered one; the arguments are then compared one by one.
  [[nodiscard]] bool may_repeat(const KernelEntry& e, std::size_t n, const std::optional<driver::Dim3>& grid,
                                const std::optional<driver::Dim3>& block) const noexcept {
    return entry_ == &e && n_ == n && grid_ == grid && block_ == block;
  }
  // Whether view `v` as argument i has the remembered shape; if so, its
  // device pointer is written into the remembered bytes.
  bool repoint(std::size_t i, const View& v) noexcept {
    if (!same(shapes_[i], v)) return false;
    packed_.set_view_pointer(static_cast<std::uint32_t>(i), v.extent_bytes() ? v.device_ptr() : 0);
    return true;
  }
  [[nodiscard]] bool same_scalar(std::size_t i, const std::optional<ScalarValue>& s) const noexcept {
    return scalars_[i] == s;
  }
  [[nodiscard]] const driver::LaunchDims& dims() const noexcept { return dims_; }
  [[nodiscard]] void** params() const noexcept { return params_; }

  // After check_args, launch_dims and pack_params passed for these.
  void remember(const KernelEntry& e, std::span<const ArgShape> shapes, std::span<const LaunchArg> args,
                const std::optional<driver::Dim3>& grid, const std::optional<driver::Dim3>& block,
                const driver::LaunchDims& dims, const PackedParams& packed) noexcept {
    entry_ = nullptr;  // until complete
    if (shapes.size() > PackedParams::kMaxParams) return;
    n_ = shapes.size();
    for (std::size_t i = 0; i < n_; ++i) {
      shapes_[i] = shapes[i];
      scalars_[i] = args[i].scalar;
    }
    grid_ = grid;
    block_ = block;
    dims_ = dims;
    packed_ = packed;
    params_ = packed_.pointers();  // into packed_, which never moves
    entry_ = &e;
  }

 private:
  // Equal as shape_of(v) would be, in what the checks and the packing see:
  // dtype, rank, and extent and stride in each of the rank's dimensions.
  static bool same(const ArgShape& a, const View& v) noexcept {
    if (a.dtype != v.dtype()) return false;
    if (!v.is_tensor())
      return a.rank == 1 && a.stride[0] == 1 && a.shape[0] == static_cast<std::int64_t>(v.element_count());
    const std::span<const std::int64_t> shape = v.shape(), strides = v.strides();
    if (a.rank != static_cast<int>(shape.size())) return false;
    for (std::size_t k = 0; k < shape.size(); ++k) {
      if (a.shape[k] != shape[k] || a.stride[k] != strides[k]) return false;
    }
    return true;
  }

  const KernelEntry* entry_ = nullptr;
  std::size_t n_ = 0;
  std::optional<driver::Dim3> grid_, block_;
  ArgShape shapes_[PackedParams::kMaxParams];
  std::optional<ScalarValue> scalars_[PackedParams::kMaxParams];
  driver::LaunchDims dims_;
  PackedParams packed_;
  void** params_ = nullptr;

  friend class LaunchMemo;
};

class LaunchMemo {
 public:
  static constexpr std::size_t kLaunches = 4;

  // The remembered launch of `e` (null if none).
  [[nodiscard]] RememberedLaunch* find(const KernelEntry& e) noexcept {
    for (RememberedLaunch& r : launches_) {
      if (r.entry_ == &e) return &r;
    }
    return nullptr;
  }
  // Where to remember a launch of `e`: its own place, or the next in turn.
  [[nodiscard]] RememberedLaunch& place_for(const KernelEntry& e) noexcept {
    if (RememberedLaunch* r = find(e)) return *r;
    RememberedLaunch& r = launches_[next_];
    next_ = (next_ + 1) % kLaunches;
    return r;
  }

 private:
  RememberedLaunch launches_[kLaunches];
  std::size_t next_ = 0;
};

}  // namespace tandem::kernels::detail
