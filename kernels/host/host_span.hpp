// SPDX-License-Identifier: Apache-2.0
// Bounds-checked access to a kernel's buffers on the host side (internal to
// kernels/). Every host reference touches device memory only through these:
// on the simulated device each access is admitted by the launch's
// HostAccessFrame (tandem/driver/host_access.hpp), so a read or write
// outside the launch's declared ranges, or a write through a read-only
// declaration, is refused and reported instead of performed. A refused read
// yields T{}. Run outside the sim (no frame), nothing is checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "host_params.hpp"
#include "tandem/driver/host_access.hpp"

namespace tandem::kernels::host {

// Admits accesses of one parameter; remembers the declared window its
// pointer lies in, so that in-bounds accesses cost two compares.
class Admission {
 public:
  Admission(int param, const void* data) noexcept : param_(param), frame_(driver::current_host_access()) {
    if (frame_ != nullptr) {
      window_ = frame_->window_of(data);
    }
  }
  [[nodiscard]] bool admit(const void* p, std::size_t bytes, bool write) const noexcept {
    if (frame_ == nullptr) {
      return true;
    }
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const auto lo = reinterpret_cast<std::uintptr_t>(window_.lo);
    const auto hi = reinterpret_cast<std::uintptr_t>(window_.hi);
    if (lo <= at && at <= hi && bytes <= hi - at && (!write || writes(window_.mode))) {
      return true;
    }
    return frame_->admit(param_, p, bytes, write);
  }

 private:
  int param_;
  driver::HostAccessFrame* frame_;
  driver::HostWindow window_;
};

// Parameter i, a BufferParam<T> (T const for an input).
template <class T>
class BufferSpan {
 public:
  using Value = std::remove_const_t<T>;
  BufferSpan(void* const* params, int i) noexcept
      : b_(param<BufferParam<T>>(params, i)), admission_(i, b_.data) {}

  [[nodiscard]] std::uint64_t len() const noexcept { return b_.len; }
  [[nodiscard]] Value get(std::uint64_t i) const noexcept {
    const T* p = b_.data + i;
    return admission_.admit(p, sizeof(T), false) ? *p : Value{};
  }
  void set(std::uint64_t i, Value v) const noexcept requires(!std::is_const_v<T>) {
    T* p = b_.data + i;
    if (admission_.admit(p, sizeof(T), true)) {
      *p = v;
    }
  }
  // Elements [first, first + n) as one raw range, or null if refused.
  [[nodiscard]] T* range(std::uint64_t first, std::uint64_t n, bool write) const noexcept {
    T* p = b_.data + first;
    return admission_.admit(p, n * sizeof(T), write) ? p : nullptr;
  }

 private:
  BufferParam<T> b_;
  Admission admission_;
};

// Parameter i, a TensorParam<T, R> (R = 1 or 2); index j is ignored for R = 1.
template <class T, int R>
class TensorSpan {
 public:
  using Value = std::remove_const_t<T>;
  TensorSpan(void* const* params, int i) noexcept
      : t_(param<TensorParam<T, R>>(params, i)), admission_(i, t_.data) {}

  [[nodiscard]] std::int64_t shape(int k) const noexcept { return t_.shape[k]; }
  [[nodiscard]] Value get(std::int64_t i, std::int64_t j = 0) const noexcept {
    const T* p = where(i, j);
    return admission_.admit(p, sizeof(T), false) ? *p : Value{};
  }
  void set(std::int64_t i, std::int64_t j, Value v) const noexcept requires(!std::is_const_v<T>) {
    T* p = where(i, j);
    if (admission_.admit(p, sizeof(T), true)) {
      *p = v;
    }
  }

 private:
  [[nodiscard]] T* where(std::int64_t i, std::int64_t j) const noexcept {
    if constexpr (R == 1) {
      return t_.data + i * t_.stride[0];
    } else {
      return t_.data + i * t_.stride[0] + j * t_.stride[1];
    }
  }

  TensorParam<T, R> t_;
  Admission admission_;
};

}  // namespace tandem::kernels::host
