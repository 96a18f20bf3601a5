// SPDX-License-Identifier: Apache-2.0
// The SIMT kernels' host references against expectations computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "kernel_test_util.hpp"

namespace tandem::kernels::test {
namespace {

using std::int32_t;
using std::int64_t;
using std::uint32_t;
using std::uint64_t;
using std::uint8_t;

// --- fill ----------------------------------------------------------------------------

TEST(SimtFill, WritesTheValueToEveryElementOfEachDtype) {
  std::vector<float> f(1000, 0.0F);
  ASSERT_TRUE(run_host(simt("fill", DType::f32), {buf(f), num(2.5)}));
  for (float x : f) EXPECT_EQ(x, 2.5F);

  std::vector<double> d(7);
  ASSERT_TRUE(run_host(simt("fill", DType::f64), {buf(d), num(-0.125)}));
  for (double x : d) EXPECT_EQ(x, -0.125);

  std::vector<int32_t> i(5);
  ASSERT_TRUE(run_host(simt("fill", DType::i32), {buf(i), LaunchArg::value(int64_t{-7})}));
  for (int32_t x : i) EXPECT_EQ(x, -7);

  std::vector<uint8_t> b(13);
  ASSERT_TRUE(run_host(simt("fill", DType::u8), {buf(b), num(255)}));
  for (uint8_t x : b) EXPECT_EQ(x, 255);

  std::vector<int64_t> l(3);
  ASSERT_TRUE(run_host(simt("fill", DType::i64), {buf(l), LaunchArg::value(int64_t{1} << 40)}));
  for (int64_t x : l) EXPECT_EQ(x, int64_t{1} << 40);
}

TEST(SimtFill, SixteenBitFloatsTakeAnF32ValueRoundedToNearestEven) {
  std::vector<half> h(4);
  ASSERT_TRUE(run_host(simt("fill", DType::f16), {buf(h), num(1.5)}));
  for (half x : h) EXPECT_EQ(x.bits, 0x3E00);
  std::vector<bfloat16> bf(4);
  ASSERT_TRUE(run_host(simt("fill", DType::bf16), {buf(bf), num(1.5)}));
  for (bfloat16 x : bf) EXPECT_EQ(x.bits, 0x3FC0);
  // 1 + 2^-11 is halfway between two halves: ties to the even one (1.0).
  ASSERT_TRUE(run_host(simt("fill", DType::f16), {buf(h), num(1.0 + std::ldexp(1.0, -11))}));
  EXPECT_EQ(h[0].bits, 0x3C00);
}

TEST(SimtFill, EmptyBufferIsANoOp) {
  std::vector<float> f;
  EXPECT_TRUE(run_host(simt("fill", DType::f32), {buf(f), num(1.0)}));
}

// --- iota ----------------------------------------------------------------------------

TEST(SimtIota, FloatsAreStartPlusIndexTimesStep) {
  std::vector<float> f(1001);
  ASSERT_TRUE(run_host(simt("iota", DType::f32), {buf(f), num(1.0), num(0.5)}));
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], 1.0F + static_cast<float>(i) * 0.5F) << i;
}

TEST(SimtIota, DefaultsAreStartZeroStepOne) {
  std::vector<int32_t> v(100);
  ASSERT_TRUE(run_host(simt("iota", DType::i32), {buf(v), LaunchArg::defaulted(), LaunchArg::defaulted()}));
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<int32_t>(i));
}

TEST(SimtIota, IntegersWrap) {
  std::vector<uint8_t> b(300);
  ASSERT_TRUE(run_host(simt("iota", DType::u8), {buf(b), num(250), num(3)}));
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i], static_cast<uint8_t>((250 + 3 * i) % 256)) << i;

  std::vector<int32_t> v(4);
  ASSERT_TRUE(
      run_host(simt("iota", DType::i32), {buf(v), num(std::numeric_limits<int32_t>::max() - 1), num(1)}));
  EXPECT_EQ(v[1], std::numeric_limits<int32_t>::max());
  EXPECT_EQ(v[2], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(v[3], std::numeric_limits<int32_t>::min() + 1);
}

// --- axpy / scale / add / copy -----------------------------------------------------

TEST(SimtAxpy, FloatResultIsTheCorrectlyRoundedFusedProduct) {
  const std::size_t n = 4099;  // not a multiple of any block size
  auto x = random_vector<float>(n, 1);
  auto y = random_vector<float>(n, 2);
  const auto y0 = y;
  const double a = 0.75;
  ASSERT_TRUE(run_host(simt("axpy", DType::f32), {buf(x), buf(y), num(a)}));
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = a * static_cast<double>(x[i]) + static_cast<double>(y0[i]);  // exact in double
    EXPECT_EQ(y[i], static_cast<float>(exact)) << i;  // one rounding, like the device's fma
  }
}

TEST(SimtAxpy, IntegersWrap) {
  std::vector<int32_t> x = {std::numeric_limits<int32_t>::max(), -5, 7};
  std::vector<int32_t> y = {1, 10, std::numeric_limits<int32_t>::min()};
  ASSERT_TRUE(run_host(simt("axpy", DType::i32), {buf(x), buf(y), num(3)}));
  auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); };
  EXPECT_EQ(y[0], wrap(3LL * std::numeric_limits<int32_t>::max() + 1));
  EXPECT_EQ(y[1], -5);
  EXPECT_EQ(y[2], wrap(21LL + std::numeric_limits<int32_t>::min()));

  std::vector<uint64_t> ux = {~uint64_t{0}}, uy = {5};
  ASSERT_TRUE(run_host(simt("axpy", DType::i64),
                       {LaunchArg::view(host_ptr(ux.data()), ArgShape::buffer(DType::i64, 1)),
                        LaunchArg::view(host_ptr(uy.data()), ArgShape::buffer(DType::i64, 1)), num(2)}));
  EXPECT_EQ(uy[0], uint64_t{3});  // 2 * (-1) + 5
}

TEST(SimtScale, MultipliesEveryElement) {
  auto x = random_vector<double>(1000, 3);
  const auto x0 = x;
  ASSERT_TRUE(run_host(simt("scale", DType::f64), {buf(x), num(-3.0)}));
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i], -3.0 * x0[i]);

  std::vector<uint32_t> u = {0x80000001U, 3};
  ASSERT_TRUE(run_host(simt("scale", DType::u32), {buf(u), num(4)}));
  EXPECT_EQ(u[0], 4U);
  EXPECT_EQ(u[1], 12U);
}

TEST(SimtAdd, AddsElementwiseAndIntegersWrap) {
  auto a = random_vector<float>(777, 4), b = random_vector<float>(777, 5);
  std::vector<float> out(777);
  ASSERT_TRUE(run_host(simt("add", DType::f32), {buf(a), buf(b), buf(out)}));
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], a[i] + b[i]);

  std::vector<uint32_t> ua = {0xffffffffU, 1}, ub = {2, 2}, uo(2);
  ASSERT_TRUE(run_host(simt("add", DType::u32), {buf(ua), buf(ub), buf(uo)}));
  EXPECT_EQ(uo[0], 1U);
  EXPECT_EQ(uo[1], 3U);
}

TEST(SimtCopy, CopiesBitsOfEveryDtype) {
  std::vector<uint8_t> src(1023), dst(1023, 0);
  std::iota(src.begin(), src.end(), uint8_t{0});
  ASSERT_TRUE(run_host(simt("copy", DType::u8), {buf(src), buf(dst)}));
  EXPECT_EQ(src, dst);

  std::vector<bfloat16> bs = {{0x1234}, {0xffff}, {0x7fc1}}, bd(3);
  ASSERT_TRUE(run_host(simt("copy", DType::bf16), {buf(bs), buf(bd)}));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(bd[static_cast<std::size_t>(i)].bits, bs[static_cast<std::size_t>(i)].bits);
}

// --- atomic_sum --------------------------------------------------------------------

TEST(SimtAtomicSum, FloatSumIsWithinTheStatedToleranceOfTheExactSum) {
  const std::size_t n = 100003;
  auto x = random_vector<float>(n, 6, 0.0, 1.0);
  std::vector<float> acc = {1.5F};
  ASSERT_TRUE(run_host(simt("atomic_sum", DType::f32), {buf(x), buf(acc)}));
  long double exact = 1.5L, magnitude = 1.5L;
  for (float v : x) {
    exact += v;
    magnitude += std::fabs(v);
  }
  EXPECT_NEAR(acc[0], static_cast<double>(exact), 1e-5 * static_cast<double>(magnitude));
  EXPECT_LE(simt("atomic_sum", DType::f32)->tolerance.rtol, 1e-4);
}

TEST(SimtAtomicSum, IntegersWrapExactly) {
  std::vector<int32_t> x(1000, std::numeric_limits<int32_t>::max());
  std::vector<int32_t> acc = {5};
  ASSERT_TRUE(run_host(simt("atomic_sum", DType::i32), {buf(x), buf(acc)}));
  const uint32_t expect = 5U + 1000U * static_cast<uint32_t>(std::numeric_limits<int32_t>::max());
  EXPECT_EQ(static_cast<uint32_t>(acc[0]), expect);

  std::vector<int64_t> lx = {std::numeric_limits<int64_t>::max(), 2};
  std::vector<int64_t> lacc = {0};
  ASSERT_TRUE(run_host(simt("atomic_sum", DType::i64), {buf(lx), buf(lacc)}));
  EXPECT_EQ(lacc[0], std::numeric_limits<int64_t>::min() + 1);
}

// --- histogram ---------------------------------------------------------------------

TEST(SimtHistogram, EdgeValuesFallInTheRightBinsAndOutsideIsIgnored) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {0.0F, -0.0F, 0.25F, 0.2499999F, 0.5F, 0.75F, 0.9999999F, 1.0F, -1e-9F, 2.0F, nan};
  std::vector<uint32_t> bins = {10, 0, 0, 0};  // counts are added to what is there
  ASSERT_TRUE(run_host(simt("histogram", DType::f32), {buf(x), buf(bins), num(0.0), num(1.0)}));
  EXPECT_EQ(bins[0], 10U + 3U);  // 0, -0, 0.2499999
  EXPECT_EQ(bins[1], 1U);        // 0.25
  EXPECT_EQ(bins[2], 1U);        // 0.5
  EXPECT_EQ(bins[3], 2U);        // 0.75, 0.9999999 (1.0 = hi is outside)
}

TEST(SimtHistogram, IntegerValuesOnePerBin) {
  std::vector<int32_t> x(40);
  std::iota(x.begin(), x.end(), -20);  // -20 .. 19
  std::vector<uint32_t> bins(20, 0);
  ASSERT_TRUE(run_host(simt("histogram", DType::i32), {buf(x), buf(bins), num(-10), num(10)}));
  for (uint32_t c : bins) EXPECT_EQ(c, 1U);
}

TEST(SimtHistogram, RandomValuesMatchAnIndependentCount) {
  auto x = random_vector<double>(50000, 7, -2.0, 12.0);
  std::vector<uint32_t> bins(37, 0), expect(37, 0);
  ASSERT_TRUE(run_host(simt("histogram", DType::f64), {buf(x), buf(bins), num(0.0), num(10.0)}));
  for (double v : x) {
    if (v < 0.0 || v >= 10.0) continue;
    auto b = static_cast<std::size_t>(std::floor(v / 10.0 * 37.0));
    expect[std::min<std::size_t>(b, 36)]++;
  }
  EXPECT_EQ(bins, expect);
}

// --- checksum ----------------------------------------------------------------------

uint32_t le_word_sum(const std::vector<uint8_t>& bytes) {
  uint32_t s = 0;
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t w = 0;
    for (std::size_t b = 0; b < 4 && i + b < bytes.size(); ++b)
      w += static_cast<uint32_t>(bytes[i + b]) << (8 * b);
    s += w;
  }
  return s;
}

TEST(SimtChecksum, OddByteCountZeroPadsTheLastWord) {
  std::vector<uint8_t> x = {0x01, 0x02, 0x03, 0x04, 0xaa, 0xbb, 0xcc};
  std::vector<uint32_t> out = {0xdeadbeef};
  const KernelEntry* e = simt("checksum", DType::u8);
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(run_host(e, {buf(x), buf(out)}));
  EXPECT_EQ(out[0], 0x04030201U + 0x00ccbbaaU);
}

TEST(SimtChecksum, IsTheSameEntryForEveryDtypeAndCountsBytes) {
  const KernelEntry* e = simt("checksum", DType::f32);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e, simt("checksum", DType::u8));
  EXPECT_EQ(e, simt("checksum", DType::f16));
  std::vector<float> f = {1.0F, -2.0F, 3.5F};
  std::vector<uint8_t> bytes(sizeof(float) * f.size());
  std::memcpy(bytes.data(), f.data(), bytes.size());
  std::vector<uint32_t> out = {0};
  ASSERT_TRUE(run_host(e, {buf(f), buf(out)}));
  EXPECT_EQ(out[0], le_word_sum(bytes));
}

TEST(SimtChecksum, IsOrderIndependentAndWraps) {
  auto v = random_vector<uint32_t>(1001, 8, 0.0, 4294967295.0);
  std::vector<uint32_t> out1 = {0}, out2 = {0};
  ASSERT_TRUE(run_host(simt("checksum", DType::u32), {buf(v), buf(out1)}));
  std::reverse(v.begin(), v.end());
  ASSERT_TRUE(run_host(simt("checksum", DType::u32), {buf(v), buf(out2)}));
  EXPECT_EQ(out1[0], out2[0]);
  uint32_t s = 0;
  for (uint32_t w : v) s += w;
  EXPECT_EQ(out1[0], s);
}

// --- spin ----------------------------------------------------------------------------

TEST(SimtSpin, HostReferenceTakesAtLeastNsAndLeavesXUnchanged) {
  std::vector<float> x = {1.0F, 2.0F};
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(run_host(simt("spin", DType::f32), {buf(x), LaunchArg::value(uint64_t{3'000'000})}));
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(elapsed, std::chrono::milliseconds(3));
  EXPECT_EQ(x, (std::vector<float>{1.0F, 2.0F}));
}

}  // namespace
}  // namespace tandem::kernels::test
