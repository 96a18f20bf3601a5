// SPDX-License-Identifier: Apache-2.0
// view_layout.hpp — where a view's elements lie in its allocation, detached
// from the View handle (a graph replays captured work after its views are
// gone; the shadow model replays it on the same layout).
#pragma once

#include <array>
#include <cstdint>

#include "tandem/dtype.hpp"
#include "tandem/view.hpp"

namespace tandem::scenario::detail {

struct ViewLayout {
  std::uint64_t allocation = 0;   // allocation id
  std::uint64_t byte_offset = 0;  // of element 0 from the allocation's start
  DType dtype = DType::u8;
  bool tensor = false;
  int rank = 1;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};  // elements

  [[nodiscard]] static ViewLayout of(const View& v);
  [[nodiscard]] std::uint64_t elements() const noexcept;
  // Calls f(byte offset from the allocation's start) for every element, in
  // row-major order (the order read_back returns them).
  template <class F>
  void for_each_element(F&& f) const {
    const std::uint64_t n = elements();
    if (n == 0) return;
    const std::uint64_t es = dtype_size(dtype);
    if (rank <= 1) {
      const std::int64_t stride = rank == 1 ? strides[0] : 1;
      for (std::uint64_t i = 0; i < n; ++i)
        f(byte_offset + static_cast<std::uint64_t>(static_cast<std::int64_t>(i) * stride) * es);
      return;
    }
    std::array<std::int64_t, kMaxRank> idx{};
    for (std::uint64_t k = 0; k < n; ++k) {
      std::int64_t off = 0;
      for (int d = 0; d < rank; ++d) off += idx[d] * strides[d];
      f(byte_offset + static_cast<std::uint64_t>(off) * es);
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  }
};

}  // namespace tandem::scenario::detail
