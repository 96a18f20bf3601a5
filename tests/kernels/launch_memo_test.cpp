// SPDX-License-Identifier: Apache-2.0
// kernels::launch remembers, per thread, the last launch whose checks
// passed and, for a repeat on views of the same shapes with the same
// scalars, grid and block, skips check_args / launch_dims / pack_params and
// writes only the views' pointers into the remembered bytes
// (kernels/src/launch_memo.hpp). Anything that differs (a shape, a dtype,
// a scalar, the block) must be checked again: the same error, with the same
// message, as on a thread that never launched; and a repeat must run on its
// own views and scalars, never the remembered ones.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tandem/device.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"

namespace tandem {
namespace {

namespace k = kernels;

// The launch's error message on a thread that never launched anything.
template <class F>
std::string first_launch_error(F&& launch) {
  std::string what;
  std::thread([&] {
    try {
      launch();
    } catch (const Error& e) {
      what = e.what();
    }
  }).join();
  return what;
}

template <class F>
std::string error_of(F&& launch) {
  try {
    launch();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class LaunchMemo : public ::testing::Test {
 protected:
  std::vector<float> floats(const View& v) const {
    const std::vector<std::byte> raw = read_back(s_, v, std::chrono::seconds(30));
    std::vector<float> out(raw.size() / sizeof(float));
    std::memcpy(out.data(), raw.data(), out.size() * sizeof(float));
    return out;
  }
  View filled(float value) const {
    View v = allocate(s_, DType::f32, 256);
    const k::Arg args[] = {k::Arg::of(v), k::Arg::value(static_cast<double>(value))};
    (void)k::launch(s_, *fill_, args);
    return v;
  }

  const Platform p_ = Platform::sim();
  const Context ctx_ = Context::create(p_.device(0));
  const Stream s_ = Stream::create(ctx_);
  const k::KernelEntry* copy_ = k::find(k::Model::simt, "copy", DType::f32);
  const k::KernelEntry* fill_ = k::find(k::Model::simt, "fill", DType::f32);
};

TEST_F(LaunchMemo, ARepeatOnOtherViewsOfTheSameShapesReadsAndWritesThoseViews) {
  ASSERT_NE(copy_, nullptr);
  ASSERT_NE(fill_, nullptr);
  const View a = filled(1.0F), b = filled(0.0F), c = filled(3.0F), d = filled(0.0F);
  const k::Arg first[] = {k::Arg::of(a), k::Arg::of(b)};
  const k::Arg repeat[] = {k::Arg::of(c), k::Arg::of(d)};
  (void)k::launch(s_, *copy_, first);   // remembered
  (void)k::launch(s_, *copy_, repeat);  // the same shapes: the remembered bytes, re-pointed
  EXPECT_EQ(floats(b), std::vector<float>(256, 1.0F));
  EXPECT_EQ(floats(d), std::vector<float>(256, 3.0F));
  EXPECT_EQ(floats(a), std::vector<float>(256, 1.0F)) << "the repeat must not write the first launch's views";
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

TEST_F(LaunchMemo, KernelsLaunchedInTurnEachRepeatWithTheirOwnBytes) {
  ASSERT_NE(copy_, nullptr);
  ASSERT_NE(fill_, nullptr);
  const View a = filled(1.0F), b = filled(0.0F), c = filled(4.0F), d = filled(0.0F);
  for (int round = 0; round < 3; ++round) {  // copy, fill, copy, fill...: both remembered at once
    const View& from = round % 2 == 0 ? a : c;
    const View& to = round % 2 == 0 ? b : d;
    const k::Arg copy_args[] = {k::Arg::of(from), k::Arg::of(to)};
    (void)k::launch(s_, *copy_, copy_args);
    const View other = filled(static_cast<float>(10 + round));
    EXPECT_EQ(floats(other), std::vector<float>(256, static_cast<float>(10 + round))) << "round " << round;
  }
  EXPECT_EQ(floats(b), std::vector<float>(256, 1.0F));
  EXPECT_EQ(floats(d), std::vector<float>(256, 4.0F));
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

TEST_F(LaunchMemo, ARepeatWithAnotherScalarRunsWithThatScalar) {
  ASSERT_NE(fill_, nullptr);
  const View v = filled(1.0F);  // remembered with 1
  const k::Arg again[] = {k::Arg::of(v), k::Arg::value(5.0)};
  (void)k::launch(s_, *fill_, again);
  EXPECT_EQ(floats(v), std::vector<float>(256, 5.0F));
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

TEST_F(LaunchMemo, AScalarThatBecomesInvalidAfterAPassingLaunchIsRefusedAsOnAFirstLaunch) {
  ASSERT_NE(fill_, nullptr);
  const View v = allocate(s_, DType::f32, 256);
  const k::Arg bad[] = {k::Arg::of(v), k::Arg::value(1e300)};  // not a finite f32
  const auto launch_bad = [&] { (void)k::launch(s_, *fill_, bad); };
  const std::string expected = first_launch_error(launch_bad);
  ASSERT_FALSE(expected.empty()) << "1e300 must be refused as an f32 fill value";

  const k::Arg good[] = {k::Arg::of(v), k::Arg::value(2.0)};
  (void)k::launch(s_, *fill_, good);
  EXPECT_EQ(error_of(launch_bad), expected);
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

TEST_F(LaunchMemo, AnArgumentShapeThatChangesAfterAPassingLaunchIsCheckedAgain) {
  ASSERT_NE(copy_, nullptr);
  const View a = allocate(s_, DType::f32, 256);
  const View b = allocate(s_, DType::f32, 256);
  const View shorter = allocate(s_, DType::f32, 128);
  const k::Arg good[] = {k::Arg::of(a), k::Arg::of(b)};
  const k::Arg bad[] = {k::Arg::of(a), k::Arg::of(shorter)};
  const auto launch_bad = [&] { (void)k::launch(s_, *copy_, bad); };
  const std::string expected = first_launch_error(launch_bad);
  ASSERT_FALSE(expected.empty()) << "copy of 256 into 128 elements must be refused";

  (void)k::launch(s_, *copy_, good);  // remembered
  (void)k::launch(s_, *copy_, good);  // a repeat
  EXPECT_EQ(error_of(launch_bad), expected);
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

TEST_F(LaunchMemo, ABlockThatChangesAfterAPassingLaunchIsCheckedAgain) {
  ASSERT_NE(copy_, nullptr);
  const View a = allocate(s_, DType::f32, 256);
  const View b = allocate(s_, DType::f32, 256);
  const k::Arg args[] = {k::Arg::of(a), k::Arg::of(b)};
  const driver::Dim3 grid{1, 1, 1};
  const auto launch_bad = [&] { (void)k::launch(s_, *copy_, args, grid, driver::Dim3{2048, 1, 1}); };
  const std::string expected = first_launch_error(launch_bad);
  ASSERT_FALSE(expected.empty()) << "a block of 2048 threads must be refused";

  (void)k::launch(s_, *copy_, args, grid, driver::Dim3{256, 1, 1});
  EXPECT_EQ(error_of(launch_bad), expected);
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

TEST_F(LaunchMemo, AnElementTypeThatChangesAfterAPassingLaunchIsCheckedAgain) {
  ASSERT_NE(copy_, nullptr);
  const View a = allocate(s_, DType::f32, 256);
  const View b = allocate(s_, DType::f32, 256);
  const View ints = allocate(s_, DType::i32, 256);  // same length and bytes, another dtype
  const k::Arg good[] = {k::Arg::of(a), k::Arg::of(b)};
  const k::Arg bad[] = {k::Arg::of(a), k::Arg::of(ints)};
  const auto launch_bad = [&] { (void)k::launch(s_, *copy_, bad); };
  const std::string expected = first_launch_error(launch_bad);
  ASSERT_FALSE(expected.empty()) << "an i32 destination for the f32 copy must be refused";

  (void)k::launch(s_, *copy_, good);
  EXPECT_EQ(error_of(launch_bad), expected);
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

TEST_F(LaunchMemo, StridesThatChangeAfterAPassingLaunchAreCheckedAgainAndReadAsTheViewsOwn) {
  const k::KernelEntry* tile_copy = k::find(k::Model::tile, "copy", DType::f32, nullptr, 2);
  ASSERT_NE(tile_copy, nullptr);
  std::vector<float> values(64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);  // x[r, c] = 8r + c
  View whole = allocate(s_, DType::f32, 64);
  (void)upload(s_, whole, std::as_bytes(std::span<const float>(values)));
  const std::int64_t square[] = {8, 8}, narrow[] = {8, 4};
  whole = std::move(whole).to_tensor(square);
  const DimRange left[] = {{0, 8}, {0, 4}};
  const View strided = whole.tensor_view(std::nullopt, left);              // 8 x 4, strides {8, 1}
  const View contiguous = allocate(s_, DType::f32, 32).to_tensor(narrow);  // 8 x 4, strides {4, 1}
  View first = allocate(s_, DType::f32, 32).to_tensor(narrow);
  View second = allocate(s_, DType::f32, 32).to_tensor(narrow);
  const k::Arg remembered[] = {k::Arg::of(contiguous), k::Arg::of(first)};
  const k::Arg other_strides[] = {k::Arg::of(strided), k::Arg::of(second)};
  (void)k::launch(s_, *tile_copy, remembered);
  (void)k::launch(s_, *tile_copy, other_strides);  // the same shapes, not the same strides: no repeat
  std::vector<float> expected;
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 4; ++c) expected.push_back(static_cast<float>(8 * r + c));
  }
  EXPECT_EQ(floats(std::move(second).into_buffer()), expected);
  ASSERT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
}

}  // namespace
}  // namespace tandem
