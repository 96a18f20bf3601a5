// SPDX-License-Identifier: Apache-2.0
// tandem/view.hpp — a counted, typed handle on a byte range of one
// allocation: a buffer, a slice, a peeled element, a tensor, a borrowed
// buffer view of a tensor (spec/runtime.md §2, §3, §5, §7).
//
//   tandem::View buf = tandem::allocate(stream, tandem::DType::f32, 1024);
//   tandem::View half = buf.slice(0, 512);         // same allocation id
//   auto [lo, hi] = std::move(half).split_at(256); // consumes `half`
//   tandem::View t = std::move(buf).to_tensor({32, 32});  // needs uniqueness
//
// View is the untyped form the scenario engine and the launchers use;
// DeviceBuffer<T> (device_buffer.hpp) is the typed facade over it.
//
// Every View counts in its allocation's view count; moving a View moves its
// count, destroying it drops its count. Dropping never waits for the GPU:
// memory still leased by pending work is freed by retirement later.
//
// Calls taking `&&` consume the view on success only: when they throw, the
// source is left intact and usable. All calls here are host-only (no stream,
// no driver call) except to_bool_checked, which reads the device.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>

#include "tandem/driver/types.hpp"
#include "tandem/dtype.hpp"
#include "tandem/kernel_params.hpp"

namespace tandem {

namespace detail {
class AllocationState;
}

class Context;
class StreamRef;

// One [begin, end) range per dimension, for tensor sub-views.
struct DimRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

class View {
 public:
  View() noexcept = default;  // an empty handle: valid() is false
  View(View&& o) noexcept;
  View& operator=(View&& o) noexcept;
  View(const View&) = delete;             // a copy would create an alias
  View& operator=(const View&) = delete;  // silently: use share()
  ~View();

  [[nodiscard]] bool valid() const noexcept { return alloc_ != nullptr; }

  // --- identity and layout ---------------------------------------------------
  [[nodiscard]] std::uint64_t allocation_id() const;
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] std::uint32_t element_size() const noexcept { return dtype_size(dtype_); }
  [[nodiscard]] std::uint64_t byte_offset() const noexcept { return offset_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] std::span<const std::int64_t> shape() const noexcept {
    return {shape_.data(), static_cast<std::size_t>(rank_)};
  }
  [[nodiscard]] std::span<const std::int64_t> strides() const noexcept {
    return {strides_.data(), static_cast<std::size_t>(rank_)};
  }
  [[nodiscard]] std::uint64_t element_count() const noexcept;
  [[nodiscard]] bool is_tensor() const noexcept { return tensor_; }
  [[nodiscard]] bool is_atomic() const noexcept { return atomic_; }
  [[nodiscard]] bool is_contiguous() const noexcept;
  // Bytes from the first element to one past the last one reachable (the
  // byte range a launch leases); 0 for an empty view.
  // Inline: every launch asks it of every view it touches.
  [[nodiscard]] std::uint64_t extent_bytes() const noexcept {
    std::uint64_t last = 0;
    for (int k = 0; k < rank_; ++k) {
      if (shape_[k] == 0) return 0;
      last += static_cast<std::uint64_t>((shape_[k] - 1) * strides_[k]);
    }
    return rank_ == 0 ? 0 : (last + 1) * element_size();
  }
  [[nodiscard]] driver::DevicePtr device_ptr() const;  // of element 0
  [[nodiscard]] Context context() const;
  // The ordinal of the device the allocation lives on (its context's device).
  // Throws Error(invalid_handle) on an empty or moved-from view.
  [[nodiscard]] int device_ordinal() const;

  // --- uniqueness (§5) --------------------------------------------------------
  // True when this allocation has exactly one view and no graph reference.
  // In-flight leases do not count. Lock-free, one atomic load.
  [[nodiscard]] bool is_unique() const;
  [[nodiscard]] std::uint64_t view_count() const;

  // --- new views of the same allocation (each counts as a view) ---------------
  // Another counted view of exactly this range (an explicit alias).
  [[nodiscard]] View share() const;
  // Elements [offset, offset + len) of a buffer. Out of range: Error(out_of_range).
  [[nodiscard]] View slice(std::uint64_t offset, std::uint64_t len) const;
  // One element. It keeps ordinary shared-read permission.
  [[nodiscard]] View peel(std::uint64_t index) const;
  // The same range, used through device atomics: every access through it
  // is tracked as a write, whatever the kernel declares.
  [[nodiscard]] View atomic() const;
  // Consumes this buffer; returns [0, k) and [k, len).
  [[nodiscard]] std::pair<View, View> split_at(std::uint64_t k) &&;

  // --- tensors (§3) --------------------------------------------------------------
  // Buffer → tensor: moves this view's count into the tensor (same
  // allocation id, same device pointer). Needs uniqueness (Error(aliased))
  // and shape product == length (Error(out_of_range)).
  [[nodiscard]] View to_tensor(std::span<const std::int64_t> shape) &&;
  // Tensor → buffer: needs uniqueness and a contiguous tensor.
  [[nodiscard]] View into_buffer() &&;
  // A borrowed buffer view of a contiguous tensor; counts as a view.
  [[nodiscard]] View as_buffer() const;
  // Another counted view of a tensor: optional reshape (contiguous tensors
  // only), then optional [begin, end) per dimension (may be non-contiguous).
  [[nodiscard]] View tensor_view(std::optional<std::span<const std::int64_t>> shape,
                                 std::optional<std::span<const DimRange>> ranges) const;
  // Changes the element type (needs uniqueness; the byte length must divide
  // evenly; not to bool — use to_bool_checked).
  [[nodiscard]] View reinterpret(DType to) &&;
  // Bytes → bool: needs uniqueness and a u8/i8 view; reads the bytes back
  // on `stream` and blocks until the device has them; every byte must be 0
  // or 1 (Error(invalid_dtype) naming the first bad index otherwise).
  [[nodiscard]] View to_bool_checked(StreamRef stream) &&;

  // --- kernel parameter forms (launchers) -------------------------------------------
  template <class T>
  [[nodiscard]] BufferParam<T> buffer_param() const {
    return {reinterpret_cast<T*>(device_ptr()), element_count()};
  }
  template <class T, int R>
  [[nodiscard]] TensorParam<T, R> tensor_param() const;

  [[nodiscard]] detail::AllocationState* allocation() const noexcept { return alloc_; }

 private:
  friend View make_view(detail::AllocationState*, DType, std::uint64_t, std::uint64_t);
  View derive(std::uint64_t offset, bool tensor) const;  // a counted copy of the metadata
  void require_valid(const char* what) const;
  void require_unique(const char* what) const;
  void set_buffer(std::uint64_t len) noexcept;
  void set_contiguous_shape(std::span<const std::int64_t> shape) noexcept;

  detail::AllocationState* alloc_ = nullptr;  // owns one view count
  std::uint64_t offset_ = 0;                  // bytes from the allocation's start
  DType dtype_ = DType::u8;
  std::int8_t rank_ = 0;
  bool tensor_ = false;
  bool atomic_ = false;
  std::array<std::int64_t, kMaxRank> shape_{};
  std::array<std::int64_t, kMaxRank> strides_{};  // elements
};

template <class T, int R>
TensorParam<T, R> View::tensor_param() const {
  TensorParam<T, R> p{};
  p.data = reinterpret_cast<T*>(device_ptr());
  for (int k = 0; k < R; ++k) {
    p.shape[k] = k < rank_ ? shape_[k] : 1;
    p.stride[k] = k < rank_ ? strides_[k] : 0;
  }
  return p;
}

// A new buffer of `count` elements from the context's stream-ordered pool,
// allocated in order on `stream` (usable there at once; work on other
// streams is ordered after the allocation automatically). count == 0 makes
// an empty view: no driver allocation, no driver free, ever. Frees of
// memory dropped behind this stream's work are enqueued first, so the pool
// can reuse that memory here at once.
// Async; but when the device is out of memory it retires and releases what
// it can and may block up to ContextOptions::out_of_memory_wait for the
// context's work in flight (docs/runtime.md, "Allocation under pressure").
// Throws Error(out_of_memory) naming the size, the free memory and what the
// context holds in flight, pending release and quarantined.
[[nodiscard]] View allocate(StreamRef stream, DType dtype, std::uint64_t count);

// Adopts memory made elsewhere: `owner` runs exactly once, on some thread,
// after the memory is no longer used by any view, lease or graph (never
// under a runtime lock). The memory must be ready for use on any stream.
[[nodiscard]] View adopt(const Context& ctx, driver::DevicePtr ptr, DType dtype, std::uint64_t count,
                         std::function<void()> owner);

}  // namespace tandem
