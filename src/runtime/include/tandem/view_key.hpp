// SPDX-License-Identifier: Apache-2.0
// tandem/view_key.hpp — a view's identity as a recording (tandem/recorder.hpp)
// sees it.
#pragma once

#include <array>
#include <compare>
#include <cstdint>

#include "tandem/view.hpp"

namespace tandem {

// A view's identity as a recording sees it: two live views with equal keys
// are interchangeable for every rule of the runtime.
struct ViewKey {
  std::uint64_t allocation = 0;
  std::uint64_t offset = 0;
  DType dtype = DType::u8;
  std::int8_t rank = 0;
  bool tensor = false;
  bool atomic = false;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};
  static ViewKey of(const View& v);
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>
  friend auto operator<=>(const ViewKey&, const ViewKey&) = default;
};

}  // namespace tandem
