// SPDX-License-Identifier: Apache-2.0
// Helpers for the kernels/ tests: run a catalog entry's host reference on
// host memory, through the same parameter packing the runtime uses.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tandem/kernels/catalog.hpp"

namespace tandem::kernels::test {

inline driver::DevicePtr host_ptr(const void* p) {
  return static_cast<driver::DevicePtr>(reinterpret_cast<std::uintptr_t>(p));
}

// A SIMT buffer argument over host memory.
template <class T>
LaunchArg buf(std::vector<T>& v, DType dtype = dtype_v<T>) {
  return LaunchArg::view(host_ptr(v.data()), ArgShape::buffer(dtype, v.size()));
}

// A Tile tensor argument: `shape` and `strides` (elements) over host memory
// starting at `base`.
template <class T>
LaunchArg tensor(T* base, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {}) {
  return LaunchArg::view(host_ptr(base), ArgShape::tensor(dtype_v<T>, shape, strides));
}

inline LaunchArg num(double v) { return LaunchArg::value(v); }

inline std::vector<ArgShape> shapes_of(const std::vector<LaunchArg>& args) {
  std::vector<ArgShape> s;
  for (const auto& a : args) s.push_back(a.shape);
  return s;
}

// Checks the arguments like the runtime would, packs them and runs the host
// reference. Fails the test (and returns false) on any error.
inline bool run_host(const KernelEntry* e, const std::vector<LaunchArg>& args) {
  EXPECT_NE(e, nullptr);
  if (e == nullptr) return false;
  const auto shapes = shapes_of(args);
  const std::string check = check_args(*e, shapes);
  EXPECT_EQ(check, "");
  driver::LaunchDims dims;
  const std::string dims_err = launch_dims(*e, shapes, std::nullopt, std::nullopt, dims);
  EXPECT_EQ(dims_err, "");
  PackedParams packed;
  const std::string err = pack_params(*e, args, packed);
  EXPECT_EQ(err, "");
  if (!check.empty() || !err.empty() || !dims_err.empty()) return false;
  e->symbol->host(packed.pointers(), dims);
  return true;
}

inline const KernelEntry* simt(std::string_view name, DType dtype) { return find(Model::simt, name, dtype); }
inline const KernelEntry* tile(std::string_view name, DType dtype, int rank = 0) {
  return find(Model::tile, name, dtype, nullptr, rank);
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(d(rng));
  } else {
    std::uniform_int_distribution<std::int64_t> d(static_cast<std::int64_t>(lo),
                                                  static_cast<std::int64_t>(hi));
    for (auto& x : v) x = static_cast<T>(d(rng));
  }
  return v;
}

}  // namespace tandem::kernels::test
