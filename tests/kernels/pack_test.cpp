// SPDX-License-Identifier: Apache-2.0
// pack_params: the bytes of each parameter, scalar conversion rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernel_test_util.hpp"

namespace tandem::kernels::test {
namespace {

template <class T>
T read(const PackedParams& p, std::uint32_t i) {
  const auto b = p.bytes(i);
  EXPECT_EQ(b.size(), sizeof(T));
  T v{};
  std::memcpy(&v, b.data(), std::min(sizeof(T), b.size()));
  return v;
}

TEST(PackParams, SimtBuffersAndScalarsHaveTheEntryPointLayout) {
  const KernelEntry* e = find(Model::simt, "axpy", DType::f32);
  ASSERT_NE(e, nullptr);
  const std::vector<LaunchArg> args = {LaunchArg::view(0x1000, ArgShape::buffer(DType::f32, 10)),
                                       LaunchArg::view(0x2000, ArgShape::buffer(DType::f32, 10)),
                                       LaunchArg::value(2.5)};
  PackedParams p;
  ASSERT_EQ(pack_params(*e, args, p), "");
  ASSERT_EQ(p.count(), 3U);
  const auto x = read<BufferParam<float>>(p, 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(x.data), 0x1000U);
  EXPECT_EQ(x.len, 10U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(read<BufferParam<float>>(p, 1).data), 0x2000U);
  EXPECT_EQ(read<float>(p, 2), 2.5F);
  void** ptrs = p.pointers();
  for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(ptrs[i], static_cast<const void*>(p.bytes(i).data()));
}

TEST(PackParams, TileTensorsCarryShapeAndStrides) {
  const KernelEntry* e = find(Model::tile, "row_sum", DType::f64);
  ASSERT_NE(e, nullptr);
  const std::int64_t shape[] = {5, 7}, strides[] = {16, 2}, out_shape[] = {5}, out_strides[] = {3};
  const std::vector<LaunchArg> args = {
      LaunchArg::view(0xabc0, ArgShape::tensor(DType::f64, shape, strides)),
      LaunchArg::view(0xdef0, ArgShape::tensor(DType::f64, out_shape, out_strides))};
  PackedParams p;
  ASSERT_EQ(pack_params(*e, args, p), "");
  const auto x = read<TensorParam<double, 2>>(p, 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(x.data), 0xabc0U);
  EXPECT_EQ(x.shape[0], 5);
  EXPECT_EQ(x.shape[1], 7);
  EXPECT_EQ(x.stride[0], 16);
  EXPECT_EQ(x.stride[1], 2);
  const auto o = read<TensorParam<double, 1>>(p, 1);
  EXPECT_EQ(o.shape[0], 5);
  EXPECT_EQ(o.stride[0], 3);
}

TEST(PackParams, ByteParametersCountBytes) {
  const KernelEntry* e = find(Model::simt, "checksum", DType::f64);
  ASSERT_NE(e, nullptr);
  PackedParams p;
  ASSERT_EQ(pack_params(*e,
                        std::vector<LaunchArg>{LaunchArg::view(0x10, ArgShape::buffer(DType::f64, 3)),
                                               LaunchArg::view(0x20, ArgShape::buffer(DType::u32, 1))},
                        p),
            "");
  EXPECT_EQ(read<BufferParam<std::uint8_t>>(p, 0).len, 24U);
  EXPECT_EQ(read<BufferParam<std::uint32_t>>(p, 1).len, 1U);
}

TEST(PackParams, DefaultsFillOmittedScalarsAndMissingOnesAreErrors) {
  const KernelEntry* iota = find(Model::simt, "iota", DType::i64);
  PackedParams p;
  ASSERT_EQ(pack_params(*iota,
                        std::vector<LaunchArg>{LaunchArg::view(0x10, ArgShape::buffer(DType::i64, 3)),
                                               LaunchArg::defaulted(), LaunchArg::value(std::int64_t{-4})},
                        p),
            "");
  EXPECT_EQ(read<std::int64_t>(p, 1), 0);
  EXPECT_EQ(read<std::int64_t>(p, 2), -4);

  const KernelEntry* fill = find(Model::simt, "fill", DType::f32);
  const std::string err = pack_params(
      *fill,
      std::vector<LaunchArg>{LaunchArg::view(0x10, ArgShape::buffer(DType::f32, 3)), LaunchArg::defaulted()},
      p);
  EXPECT_NE(err.find("missing scalar 'value'"), std::string::npos) << err;
}

TEST(PackParams, ScalarsConvertToTheParameterTypeOrAreRejected) {
  auto pack_one = [](DType d, ScalarValue v, PackedParams& p) {
    const KernelEntry* e = find(Model::simt, "fill", d);
    EXPECT_NE(e, nullptr);
    return pack_params(
        *e, std::vector<LaunchArg>{LaunchArg::view(0x10, ArgShape::buffer(d, 1)), LaunchArg::value(v)}, p);
  };
  PackedParams p;
  EXPECT_EQ(pack_one(DType::i32, 3.0, p), "");
  EXPECT_EQ(read<std::int32_t>(p, 1), 3);
  EXPECT_NE(pack_one(DType::i32, 3.5, p), "");
  EXPECT_NE(pack_one(DType::i32, 2147483648.0, p), "");
  EXPECT_EQ(pack_one(DType::i32, -2147483648.0, p), "");
  EXPECT_NE(pack_one(DType::i32, std::int64_t{1} << 31, p), "");
  EXPECT_NE(pack_one(DType::u8, std::int64_t{-1}, p), "");
  EXPECT_NE(pack_one(DType::u8, 256.0, p), "");
  EXPECT_EQ(pack_one(DType::u8, std::uint64_t{255}, p), "");
  EXPECT_EQ(read<std::uint8_t>(p, 1), 255);
  EXPECT_NE(pack_one(DType::u32, -0.5, p), "");
  EXPECT_EQ(pack_one(DType::i64, std::numeric_limits<std::int64_t>::min(), p), "");
  EXPECT_NE(pack_one(DType::i64, std::numeric_limits<std::uint64_t>::max(), p), "");
  EXPECT_NE(pack_one(DType::i64, 9.3e18, p), "");
  EXPECT_EQ(pack_one(DType::f32, std::int64_t{7}, p), "");
  EXPECT_EQ(read<float>(p, 1), 7.0F);
  EXPECT_NE(pack_one(DType::f32, 1e39, p), "");
  EXPECT_EQ(pack_one(DType::f64, 1e300, p), "");
  EXPECT_EQ(read<double>(p, 1), 1e300);
  EXPECT_NE(pack_one(DType::f64, std::numeric_limits<double>::infinity(), p), "");
  EXPECT_EQ(pack_one(DType::f16, 0.5, p), "");  // f16 takes an f32 value
  EXPECT_EQ(read<float>(p, 1), 0.5F);

  const KernelEntry* spin = find(Model::simt, "spin", DType::u8);
  EXPECT_EQ(pack_params(*spin,
                        std::vector<LaunchArg>{LaunchArg::view(0x10, ArgShape::buffer(DType::u8, 1)),
                                               LaunchArg::value(std::uint64_t{1} << 63)},
                        p),
            "");
  EXPECT_EQ(read<std::uint64_t>(p, 1), std::uint64_t{1} << 63);
  const std::string neg = pack_params(
      *spin,
      std::vector<LaunchArg>{LaunchArg::view(0x10, ArgShape::buffer(DType::u8, 1)), LaunchArg::value(-1.0)},
      p);
  EXPECT_NE(neg.find("'ns'"), std::string::npos) << neg;
}

TEST(PackParams, CopiesArePointerSafeAndArityIsChecked) {
  const KernelEntry* e = find(Model::simt, "scale", DType::f32);
  PackedParams a;
  ASSERT_EQ(pack_params(*e,
                        std::vector<LaunchArg>{LaunchArg::view(0x40, ArgShape::buffer(DType::f32, 2)),
                                               LaunchArg::value(3.0)},
                        a),
            "");
  const PackedParams b = a;  // NOLINT(performance-unnecessary-copy-initialization)
  PackedParams c = b;
  void** pc = c.pointers();
  EXPECT_EQ(pc[1], static_cast<const void*>(c.bytes(1).data()));
  float v = 0;
  std::memcpy(&v, pc[1], sizeof v);
  EXPECT_EQ(v, 3.0F);
  EXPECT_NE(pack_params(*e, std::vector<LaunchArg>{LaunchArg::value(3.0)}, a), "");
  const KernelEntry* t = find(Model::tile, "copy", DType::f32, nullptr, 2);
  const std::int64_t s1[] = {4};
  const std::string err =
      pack_params(*t,
                  std::vector<LaunchArg>{LaunchArg::view(0x10, ArgShape::tensor(DType::f32, s1)),
                                         LaunchArg::view(0x20, ArgShape::tensor(DType::f32, s1))},
                  a);
  EXPECT_NE(err.find("rank-2"), std::string::npos) << err;
}

TEST(PackParams, HostReferenceReadsWhatWasPacked) {
  // The sim's path: pack, hand params[] to the host reference.
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  ASSERT_TRUE(run_host(find(Model::simt, "axpy", DType::f32), {buf(x), buf(y), num(2.0)}));
  EXPECT_EQ(y, (std::vector<float>{12, 24, 36}));
}

}  // namespace
}  // namespace tandem::kernels::test
