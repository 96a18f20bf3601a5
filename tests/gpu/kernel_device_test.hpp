// SPDX-License-Identifier: Apache-2.0
// kernel_device_test.hpp — the kernels' GPU tests' fixture (kernels_gpu_test.cpp,
// kernels_targeted_gpu_test.cpp) and their seeds.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/driver/types.hpp"
#include "tandem/testing/sim.hpp"

inline constexpr std::uint64_t kDefaultSeed = 0x7a6e'd3e5'2024'0611ULL;

// The base seed of every random case: TANDEM_TEST_SEED, else kDefaultSeed.
inline std::uint64_t base_seed() {
  if (const char* s = std::getenv("TANDEM_TEST_SEED"); s != nullptr && *s != '\0') {
    return std::strtoull(s, nullptr, 0);
  }
  return kDefaultSeed;
}

inline std::uint64_t mix(std::uint64_t a, std::uint64_t b) {  // splitmix64 of a ^ b
  std::uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline std::string dim3_text(tandem::driver::Dim3 d) {
  return "{" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + "}";
}

// A CUDA platform, or a skip saying why. TANDEM_KERNELS_TEST_ON_SIM=1 runs
// the same checks on the simulated device instead (which runs the host
// references, so it checks this harness, not the device code).
class KernelDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* sim = std::getenv("TANDEM_KERNELS_TEST_ON_SIM");
        sim != nullptr && std::string_view(sim) == "1") {
      platform_.emplace(tandem::Platform::sim());
    } else {
      std::string why;
      if (!tandem::Platform::cuda_available(why)) GTEST_SKIP() << "no CUDA device: " << why;
      platform_.emplace(tandem::Platform::cuda());
    }
    ctx_.emplace(tandem::Context::create(platform_->device(0)));
  }
  void TearDown() override {
    if (ctx_) {
      EXPECT_TRUE(ctx_->wait_for_retirement(std::chrono::seconds(60)))
          << "work still pending at the end of the test";
      EXPECT_EQ(ctx_->stats().quarantined_allocations, 0u);
      if (auto* sim = tandem::testing::sim_backend(*platform_); sim != nullptr) {
        EXPECT_EQ(sim->violation_count(), 0u);
      }
    }
    ctx_.reset();
    platform_.reset();
  }
  tandem::Context& ctx() { return *ctx_; }

 private:
  std::optional<tandem::Platform> platform_;
  std::optional<tandem::Context> ctx_;
};
