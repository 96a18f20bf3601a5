// kernels::launch remembers, per thread, the last launch whose checks
// passed and skips check_args / launch_dims for an identical repeat
// (kernels/src/launch_memo.hpp). Anything that differs (a shape, a dtype,
// the block) must be checked again: the same error, with the same message,
// as on a thread that never launched.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>

#include "tandem/device.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
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
  const Platform p_ = Platform::sim();
  const Context ctx_ = Context::create(p_.device(0));
  const Stream s_ = Stream::create(ctx_);
  const k::KernelEntry* copy_ = k::find(k::Model::simt, "copy", DType::f32);
};

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

}  // namespace
}  // namespace tandem
