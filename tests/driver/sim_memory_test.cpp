// SPDX-License-Identifier: Apache-2.0
// Unit tests of the simulated device (SimBackend): device memory: fresh contents, transfers, addresses,
// capacity, stream-ordered frees and reuse. Each test is named after the rule of sim_backend.hpp /
// backend.hpp it checks; the test kernels and the fixture are in sim_test_support.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "driver/sim_test_support.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {
namespace {

using namespace std::chrono_literals;
using namespace sim_test;

// --- memory ---------------------------------------------------------------------------------

TEST_F(SimBackendTest, FreshMemoryIsFilledWithANonZeroPattern) {
  const StreamHandle s = stream();
  const DevicePtr p = alloc(64);
  std::vector<std::uint8_t> out(64, 0);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, out.data(), p, 64, s)));
  sync(s);
  EXPECT_NE(out[0], 0);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [&](std::uint8_t b) { return b == out[0]; }));
}

TEST_F(SimBackendTest, TransfersMoveBytesInStreamOrder) {
  const StreamHandle s = stream();
  const DevicePtr a = alloc(16);
  const DevicePtr b = alloc(16);
  const std::vector<std::uint8_t> in{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  ASSERT_TRUE(Ok(*sim_, sim_->upload_async(ctx_, a, in.data(), 16, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->memcpy_async(ctx_, b, a, 16, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, b + 8, 0xEE, 8, s)));
  std::vector<std::uint8_t> out(16);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, out.data(), b, 16, s)));
  sync(s);
  const std::vector<std::uint8_t> expected{1,    2,    3,    4,    5,    6,    7,    8,
                                           0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};
  EXPECT_EQ(out, expected);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimBackendTest, AddressesAreAlignedAndNeverReused) {
  std::set<DevicePtr> seen;
  for (int i = 0; i < 200; ++i) {
    const DevicePtr p = alloc(static_cast<std::size_t>(i % 7) * 100);  // includes 0 bytes
    ASSERT_NE(p, 0U);
    EXPECT_EQ(p % 256, 0U);
    EXPECT_TRUE(seen.insert(p).second) << "address reused: " << p;
    ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, p)));
  }
  EXPECT_EQ(sim_->live_allocations(), 0U);
  EXPECT_EQ(sim_->live_bytes(), 0U);
}

TEST_F(SimBackendTest, CapacityIsEnforcedAndMemInfoAccountsLiveBytes) {
  SimConfig cfg;
  cfg.memory_bytes = 4096;
  make_backend(cfg);
  const StreamHandle s = stream();
  PoolHandle pool;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, pool)));

  DevicePtr p = 0;
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc_async(ctx_, pool, 1024, s, p)));
  std::size_t free_bytes = 0;
  std::size_t total = 0;
  ASSERT_TRUE(Ok(*sim_, sim_->mem_info(ctx_, free_bytes, total)));
  EXPECT_EQ(free_bytes, 3072U);
  EXPECT_EQ(total, 4096U);
  EXPECT_EQ(sim_->live_bytes(), 1024U);

  DevicePtr too_big = 0;
  const Result r = sim_->mem_alloc_async(ctx_, pool, 4096, s, too_big);
  EXPECT_EQ(r.status, Status::out_of_memory);
  EXPECT_EQ(sim_->describe(r),
            "sim: mem_alloc_async: out_of_memory (asked 4096 bytes, 3072 free on device 0)");

  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s)));
  sync(s);
  ASSERT_TRUE(Ok(*sim_, sim_->pool_trim(ctx_, pool, 0)));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_info(ctx_, free_bytes, total)));
  EXPECT_EQ(free_bytes, 4096U);
  ASSERT_TRUE(Ok(*sim_, sim_->pool_destroy(ctx_, pool)));
}

TEST_F(SimBackendTest, FreeAsyncRunsInStreamOrder) {
  const StreamHandle s = stream();
  const DevicePtr p = alloc(512);
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s)));
  // Still allocated while the kernel ahead of the free is running.
  EXPECT_EQ(sim_->live_allocations(), 1U);
  EXPECT_EQ(sim_->live_bytes(), 512U);
  // A second free of the same block is refused at once.
  const Result again = sim_->mem_free_async(ctx_, p, s);
  EXPECT_EQ(again.status, Status::invalid_value);
  EXPECT_NE(sim_->describe(again).find("already queued"), std::string::npos);

  probe_.gate.open();
  sync(s);
  EXPECT_EQ(sim_->live_allocations(), 0U);
  EXPECT_EQ(sim_->mem_free(ctx_, p).status, Status::invalid_value);  // gone now
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimBackendTest, FailNthAllocFailsExactlyThatCall) {
  const StreamHandle s = stream();
  PoolHandle pool;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, pool)));
  sim_->fail_nth_alloc(3);
  DevicePtr p = 0;
  EXPECT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));
  EXPECT_TRUE(Ok(*sim_, sim_->mem_alloc_async(ctx_, pool, 64, s, p)));
  const Result third = sim_->mem_alloc_async(ctx_, pool, 64, s, p);
  EXPECT_EQ(third.status, Status::out_of_memory);
  EXPECT_NE(sim_->describe(third).find("fail_nth_alloc"), std::string::npos) << sim_->describe(third);
  EXPECT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));
  EXPECT_EQ(sim_->live_allocations(), 3U);

  sim_->fail_nth_alloc(1);
  sim_->fail_nth_alloc(0);  // disarms
  EXPECT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, 64, p)));
}

TEST_F(SimBackendTest, ReuseAsyncPassesALivePoolBlockOfExactlyItsSizeOnAndCountsAsAnAllocation) {
  const StreamHandle s = stream();
  PoolHandle pool;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, pool)));
  DevicePtr p = 0;
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc_async(ctx_, pool, 1024, s, p)));
  std::vector<std::uint8_t> zeros(1024, 0);
  ASSERT_TRUE(Ok(*sim_, sim_->upload_async(ctx_, p, zeros.data(), 1024, s)));
  // The block passes on whole: nothing allocated, nothing freed; in stream
  // order its bytes become fresh ones, as a new allocation's are.
  ASSERT_TRUE(Ok(*sim_, sim_->mem_reuse_async(ctx_, pool, p, 1024, s)));
  EXPECT_EQ(sim_->live_allocations(), 1U);
  EXPECT_EQ(sim_->live_bytes(), 1024U);
  std::vector<std::uint8_t> seen(1024, 0);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, seen.data(), p, 1024, s)));
  sync(s);
  EXPECT_NE(seen[0], 0);  // the fresh pattern, not the zeros uploaded before
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [&](std::uint8_t b) { return b == seen[0]; }));

  const Result other_size = sim_->mem_reuse_async(ctx_, pool, p, 512, s);
  EXPECT_EQ(other_size.status, Status::invalid_value);
  EXPECT_NE(sim_->describe(other_size).find("found a block of 1024 bytes"), std::string::npos)
      << sim_->describe(other_size);
  const DevicePtr unpooled = alloc(1024);
  EXPECT_EQ(sim_->mem_reuse_async(ctx_, pool, unpooled, 1024, s).status, Status::invalid_value);

  // An injected allocation failure fires on a reuse as on an allocation.
  sim_->fail_nth_alloc(1);
  const Result injected = sim_->mem_reuse_async(ctx_, pool, p, 1024, s);
  EXPECT_EQ(injected.status, Status::out_of_memory);
  EXPECT_TRUE(injected.injected);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_reuse_async(ctx_, pool, p, 1024, s)));  // fired once

  // Held behind a running kernel, so that the free stays queued.
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s)));
  const Result freed = sim_->mem_reuse_async(ctx_, pool, p, 1024, s);
  EXPECT_EQ(freed.status, Status::invalid_value);
  EXPECT_NE(sim_->describe(freed).find("free is already queued"), std::string::npos) << sim_->describe(freed);
  probe_.gate.open();
  sync(s);
  const Result gone = sim_->mem_reuse_async(ctx_, pool, p, 1024, s);
  EXPECT_EQ(gone.status, Status::invalid_value);
  EXPECT_NE(sim_->describe(gone).find("no live allocation"), std::string::npos) << sim_->describe(gone);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, unpooled)));
  ASSERT_TRUE(Ok(*sim_, sim_->pool_destroy(ctx_, pool)));
}

// What the sim still catches when a runtime reuses a block too early: the
// reuse is a write of the whole block in its stream's order, so the old
// owner's work on another stream must be ordered before it.
TEST_F(SimBackendTest, AReuseNotOrderedAfterTheOldOwnersWorkOnAnotherStreamIsAnUnorderedConflict) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  PoolHandle pool;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, pool)));
  DevicePtr p = 0;
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc_async(ctx_, pool, 64, s1, p)));
  DeviceBuffer buf{p, 16};
  std::int32_t seven = 7;
  // The old owner reads only the first 16 bytes; the reuse covers them all.
  ASSERT_TRUE(Ok(*sim_, launch(kGateFill, s1, {&arg_, &buf, &seven}, {{p, 16, AccessMode::read}})));
  ASSERT_TRUE(probe_.gate.wait_arrivals(1));  // the old owner's kernel runs on s1

  ASSERT_TRUE(Ok(*sim_, sim_->mem_reuse_async(ctx_, pool, p, 64, s2)));  // nothing orders s2 after it
  sync(s2);
  probe_.gate.open();
  sync(s1);

  const auto conflicts = violations_of(Violation::Kind::unordered_conflict);
  ASSERT_EQ(conflicts.size(), 1U) << sim_->violation_count();
  EXPECT_NE(conflicts[0].detail.find("mem_reuse_async"), std::string::npos) << conflicts[0].detail;
  EXPECT_NE(conflicts[0].detail.find("launch 'gate_fill'"), std::string::npos) << conflicts[0].detail;
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s1)));
  sync(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->pool_destroy(ctx_, pool)));
}

TEST_F(SimBackendTest, ZeroByteAllocationsAreDistinctAndFreeable) {
  const DevicePtr a = alloc(0);
  const DevicePtr b = alloc(0);
  EXPECT_NE(a, 0U);
  EXPECT_NE(a, b);
  EXPECT_EQ(sim_->live_bytes(), 0U);
  EXPECT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, a)));
  EXPECT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, b)));
  EXPECT_EQ(sim_->mem_free(ctx_, b).status, Status::invalid_value);
}

}  // namespace
}  // namespace tandem::driver
