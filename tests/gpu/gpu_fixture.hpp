// gpu_fixture.hpp — a CUDA platform for GPU tests, or a skip saying why.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tandem/context.hpp"
#include "tandem/device.hpp"
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
