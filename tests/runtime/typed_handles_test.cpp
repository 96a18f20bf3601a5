// SPDX-License-Identifier: Apache-2.0
// The typed facades (DeviceBuffer<T>, Tensor<T>) keep the View rules
// (spec/runtime.md §3, §5, §7) and add compile-time element types.
#include <cstring>

#include "runtime/runtime_test_support.hpp"
#include "tandem/device_buffer.hpp"
#include "tandem/tensor.hpp"

namespace tandem::test {
namespace {

template <class T>
concept HasDeviceBuffer = requires {
  typename DeviceBuffer<T>::value_type;
};

// §7: DeviceCopy types make buffers; bool is a DType but not DeviceCopy.
static_assert(HasDeviceBuffer<float> && HasDeviceBuffer<half> && HasDeviceBuffer<fp8_e4m3> &&
              HasDeviceBuffer<tf32> && HasDeviceBuffer<std::uint8_t>);
static_assert(!HasDeviceBuffer<bool>, "DeviceBuffer<bool> must not compile: not every byte is a bool");

using TypedHandles = RuntimeFixture;

TEST_F(TypedHandles, DeviceBufferOfBoolIsRejectedAtCompileTimeAndBytesAreValidatedForBoolTensors) {
  Env e = env();
  auto bytes = DeviceBuffer<std::uint8_t>::allocate(e.a, 4);
  const std::byte good[] = {std::byte{0}, std::byte{1}, std::byte{1}, std::byte{0}};
  (void)upload(e.a, bytes.view(), good);
  const std::int64_t shape[] = {2, 2};
  Tensor<bool> flags = Tensor<bool>::from_bytes_checked(std::move(bytes), e.a, shape);
  EXPECT_EQ(flags.size(), 4U);

  auto bad = DeviceBuffer<std::uint8_t>::allocate(e.a, 3);
  const std::byte with_two[] = {std::byte{1}, std::byte{2}, std::byte{0}};
  (void)upload(e.a, bad.view(), with_two);
  const std::int64_t three[] = {3};
  const std::uint64_t id = bad.allocation_id();
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_dtype, Tensor<bool>::from_bytes_checked(std::move(bad), e.a, three));
  EXPECT_EQ(bad.allocation_id(), id) << "the byte buffer stays usable after a failed validation";
  EXPECT_EQ(bad.size(), 3U);
}

TEST_F(TypedHandles, TypedSliceSplitPeelAndAtomicShareTheAllocationAndCount) {
  Env e = env();
  auto x = DeviceBuffer<float>::allocate(e.a, 16);
  const std::uint64_t id = x.allocation_id();
  auto s = x.slice(4, 8);
  auto p = x.peel(3);
  auto at = x.atomic();
  EXPECT_EQ(s.allocation_id(), id);
  EXPECT_EQ(s.size(), 8U);
  EXPECT_EQ(p.size(), 1U);
  EXPECT_TRUE(at.is_atomic());
  EXPECT_FALSE(s.is_atomic());
  EXPECT_EQ(x.view_count(), 4U);
  EXPECT_EQ(s.device_data(), x.device_data() + 4);
  auto [lo, hi] = std::move(s).split_at(2);
  EXPECT_EQ(lo.size(), 2U);
  EXPECT_EQ(hi.size(), 6U);
  EXPECT_EQ(x.view_count(), 5U);
  EXPECT_FALSE(x.is_unique());
}

TEST_F(TypedHandles, TensorFromBufferIsAMoveWithoutCopyAndBackNeedsUniqueness) {
  Env e = env();
  auto buf = DeviceBuffer<float>::allocate(e.a, 12);
  const std::uint64_t id = buf.allocation_id();
  float* const ptr = buf.device_data();
  Tensor<float> t = Tensor<float>::from_buffer(std::move(buf), {3, 4});
  EXPECT_EQ(t.allocation_id(), id);
  EXPECT_EQ(t.device_data(), ptr);
  EXPECT_TRUE(t.is_unique());
  const TensorParam<float, 2> tp = t.param<2>();
  EXPECT_EQ(tp.shape[0], 3);
  EXPECT_EQ(tp.stride[0], 4);

  {
    auto borrowed = t.as_buffer();  // a counted view while it lives
    EXPECT_FALSE(t.is_unique());
    EXPECT_TANDEM_ERROR(ErrorCode::aliased, std::move(t).into_buffer());
    EXPECT_EQ(t.size(), 12U) << "a failed into_buffer leaves the tensor usable";
  }
  const DimRange rows[] = {{0, 2}, {1, 3}};
  {
    Tensor<float> sub = t.view(std::nullopt, rows);
    EXPECT_FALSE(sub.is_contiguous());
    EXPECT_EQ(sub.device_data(), ptr + 1);
  }
  DeviceBuffer<float> back = std::move(t).into_buffer();
  EXPECT_EQ(back.allocation_id(), id);
  EXPECT_EQ(back.device_data(), ptr);
  EXPECT_EQ(back.size(), 12U);
}

TEST_F(TypedHandles, FromBufferOfAnAliasedBufferFailsAndLeavesTheBufferUsable) {
  Env e = env();
  auto buf = DeviceBuffer<std::int32_t>::allocate(e.a, 8);
  auto alias = buf.share();
  EXPECT_TANDEM_ERROR(ErrorCode::aliased, Tensor<std::int32_t>::from_buffer(std::move(buf), {2, 4}));
  EXPECT_EQ(buf.size(), 8U);
  EXPECT_EQ(buf.view_count(), 2U);
}

TEST_F(TypedHandles, ViewsOfAnotherElementTypeAreRefused) {
  Env e = env();
  View v = allocate(e.a, DType::u32, 4);
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_dtype, DeviceBuffer<float>::from_view(std::move(v)));
  EXPECT_TRUE(v.valid()) << "the view stays with the caller";
  auto u = DeviceBuffer<std::uint32_t>::from_view(std::move(v));
  auto f = std::move(u).reinterpret<float>();  // unique: allowed
  EXPECT_EQ(f.size(), 4U);
  auto as_bytes = std::move(f).reinterpret<std::uint8_t>();
  EXPECT_EQ(as_bytes.size(), 16U);
}

}  // namespace
}  // namespace tandem::test
