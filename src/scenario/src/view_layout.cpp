// SPDX-License-Identifier: Apache-2.0
#include "view_layout.hpp"

namespace tandem::scenario::detail {

ViewLayout ViewLayout::of(const View& v) {
  ViewLayout l;
  l.allocation = v.allocation_id();
  l.byte_offset = v.byte_offset();
  l.dtype = v.dtype();
  l.tensor = v.is_tensor();
  l.rank = v.rank();
  for (int d = 0; d < v.rank(); ++d) {
    l.shape[d] = v.shape()[d];
    l.strides[d] = v.strides()[d];
  }
  if (l.rank == 0) {  // a buffer without shape metadata: one dimension, contiguous
    l.rank = 1;
    l.shape[0] = static_cast<std::int64_t>(v.element_count());
    l.strides[0] = 1;
  }
  return l;
}

std::uint64_t ViewLayout::elements() const noexcept {
  std::uint64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= static_cast<std::uint64_t>(shape[d] < 0 ? 0 : shape[d]);
  return n;
}

}  // namespace tandem::scenario::detail
