// SPDX-License-Identifier: Apache-2.0
// tandem/kernels/histogram_bin.hpp — the histogram kernels' bin rule, one
// definition for the device code and the host reference (so their counts
// agree exactly).
//
// Bins are nbins equal-width intervals over [lo, hi); values outside (and
// NaN) are ignored. The arithmetic is IEEE double with no product feeding a
// sum, so nvcc cannot contract it into an fma and both sides round alike.
#pragma once

#include <cstdint>

#include "tandem/kernel_params.hpp"  // TANDEM_HD

namespace tandem::kernels {

TANDEM_HD inline bool histogram_bin(double v, double lo, double hi, std::uint64_t nbins, std::uint64_t& bin) {
  if (nbins == 0 || !(v >= lo) || !(v < hi)) return false;
  const double t = (v - lo) / (hi - lo);  // in [0, 1], 1 only by rounding
  auto b = static_cast<std::uint64_t>(t * static_cast<double>(nbins));
  if (b >= nbins) b = nbins - 1;
  bin = b;
  return true;
}

}  // namespace tandem::kernels
