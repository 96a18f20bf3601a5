// SPDX-License-Identifier: Apache-2.0
// tandem/tensor.hpp — a typed tensor: element type T, shape and strides
// (up to kMaxRank dimensions) over a counted view of an allocation.
//
//   auto buf = tandem::DeviceBuffer<float>::allocate(stream, 64 * 64);
//   auto t = tandem::Tensor<float>::from_buffer(std::move(buf), {64, 64});  // no copy
//   tandem::DimRange block[] = {{0, 32}, {16, 48}};
//   auto sub = t.view(std::nullopt, block);       // strided, counted
//   auto back = std::move(t).into_buffer();       // needs uniqueness
//
// from_buffer / into_buffer are ownership transfers: they need the
// allocation to be unique (in-flight work does not count, spec §5) and
// leave the source intact when they fail. T is any DType; a Tensor<bool> is
// made only from validated bytes (from_bytes_checked). All calls are
// host-only except from_bytes_checked, which reads the device (blocking).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "tandem/device_buffer.hpp"

namespace tandem {

template <DTypeElement T>
class Tensor {
 public:
  using value_type = T;

  // Buffer → tensor, same allocation id and device pointer (View::to_tensor).
  // (Member templates so that Tensor<bool> never names DeviceBuffer<bool>.)
  template <DeviceCopy U = T>
  requires std::is_same_v<U, T>
  [[nodiscard]] static Tensor from_buffer(DeviceBuffer<U>&& buf, std::span<const std::int64_t> shape) {
    return Tensor(std::move(buf.v_).to_tensor(shape));
  }
  template <DeviceCopy U = T>
  requires std::is_same_v<U, T>
  [[nodiscard]] static Tensor from_buffer(DeviceBuffer<U>&& buf, std::initializer_list<std::int64_t> shape) {
    return from_buffer(std::move(buf), std::span<const std::int64_t>(shape.begin(), shape.size()));
  }
  // u8 bytes → bool tensor: needs uniqueness; reads the bytes on `stream`
  // (blocks) and throws Error(invalid_dtype) naming the first byte not 0 or 1.
  [[nodiscard]] static Tensor from_bytes_checked(
      DeviceBuffer<std::uint8_t>&& bytes, StreamRef stream,
      std::span<const std::int64_t> shape) requires std::is_same_v<T, bool> {
    View checked = std::move(bytes.v_).to_bool_checked(stream);
    try {
      return Tensor(std::move(checked).to_tensor(shape));
    } catch (...) {
      bytes.v_ = std::move(checked).reinterpret(DType::u8);  // give the bytes back
      throw;
    }
  }
  // Wraps a tensor view of element type T.
  [[nodiscard]] static Tensor from_view(View&& v) {
    if (!v.valid() || !v.is_tensor() || v.dtype() != dtype_v<T>) {
      throw Error(ErrorCode::invalid_dtype, "Tensor<" + std::string(dtype_name(dtype_v<T>)) +
                                                "> from a view that is not such a tensor");
    }
    return Tensor(std::move(v));
  }

  Tensor() = default;

  [[nodiscard]] int rank() const noexcept { return v_.rank(); }
  [[nodiscard]] std::span<const std::int64_t> shape() const noexcept { return v_.shape(); }
  [[nodiscard]] std::span<const std::int64_t> strides() const noexcept { return v_.strides(); }
  [[nodiscard]] std::uint64_t size() const noexcept { return v_.element_count(); }
  [[nodiscard]] bool is_contiguous() const noexcept { return v_.is_contiguous(); }
  [[nodiscard]] std::uint64_t allocation_id() const { return v_.allocation_id(); }
  [[nodiscard]] bool is_unique() const { return v_.is_unique(); }
  [[nodiscard]] T* device_data() const { return reinterpret_cast<T*>(v_.device_ptr()); }
  // What a Tile kernel receives (R >= rank; extra dimensions have size 1).
  template <int R>
  [[nodiscard]] TensorParam<T, R> param() const {
    return v_.tensor_param<T, R>();
  }

  // Tensor → buffer: needs uniqueness and contiguity; consumes on success.
  template <DeviceCopy U = T>
  [[nodiscard]] DeviceBuffer<U> into_buffer() && {
    return DeviceBuffer<U>::from_view(std::move(v_).into_buffer());
  }
  // A borrowed buffer view of a contiguous tensor; counts as a view.
  template <DeviceCopy U = T>
  [[nodiscard]] DeviceBuffer<U> as_buffer() const {
    return DeviceBuffer<U>::from_view(v_.as_buffer());
  }
  // Another counted view: optional reshape, then optional ranges.
  [[nodiscard]] Tensor view(std::optional<std::span<const std::int64_t>> shape,
                            std::optional<std::span<const DimRange>> ranges = std::nullopt) const {
    return Tensor(v_.tensor_view(shape, ranges));
  }

  [[nodiscard]] const View& as_view() const noexcept { return v_; }
  [[nodiscard]] View into_view() && noexcept { return std::move(v_); }

 private:
  explicit Tensor(View&& v) noexcept : v_(std::move(v)) {}
  View v_;
};

}  // namespace tandem
