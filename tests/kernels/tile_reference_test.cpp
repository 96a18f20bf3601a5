// SPDX-License-Identifier: Apache-2.0
// The Tile kernels' host references against expectations computed here:
// sizes that are not multiples of any tile, non-contiguous strided views.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "host_numeric.hpp"
#include "kernel_test_util.hpp"

namespace tandem::kernels::test {
namespace {

using std::int32_t;
using std::int64_t;

TEST(TileAdd, Rank2NonMultipleShapeWithStridedAndTransposedInputs) {
  const int64_t m = 67, n = 45;
  // a: the top-left m x n corner of an m x 80 matrix (row stride 80).
  auto abuf = random_vector<float>(static_cast<std::size_t>(m * 80), 11);
  // b: an n x m matrix seen transposed (strides 1, n).
  auto bbuf = random_vector<float>(static_cast<std::size_t>(n * m), 12);
  std::vector<float> out(static_cast<std::size_t>(m * n), -1.0F);
  ASSERT_TRUE(run_host(tile("add", DType::f32, 2),
                       {tensor(abuf.data(), {m, n}, {80, 1}), tensor(bbuf.data(), {m, n}, {1, n}),
                        tensor(out.data(), {m, n})}));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_EQ(out[static_cast<std::size_t>(i * n + j)],
                abuf[static_cast<std::size_t>(i * 80 + j)] + bbuf[static_cast<std::size_t>(j * n + i)]);
    }
  }
}

TEST(TileAdd, Rank1StridedAndEveryTileShape) {
  const int64_t n = 5000;  // not a multiple of 1024 or 4096
  auto a = random_vector<double>(static_cast<std::size_t>(3 * n), 13);
  auto b = random_vector<double>(static_cast<std::size_t>(n), 14);
  for (const TileShape& t : kernel_tiles(Model::tile, "add", DType::f64)) {
    if (t.rank != 1) continue;
    std::vector<double> out(static_cast<std::size_t>(2 * n), 7.0);
    ASSERT_TRUE(run_host(find(Model::tile, "add", DType::f64, &t),
                         {tensor(a.data(), {n}, {3}), tensor(b.data(), {n}), tensor(out.data(), {n}, {2})}));
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[static_cast<std::size_t>(2 * i)],
                a[static_cast<std::size_t>(3 * i)] + b[static_cast<std::size_t>(i)]);
      EXPECT_EQ(out[static_cast<std::size_t>(2 * i + 1)], 7.0);  // untouched gaps
    }
  }
}

TEST(TileAdd, HalfRoundsTheF32SumToNearestEven) {
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even -> 1. 1 + 3*2^-11 ties to 1 + 2^-9.
  std::vector<half> a = {{0x3C00}, {0x3C00}, {0x7BFF}};  // 1, 1, 65504
  std::vector<half> b = {{0x1000}, {0x1600}, {0x5000}};  // 2^-11, 3*2^-11, 32
  std::vector<half> out(3);
  ASSERT_TRUE(run_host(tile("add", DType::f16, 1),
                       {tensor(a.data(), {3}), tensor(b.data(), {3}), tensor(out.data(), {3})}));
  EXPECT_EQ(out[0].bits, 0x3C00);
  EXPECT_EQ(out[1].bits, 0x3C02);
  EXPECT_EQ(out[2].bits, 0x7C00);  // 65536 overflows to inf
}

TEST(TileScale, Rank2IntegersWrapOnAStridedView) {
  std::vector<int32_t> x(10 * 9, 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<int32_t>(static_cast<std::uint32_t>(i) +
                                static_cast<std::uint32_t>(std::numeric_limits<int32_t>::max()) - 50U);
  }
  const auto x0 = x;
  // every other column of a 10 x 9 matrix: shape 10 x 5, strides (9, 2)
  ASSERT_TRUE(run_host(tile("scale", DType::i32, 2), {tensor(x.data(), {10, 5}, {9, 2}), num(3)}));
  for (int64_t i = 0; i < 10; ++i) {
    for (int64_t j = 0; j < 9; ++j) {
      const auto k = static_cast<std::size_t>(i * 9 + j);
      const int32_t expect = j % 2 == 0 ? static_cast<int32_t>(3U * static_cast<uint32_t>(x0[k])) : x0[k];
      EXPECT_EQ(x[k], expect) << i << "," << j;
    }
  }
}

TEST(TileScale, SixteenBitFloatsScaleInF32) {
  std::vector<bfloat16> x = {host::to_bfloat16(1.5F), host::to_bfloat16(-3.0F)};
  ASSERT_TRUE(run_host(tile("scale", DType::bf16, 1), {tensor(x.data(), {2}), num(0.5)}));
  EXPECT_EQ(host::to_float(x[0]), 0.75F);
  EXPECT_EQ(host::to_float(x[1]), -1.5F);
}

TEST(TileCopy, NonContiguousSourceIntoContiguousDestination) {
  const int64_t m = 33, n = 70;
  auto src = random_vector<double>(static_cast<std::size_t>(2 * m * 3 * n), 15);
  std::vector<double> dst(static_cast<std::size_t>(m * n));
  // rows 0, 2, 4, ... and columns 0, 3, 6, ... of a (2m) x (3n) matrix
  ASSERT_TRUE(run_host(tile("copy", DType::f64, 2),
                       {tensor(src.data(), {m, n}, {2 * 3 * n, 3}), tensor(dst.data(), {m, n})}));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_EQ(dst[static_cast<std::size_t>(i * n + j)],
                src[static_cast<std::size_t>(2 * i * 3 * n + 3 * j)]);
    }
  }
}

TEST(TileTranspose, NonMultipleShapeFromAStridedSlice) {
  const int64_t m = 70, n = 33;  // src is m x n, a slice starting at (1, 2) of a 72 x 40 matrix
  auto big = random_vector<float>(72 * 40, 16);
  std::vector<float> dst(static_cast<std::size_t>(n * m));
  for (const TileShape& t : kernel_tiles(Model::tile, "transpose", DType::f32)) {
    std::fill(dst.begin(), dst.end(), 0.0F);
    ASSERT_TRUE(run_host(find(Model::tile, "transpose", DType::f32, &t),
                         {tensor(big.data() + 40 + 2, {m, n}, {40, 1}), tensor(dst.data(), {n, m})}));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        ASSERT_EQ(dst[static_cast<std::size_t>(i * m + j)],
                  big[static_cast<std::size_t>((j + 1) * 40 + i + 2)]);
      }
    }
  }
}

TEST(TileMatmul, MatchesTheF64ProductWithinTheStatedTolerance) {
  const int64_t m = 37, k = 53, n = 29;
  auto a = random_vector<float>(static_cast<std::size_t>(m * k), 17);
  auto bt = random_vector<float>(static_cast<std::size_t>(n * k),
                                 18);  // b stored transposed: b(k, j) = bt[j*k + k]
  std::vector<float> c(static_cast<std::size_t>(m * n));
  const KernelEntry* e = tile("matmul", DType::f32);
  ASSERT_TRUE(
      run_host(e, {tensor(a.data(), {m, k}), tensor(bt.data(), {k, n}, {1, k}), tensor(c.data(), {m, n})}));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0.0, magnitude = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double term = static_cast<double>(a[static_cast<std::size_t>(i * k + p)]) *
                            static_cast<double>(bt[static_cast<std::size_t>(j * k + p)]);
        exact += term;
        magnitude += std::fabs(term);
      }
      EXPECT_NEAR(c[static_cast<std::size_t>(i * n + j)], exact, 1e-6 * magnitude);
    }
  }
  EXPECT_GT(e->tolerance.rtol, 0.0);
}

TEST(TileMatmul, EmptyInnerDimensionGivesZeros) {
  std::vector<float> a(1), b(1), c(6, 5.0F);
  ASSERT_TRUE(run_host(tile("matmul", DType::f32),
                       {tensor(a.data(), {2, 0}), tensor(b.data(), {0, 3}), tensor(c.data(), {2, 3})}));
  for (float x : c) EXPECT_EQ(x, 0.0F);
}

TEST(TileRowSum, FloatRowsIntoAStridedOutput) {
  const int64_t m = 45, n = 77;
  auto x = random_vector<float>(static_cast<std::size_t>(m * n), 19);
  std::vector<float> out(static_cast<std::size_t>(2 * m), -9.0F);
  ASSERT_TRUE(
      run_host(tile("row_sum", DType::f32), {tensor(x.data(), {m, n}), tensor(out.data(), {m}, {2})}));
  for (int64_t i = 0; i < m; ++i) {
    double s = 0.0, magnitude = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      s += x[static_cast<std::size_t>(i * n + j)];
      magnitude += std::fabs(x[static_cast<std::size_t>(i * n + j)]);
    }
    EXPECT_NEAR(out[static_cast<std::size_t>(2 * i)], s, 1e-6 * magnitude);
    EXPECT_EQ(out[static_cast<std::size_t>(2 * i + 1)], -9.0F);
  }
}

TEST(TileRowSum, IntegersWrapAndColumnViewsWork) {
  // x is the transpose of a 5 x 3 matrix: x(i, j) = base[j * 3 + i]
  std::vector<int32_t> base(15, std::numeric_limits<int32_t>::max());
  std::vector<int32_t> out(3);
  ASSERT_TRUE(
      run_host(tile("row_sum", DType::i32), {tensor(base.data(), {3, 5}, {1, 3}), tensor(out.data(), {3})}));
  const auto expect =
      static_cast<int32_t>(5U * static_cast<std::uint32_t>(std::numeric_limits<int32_t>::max()));
  for (int32_t v : out) EXPECT_EQ(v, expect);
}

TEST(HostNumeric, HalfConversionRoundsToNearestEvenAtEveryRange) {
  using host::to_half;
  EXPECT_EQ(to_half(1.0F).bits, 0x3C00);
  EXPECT_EQ(to_half(-2.0F).bits, 0xC000);
  EXPECT_EQ(to_half(65504.0F).bits, 0x7BFF);
  EXPECT_EQ(to_half(65519.99F).bits, 0x7BFF);
  EXPECT_EQ(to_half(65520.0F).bits, 0x7C00);               // tie at the top rounds to inf
  EXPECT_EQ(to_half(std::ldexp(1.0F, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(to_half(std::ldexp(1.0F, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(to_half(std::ldexp(1.0F, -25)).bits, 0x0000);  // tie -> even (0)
  EXPECT_EQ(to_half(std::ldexp(3.0F, -25)).bits, 0x0002);  // tie -> even (2)
  EXPECT_EQ(to_half(std::ldexp(1.0F, -26)).bits, 0x0000);
  EXPECT_EQ(to_half(std::numeric_limits<float>::infinity()).bits, 0x7C00);
  EXPECT_EQ(to_half(std::numeric_limits<float>::quiet_NaN()).bits, 0x7FFF);
  for (std::uint32_t bits = 0; bits < 0x7C00; ++bits) {  // every finite positive half round-trips
    ASSERT_EQ(to_half(host::to_float(half{static_cast<std::uint16_t>(bits)})).bits, bits);
  }
  EXPECT_EQ(host::to_bfloat16(1.0F + std::ldexp(1.0F, -8)).bits, 0x3F80);  // tie -> even
  EXPECT_EQ(host::to_bfloat16(1.0F + std::ldexp(3.0F, -8)).bits, 0x3F82);
}

}  // namespace
}  // namespace tandem::kernels::test
