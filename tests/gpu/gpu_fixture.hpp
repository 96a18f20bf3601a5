// SPDX-License-Identifier: Apache-2.0
// gpu_fixture.hpp — a CUDA platform for GPU tests, or a skip saying why.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!tandem::Platform::cuda_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
    platform_.emplace(tandem::Platform::cuda());
    ctx_.emplace(tandem::Context::create(platform_->device(0)));
  }
  tandem::Context& ctx() { return *ctx_; }
  tandem::Platform& platform() { return *platform_; }

 private:
  std::optional<tandem::Platform> platform_;
  std::optional<tandem::Context> ctx_;
};

// The catalog entry of a kernel (default tile for `rank` when Tile); throws
// when the catalog has none, so a test fails loudly rather than skipping.
inline const tandem::kernels::KernelEntry& catalog_entry(tandem::kernels::Model m, const char* name,
                                                         tandem::DType t, int rank = 0) {
  const tandem::kernels::KernelEntry* e = tandem::kernels::find(m, name, t, nullptr, rank);
  if (!e) throw std::runtime_error(std::string("no kernel ") + name + " in the catalog");
  return *e;
}

inline std::vector<float> read_f32(const tandem::Stream& s, const tandem::View& v) {
  const std::vector<std::byte> bytes = tandem::read_back(s, v);
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}
