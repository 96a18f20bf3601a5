// SPDX-License-Identifier: Apache-2.0
// The parameter ABI's sizes and offsets are those of the structs kernels receive.
#include "tandem/base/param_abi.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

namespace tandem {
namespace {

TEST(ParamAbi, SlotSizesAreTheStructSizes) {
  EXPECT_EQ(param_bytes(0), sizeof(BufferParam<float>));
  EXPECT_EQ(param_bytes(1), sizeof(TensorParam<float, 1>));
  EXPECT_EQ(param_bytes(2), sizeof(TensorParam<double, 2>));
  EXPECT_EQ(param_bytes(3), sizeof(TensorParam<std::uint8_t, 3>));
  EXPECT_EQ(param_bytes(4), sizeof(TensorParam<std::int64_t, 4>));
  EXPECT_EQ(param_bytes(kMaxRank + 1), 0U);
  EXPECT_EQ(kParamSlotBytes, sizeof(TensorParam<float, kMaxRank>));
}

TEST(ParamAbi, OffsetsAreTheStructMembers) {
  BufferParam<float> b{};
  EXPECT_EQ(kBufferParamLenOffset, static_cast<std::size_t>(reinterpret_cast<std::byte*>(&b.len) -
                                                            reinterpret_cast<std::byte*>(&b)));
  TensorParam<float, 3> t{};
  const auto at = [&](const void* p) {
    return static_cast<std::size_t>(static_cast<const std::byte*>(p) -
                                    reinterpret_cast<const std::byte*>(&t));
  };
  EXPECT_EQ(at(&t.data), 0U);
  EXPECT_EQ(kTensorParamShapeOffset, at(&t.shape[0]));
  EXPECT_EQ(tensor_param_stride_offset(3), at(&t.stride[0]));
}

}  // namespace
}  // namespace tandem
