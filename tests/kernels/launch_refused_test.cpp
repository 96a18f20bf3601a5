// SPDX-License-Identifier: Apache-2.0
// kernels::launch's own refusals (its argument checks, before
// tandem::launch is called) reach the installed Recorder's
// on_launch_refused with the error's code and what was asked, by parameter
// name (tandem/refused_launch.hpp, docs/runtime.md "Recording"); a launch
// that passes does not, and one the runtime refuses reaches
// on_launch_failed only.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "tandem/device.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/recorder.hpp"
#include "tandem/stream.hpp"
#include "tandem/testing/sim.hpp"

namespace tandem {
namespace {

namespace k = kernels;

// What on_launch_refused was given, copied (the pointers live for the call only).
struct Refusal {
  ErrorCode code = ErrorCode::driver;
  std::string model, kernel;
  std::vector<std::string> views;  // parameter names; "!" appended where no view was given
  std::vector<std::pair<std::string, double>> scalars;
  bool args_fit = true;
  std::uint32_t shared_bytes = 0;
};

class RefusalRecorder final : public Recorder {
 public:
  void on_stream_created(const Stream&) override {}
  void on_view_derived(ViewOrigin, const ViewKey*, const View&, const DeriveArgs&,
                       const StreamRef*) override {}
  void on_derive_failed(ViewOrigin, const ViewKey&, const DeriveArgs&, ErrorCode) override {}
  void on_view_dropped(const View&) override {}
  void on_launch(StreamRef, const driver::KernelSymbol&, const driver::LaunchDims&, void**,
                 std::span<const ViewAccess>, std::uint64_t) override {
    const std::lock_guard lock(mu_);
    ++launches;
  }
  void on_launch_failed(StreamRef, const driver::KernelSymbol&, const driver::LaunchDims&, void**,
                        std::span<const ViewAccess>, ErrorCode) override {
    const std::lock_guard lock(mu_);
    ++failed;
  }
  void on_transfer(StreamRef, const View&, char, std::span<const std::byte>, std::uint64_t) override {}
  void on_copy(StreamRef, const View&, const View&, std::uint64_t) override {}
  void on_wait_submission(std::uint64_t) override {}
  void on_wait_stream(StreamRef) override {}
  void on_wait_retirement() override {}
  void on_launch_refused(const RefusedLaunch& what, ErrorCode code) override {
    Refusal r;
    r.code = code;
    r.model = what.model;
    r.kernel = what.kernel;
    for (const RefusedLaunch::ViewArg& v : what.views)
      r.views.push_back(std::string(v.param) + (v.view == nullptr ? "!" : ""));
    for (const RefusedLaunch::ScalarArg& s : what.scalars) r.scalars.emplace_back(s.param, s.value);
    r.args_fit = what.args_fit;
    r.shared_bytes = what.shared_bytes;
    const std::lock_guard lock(mu_);
    refused.push_back(std::move(r));
  }

  std::mutex mu_;
  int launches = 0, failed = 0;
  std::vector<Refusal> refused;
};

class LaunchRefused : public ::testing::Test {
 protected:
  void SetUp() override { previous_ = install_recorder(&rec_); }
  void TearDown() override {
    install_recorder(previous_);
    EXPECT_TRUE(ctx_.wait_for_retirement(std::chrono::seconds(30)));
  }
  // The error kernels::launch threw.
  template <class F>
  static ErrorCode code_of(F&& launch) {
    try {
      launch();
    } catch (const Error& e) {
      return e.code();
    }
    ADD_FAILURE() << "the launch was accepted";
    return ErrorCode::driver;
  }

  RefusalRecorder rec_;
  Recorder* previous_ = nullptr;
  const Platform p_ = Platform::sim();
  const Context ctx_ = Context::create(p_.device(0));
  const Stream s_ = Stream::create(ctx_);
  const k::KernelEntry* scale_ = k::find(k::Model::simt, "scale", DType::f32);
};

TEST_F(LaunchRefused, AWrongArgumentCountReachesTheRecorderWithItsCode) {
  ASSERT_NE(scale_, nullptr);
  const View x = allocate(s_, DType::f32, 64);
  const k::Arg args[] = {k::Arg::of(x)};  // scale takes x and a
  const ErrorCode code = code_of([&] { (void)k::launch(s_, *scale_, args); });
  ASSERT_EQ(rec_.refused.size(), 1U);
  const Refusal& r = rec_.refused[0];
  EXPECT_EQ(r.code, code);
  EXPECT_EQ(r.code, ErrorCode::out_of_range);
  EXPECT_EQ(r.model, "simt");
  EXPECT_EQ(r.kernel, "scale");
  EXPECT_EQ(r.views, std::vector<std::string>{"x"});
  EXPECT_FALSE(r.args_fit) << "a scenario cannot write a call with an argument missing";
  EXPECT_EQ(rec_.launches, 0);
  EXPECT_EQ(rec_.failed, 0) << "the runtime never saw it";
}

TEST_F(LaunchRefused, AScalarWhereAViewGoesReachesTheRecorderAsInvalidHandle) {
  ASSERT_NE(scale_, nullptr);
  const k::Arg args[] = {k::Arg::value(1.0), k::Arg::value(2.0)};
  EXPECT_EQ(code_of([&] { (void)k::launch(s_, *scale_, args); }), ErrorCode::invalid_handle);
  ASSERT_EQ(rec_.refused.size(), 1U);
  const Refusal& r = rec_.refused[0];
  EXPECT_EQ(r.code, ErrorCode::invalid_handle);
  EXPECT_EQ(r.views, std::vector<std::string>{"x!"});
  EXPECT_EQ(r.scalars, (std::vector<std::pair<std::string, double>>{{"a", 2.0}}));
  EXPECT_FALSE(r.args_fit);
}

TEST_F(LaunchRefused, ACatalogRuleTheArgumentsBreakReachesTheRecorderWithWhatWasAsked) {
  const k::KernelEntry* copy = k::find(k::Model::simt, "copy", DType::f32);
  ASSERT_NE(copy, nullptr);
  const View src = allocate(s_, DType::f32, 8), dst = allocate(s_, DType::f32, 16);
  const k::Arg args[] = {k::Arg::of(src), k::Arg::of(dst)};
  EXPECT_EQ(code_of([&] {
              (void)k::launch(s_, *copy, args, std::nullopt, driver::Dim3{64, 1, 1});
            }),
            ErrorCode::out_of_range);  // check_args: equal lengths
  ASSERT_EQ(rec_.refused.size(), 1U);
  EXPECT_EQ(rec_.refused[0].views, (std::vector<std::string>{"src", "dst"}));
  EXPECT_TRUE(rec_.refused[0].args_fit) << "a scenario can write this call: the replay is refused the same";
}

TEST_F(LaunchRefused, SharedMemoryInTheConfigReachesTheRecorder) {
  ASSERT_NE(scale_, nullptr);
  const View x = allocate(s_, DType::f32, 64);
  const k::Arg args[] = {k::Arg::of(x), k::Arg::value(2.0)};
  LaunchConfig config{{1, 1, 1}, {64, 1, 1}, 128};
  EXPECT_EQ(code_of([&] { (void)k::launch(s_, *scale_, args, config); }), ErrorCode::out_of_range);
  ASSERT_EQ(rec_.refused.size(), 1U);
  EXPECT_EQ(rec_.refused[0].shared_bytes, 128U);
}

TEST_F(LaunchRefused, ALaunchThatPassesDoesNotReachOnLaunchRefused) {
  ASSERT_NE(scale_, nullptr);
  const View x = allocate(s_, DType::f32, 64);
  const k::Arg args[] = {k::Arg::of(x), k::Arg::value(2.0)};
  (void)k::launch(s_, *scale_, args);  // checked, then remembered
  (void)k::launch(s_, *scale_, args);  // a repeat: the remembered bytes
  EXPECT_EQ(rec_.launches, 2);
  EXPECT_TRUE(rec_.refused.empty());
}

TEST_F(LaunchRefused, ALaunchTheRuntimeRefusesReachesOnLaunchFailedOnly) {
  ASSERT_NE(scale_, nullptr);
  const View x = allocate(s_, DType::f32, 64);
  const k::Arg args[] = {k::Arg::of(x), k::Arg::value(2.0)};
  testing::sim_control(p_, SimControl::launch_fail, nullptr, 1);  // the next launch fails in the driver
  EXPECT_THROW((void)k::launch(s_, *scale_, args), Error);
  EXPECT_EQ(rec_.failed, 1);
  EXPECT_TRUE(rec_.refused.empty()) << "kernels::launch must not report what tandem::launch refused";
}

}  // namespace
}  // namespace tandem
