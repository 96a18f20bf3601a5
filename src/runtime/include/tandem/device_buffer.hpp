// SPDX-License-Identifier: Apache-2.0
// tandem/device_buffer.hpp — a typed buffer: a counted View whose element
// type is fixed at compile time.
//
//   auto x = tandem::DeviceBuffer<float>::allocate(stream, 1 << 20);
//   auto head = x.slice(0, 1024);              // same allocation, counted
//   auto [lo, hi] = std::move(head).split_at(512);
//   tandem::BufferParam<float> p = x.param();  // what a SIMT kernel receives
//
// T must be DeviceCopy (every bit pattern a valid value): DeviceBuffer<bool>
// does not compile; bool tensors come from validated bytes (tensor.hpp).
// Ordering, blocking and errors are those of the View call each method
// forwards to (view.hpp); a method taking `&&` consumes *this only when it
// succeeds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "tandem/errors.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace tandem {

template <DTypeElement T>
class Tensor;

template <DeviceCopy T>
class DeviceBuffer {
 public:
  using value_type = T;

  // Async, stream-ordered on `stream` (view.hpp: allocate).
  [[nodiscard]] static DeviceBuffer allocate(StreamRef stream, std::uint64_t count) {
    return DeviceBuffer(tandem::allocate(stream, dtype_v<T>, count), Checked{});
  }
  // Memory made elsewhere; `owner` runs once after its last use (view.hpp: adopt).
  [[nodiscard]] static DeviceBuffer adopt(const Context& ctx, driver::DevicePtr ptr, std::uint64_t count,
                                          std::function<void()> owner) {
    return DeviceBuffer(tandem::adopt(ctx, ptr, dtype_v<T>, count, std::move(owner)), Checked{});
  }
  // Takes a buffer view of element type T; Error(invalid_dtype) otherwise,
  // Error(unsupported) for a tensor view. `v` is left intact on failure.
  [[nodiscard]] static DeviceBuffer from_view(View&& v) {
    if (!v.valid()) throw Error(ErrorCode::invalid_handle, "DeviceBuffer from an empty view");
    if (v.dtype() != dtype_v<T>) {
      throw Error(ErrorCode::invalid_dtype, "DeviceBuffer<" + std::string(dtype_name(dtype_v<T>)) +
                                                "> from a view of " + std::string(dtype_name(v.dtype())));
    }
    if (v.is_tensor())
      throw Error(ErrorCode::unsupported, "DeviceBuffer from a tensor view: use into_buffer");
    return DeviceBuffer(std::move(v), Checked{});
  }

  DeviceBuffer() = default;  // empty handle

  [[nodiscard]] std::uint64_t size() const noexcept { return v_.element_count(); }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] std::uint64_t allocation_id() const { return v_.allocation_id(); }
  [[nodiscard]] bool is_unique() const { return v_.is_unique(); }
  [[nodiscard]] std::uint64_t view_count() const { return v_.view_count(); }
  [[nodiscard]] bool is_atomic() const noexcept { return v_.is_atomic(); }
  // The device address of element 0 (not dereferenceable on the host).
  [[nodiscard]] T* device_data() const { return reinterpret_cast<T*>(v_.device_ptr()); }
  [[nodiscard]] BufferParam<T> param() const { return v_.buffer_param<T>(); }

  [[nodiscard]] DeviceBuffer slice(std::uint64_t offset, std::uint64_t len) const {
    return DeviceBuffer(v_.slice(offset, len), Checked{});
  }
  [[nodiscard]] DeviceBuffer peel(std::uint64_t index) const {
    return DeviceBuffer(v_.peel(index), Checked{});
  }
  [[nodiscard]] DeviceBuffer atomic() const { return DeviceBuffer(v_.atomic(), Checked{}); }
  [[nodiscard]] DeviceBuffer share() const { return DeviceBuffer(v_.share(), Checked{}); }
  [[nodiscard]] std::pair<DeviceBuffer, DeviceBuffer> split_at(std::uint64_t k) && {
    auto [a, b] = std::move(v_).split_at(k);
    return {DeviceBuffer(std::move(a), Checked{}), DeviceBuffer(std::move(b), Checked{})};
  }
  // Changes the element type (needs uniqueness; see View::reinterpret).
  template <DeviceCopy U>
  [[nodiscard]] DeviceBuffer<U> reinterpret() && {
    return DeviceBuffer<U>::from_view(std::move(v_).reinterpret(dtype_v<U>));
  }

  [[nodiscard]] const View& view() const noexcept { return v_; }
  // Gives up the typed facade (the view count moves with it).
  [[nodiscard]] View into_view() && noexcept { return std::move(v_); }

 private:
  template <DTypeElement>
  friend class Tensor;  // converts v_ in place, consuming only on success
  struct Checked {};
  DeviceBuffer(View&& v, Checked) noexcept : v_(std::move(v)) {}
  View v_;
};

}  // namespace tandem
