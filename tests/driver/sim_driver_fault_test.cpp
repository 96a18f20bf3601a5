// SPDX-License-Identifier: Apache-2.0
// Unit tests of the simulated device's injected driver errors
// (sim_backend.hpp: fail_nth_launch, fail_nth_copy,
// fail_nth_alloc_with_driver_error): the n-th accepted call of its kind from
// when it was armed fails with Status::unknown (a driver error, not
// out_of_memory), marked Result::injected, and enqueues nothing; one-shot; 0
// disarms. The fixture is in sim_test_support.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "driver/sim_test_support.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {
namespace {

using namespace sim_test;

using SimDriverFaults = SimBackendTest;

bool names(const SimBackend& sim, const Result& r, const std::string& what) {
  return sim.describe(r).find(what) != std::string::npos;
}

TEST_F(SimDriverFaults, FailNthLaunchFailsExactlyThatLaunchWithAnInjectedDriverErrorOnce) {
  const StreamHandle s = stream();
  sim_->fail_nth_launch(2);
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  const Result second = launch(kCount, s, {&arg_});
  EXPECT_EQ(second.status, Status::unknown);
  EXPECT_TRUE(second.injected);
  EXPECT_TRUE(names(*sim_, second, "fail_nth_launch")) << sim_->describe(second);
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));  // one-shot
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  sync(s);
  EXPECT_EQ(probe_.runs.load(), 3);  // the failed launch enqueued nothing
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimDriverFaults, FailNthLaunchCountsOnlyAcceptedLaunchesAndZeroDisarms) {
  const StreamHandle s = stream();
  sim_->fail_nth_launch(1);
  EXPECT_EQ(launch(kNoHost, s, {&arg_}).status, Status::not_supported);  // refused: not counted
  EXPECT_EQ(launch(kCount, s, {&arg_}).status, Status::unknown);
  sim_->fail_nth_launch(1);
  sim_->fail_nth_launch(0);  // disarms
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  sync(s);
  EXPECT_EQ(probe_.runs.load(), 1);
}

TEST_F(SimDriverFaults, FailNthCopyCountsMemcpyUploadAndDownloadButNotMemsetOrLaunches) {
  const StreamHandle s = stream();
  const DevicePtr a = alloc(64);
  const DevicePtr b = alloc(64);
  const std::vector<std::int32_t> ones(16, 1);
  std::vector<std::int32_t> back(16, 0);
  sim_->fail_nth_copy(4);
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, a, 0, 64, s)));             // not a copy
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));                         // not a copy
  ASSERT_TRUE(Ok(*sim_, sim_->upload_async(ctx_, a, ones.data(), 64, s)));    // 1
  ASSERT_TRUE(Ok(*sim_, sim_->memcpy_async(ctx_, b, a, 64, s)));              // 2
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, back.data(), b, 64, s)));  // 3
  const Result fourth = sim_->memcpy_async(ctx_, a, b, 64, s);                // 4
  EXPECT_EQ(fourth.status, Status::unknown);
  EXPECT_TRUE(fourth.injected);
  EXPECT_TRUE(names(*sim_, fourth, "fail_nth_copy")) << sim_->describe(fourth);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, back.data(), b, 64, s)));  // one-shot
  sync(s);
  EXPECT_EQ(back, ones);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimDriverFaults, FailNthCopyFailsAnUploadOrADownloadToo) {
  const StreamHandle s = stream();
  const DevicePtr a = alloc(64);
  std::vector<std::int32_t> host(16, 7);
  sim_->fail_nth_copy(1);
  EXPECT_EQ(sim_->upload_async(ctx_, a, host.data(), 64, s).status, Status::unknown);
  sim_->fail_nth_copy(1);
  EXPECT_EQ(sim_->download_async(ctx_, host.data(), a, 64, s).status, Status::unknown);
  sim_->fail_nth_copy(1);
  sim_->fail_nth_copy(0);  // disarms
  EXPECT_TRUE(Ok(*sim_, sim_->upload_async(ctx_, a, host.data(), 64, s)));
  sync(s);
}

TEST_F(SimDriverFaults, FailNthAllocWithDriverErrorFailsWithADriverErrorNotOutOfMemory) {
  PoolHandle pool;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, pool)));
  const StreamHandle s = stream();
  DevicePtr p = 0;
  sim_->fail_nth_alloc_with_driver_error(2);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));
  const Result second = sim_->mem_alloc_async(ctx_, pool, 64, s, p);
  EXPECT_EQ(second.status, Status::unknown);
  EXPECT_TRUE(second.injected);
  EXPECT_TRUE(names(*sim_, second, "fail_nth_alloc_with_driver_error")) << sim_->describe(second);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));  // one-shot
  EXPECT_EQ(sim_->live_allocations(), 2U);
  sim_->fail_nth_alloc_with_driver_error(1);
  sim_->fail_nth_alloc_with_driver_error(0);  // disarms
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));
}

TEST_F(SimDriverFaults, FailNthAllocAndItsDriverErrorFormCountTheSameCallsAndOutOfMemoryWins) {
  DevicePtr p = 0;
  sim_->fail_nth_alloc(2);
  sim_->fail_nth_alloc_with_driver_error(2);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));
  EXPECT_EQ(sim_->mem_alloc(ctx_, 64, p).status, Status::out_of_memory);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));  // both spent on the same call
  sim_->fail_nth_alloc(3);
  sim_->fail_nth_alloc_with_driver_error(1);
  EXPECT_EQ(sim_->mem_alloc(ctx_, 64, p).status, Status::unknown);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));
  EXPECT_EQ(sim_->mem_alloc(ctx_, 64, p).status, Status::out_of_memory);  // still the 3rd
}

}  // namespace
}  // namespace tandem::driver
