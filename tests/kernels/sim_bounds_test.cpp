// SPDX-License-Identifier: Apache-2.0
// On the simulated device, the kernels' host references touch memory only
// through bounds-checked spans of the launch's declared ranges
// (kernels/host/host_span.hpp, tandem/driver/host_access.hpp): an access
// outside every declared range, or a write through a read-only declaration,
// is refused and reported as a violation naming the kernel, the launch, the
// offset asked and the declared range.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tandem/kernels/catalog.hpp"
#include "tandem/testing/sim.hpp"

namespace tandem::kernels::test {
namespace {

using driver::Access;
using driver::DevicePtr;

constexpr std::uint64_t kLen = 8;

class SimBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(sim_.primary_context_retain(0, ctx_).ok());
    ASSERT_TRUE(sim_.stream_create(ctx_, s_).ok());
    ASSERT_TRUE(sim_.mem_alloc(ctx_, kLen * sizeof(float), p_).ok());
    ASSERT_TRUE(sim_.upload_async(ctx_, p_, ones_.data(), kLen * sizeof(float), s_).ok());
  }

  // simt scale(x, 2) over `len` floats of p_, declaring `declared`.
  void scale(std::uint64_t len, std::vector<Access> declared) {
    const KernelEntry* e = find(Model::simt, "scale", DType::f32);
    ASSERT_NE(e, nullptr);
    const std::vector<LaunchArg> args{LaunchArg::view(p_, ArgShape::buffer(DType::f32, len)),
                                      LaunchArg::value(2.0)};
    PackedParams packed;
    ASSERT_EQ(pack_params(*e, args, packed), "");
    driver::LaunchRequest req;
    req.context = ctx_;
    req.symbol = e->symbol;
    req.stream = s_;
    req.dims.grid = {1, 1, 1};
    req.dims.block = {32, 1, 1};
    req.params = packed.pointers();
    req.accesses = declared.data();
    req.access_count = static_cast<std::uint32_t>(declared.size());
    ASSERT_TRUE(sim_.launch(req).ok());
    ASSERT_TRUE(sim_.stream_synchronize(ctx_, s_).ok());
  }
  std::vector<float> contents() {
    std::vector<float> out(kLen);
    EXPECT_TRUE(sim_.download_async(ctx_, out.data(), p_, kLen * sizeof(float), s_).ok());
    EXPECT_TRUE(sim_.stream_synchronize(ctx_, s_).ok());
    return out;
  }

  driver::SimBackend sim_{driver::SimConfig{}};
  driver::ContextHandle ctx_;
  driver::StreamHandle s_;
  DevicePtr p_ = 0;
  std::vector<float> ones_ = std::vector<float>(kLen, 1.0F);
};

TEST_F(SimBoundsTest, AKernelInsideItsDeclarationIsNotReported) {
  scale(kLen, {{p_, kLen * sizeof(float), AccessMode::read_write}});
  EXPECT_EQ(sim_.violation_count(), 0U);
  EXPECT_EQ(contents(), std::vector<float>(kLen, 2.0F));
}

TEST_F(SimBoundsTest, AKernelWritingThroughAReadDeclarationIsAViolation) {
  scale(kLen, {{p_, kLen * sizeof(float), AccessMode::read}});
  const auto v = sim_.violations();
  ASSERT_EQ(v.size(), 1U);
  const std::string& d = v[0].detail;
  EXPECT_EQ(v[0].kind, driver::Violation::Kind::unordered_conflict);
  EXPECT_NE(d.find("launch #"), std::string::npos) << d;
  EXPECT_NE(d.find("scale"), std::string::npos) << d;
  EXPECT_NE(d.find("wrote through parameter 0"), std::string::npos) << d;
  EXPECT_NE(d.find("byte offset 0"), std::string::npos) << d;
  EXPECT_NE(d.find("declared read-only: read"), std::string::npos) << d;
  EXPECT_NE(d.find("8 accesses refused"), std::string::npos) << d;
  EXPECT_EQ(contents(), ones_);  // refused, not performed
}

TEST_F(SimBoundsTest, AnAccessOneElementPastTheDeclaredRangeIsAViolation) {
  scale(kLen, {{p_, (kLen - 1) * sizeof(float), AccessMode::read_write}});
  const auto v = sim_.violations();
  ASSERT_EQ(v.size(), 1U);
  const std::string& d = v[0].detail;
  EXPECT_NE(d.find("read through parameter 0"), std::string::npos) << d;
  EXPECT_NE(d.find("byte offset " + std::to_string((kLen - 1) * sizeof(float))), std::string::npos) << d;
  EXPECT_NE(d.find("outside every declared range: read-write"), std::string::npos) << d;
  std::vector<float> want(kLen, 2.0F);
  want.back() = 1.0F;  // the last element was neither read nor written
  EXPECT_EQ(contents(), want);
}

}  // namespace
}  // namespace tandem::kernels::test
