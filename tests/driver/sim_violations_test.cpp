// SPDX-License-Identifier: Apache-2.0
// Unit tests of the simulated device (SimBackend): the race and use-after-free checks: what the simulated
// device reports as a violation. Each test is named after the rule of sim_backend.hpp / backend.hpp it
// checks; the test kernels and the fixture are in sim_test_support.hpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/sim_test_support.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {
namespace {

using namespace std::chrono_literals;
using namespace sim_test;

// --- violations ---------------------------------------------------------------------------

TEST_F(SimBackendTest, UnorderedWriteAcrossStreamsIsAConflict) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  DeviceBuffer buf{p, 4};
  std::int32_t seven = 7;
  std::int32_t one = 1;

  ASSERT_TRUE(Ok(*sim_, launch(kGateFill, s1, {&arg_, &buf, &seven}, {{p, 16, AccessMode::write}})));
  ASSERT_TRUE(probe_.gate.wait_arrivals(1));  // s1's kernel is running
  ASSERT_TRUE(Ok(*sim_, launch(kAdd, s2, {&buf, &one}, {{p + 8, 8, AccessMode::read}})));
  sync(s2);
  probe_.gate.open();
  sync(s1);

  const auto conflicts = violations_of(Violation::Kind::unordered_conflict);
  ASSERT_EQ(conflicts.size(), 1U);
  EXPECT_EQ(sim_->violation_count(), 1U);
  const std::string& d = conflicts[0].detail;
  EXPECT_NE(d.find("launch 'add'"), std::string::npos) << d;
  EXPECT_NE(d.find("launch 'gate_fill'"), std::string::npos) << d;
  EXPECT_NE(d.find("stream #1"), std::string::npos) << d;
  EXPECT_NE(d.find("stream #2"), std::string::npos) << d;
  EXPECT_NE(d.find("reads"), std::string::npos) << d;
  EXPECT_NE(d.find("writes"), std::string::npos) << d;
  EXPECT_STREQ(violation_kind_name(conflicts[0].kind), "unordered_conflict");
  // The operation that started second was skipped rather than raced.
  EXPECT_NE(d.find("launch 'add' was not performed"), std::string::npos) << d;
  EXPECT_EQ(download_ints(s1, p, 4), (std::vector<std::int32_t>{7, 7, 7, 7}));
}

TEST_F(SimBackendTest, OnlyOverlappingCrossStreamWritesConflict) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = alloc(256);
  DeviceBuffer buf{p, 64};

  // s1 holds a read of the first half and a write of the third quarter.
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s1, {&holder_arg_},
                               {{p, 128, AccessMode::read}, {p + 128, 64, AccessMode::write}})));
  ASSERT_TRUE(holder_.gate.wait_arrivals(1));

  // From s2: another read of the first half (reads share), a write of the
  // last quarter (disjoint), zero-byte writes inside the held ranges (empty).
  ASSERT_TRUE(Ok(*sim_, launch(kTouch, s2, {&arg_, &buf},
                               {{p, 128, AccessMode::read},
                                {p + 192, 64, AccessMode::write},
                                {p + 16, 0, AccessMode::write},
                                {p + 130, 0, AccessMode::write}})));
  sync(s2);
  EXPECT_EQ(probe_.runs.load(), 1);
  EXPECT_EQ(sim_->violation_count(), 0U);

  holder_.gate.open();
  sync(s1);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimBackendTest, StreamDelayMakesAMissingOrderVisible) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle started = event();
  const DevicePtr p = alloc(64);
  std::vector<std::uint8_t> host(64, 1);
  sim_->set_stream_delay(s1, 300ms);
  sim_->set_stream_delay(s2, 300ms);

  // s2 starts right after s1 reaches its upload, and nothing orders the
  // download after the upload: both stay active for 300 ms, so they overlap.
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, started, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->upload_async(ctx_, p, host.data(), 64, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s2, started)));
  std::vector<std::uint8_t> out(64);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, out.data(), p, 64, s2)));
  sync(s1);
  sync(s2);

  const auto conflicts = violations_of(Violation::Kind::unordered_conflict);
  ASSERT_EQ(conflicts.size(), 1U);
  EXPECT_NE(conflicts[0].detail.find("upload"), std::string::npos) << conflicts[0].detail;
  EXPECT_NE(conflicts[0].detail.find("download"), std::string::npos) << conflicts[0].detail;
}

TEST_F(SimBackendTest, LaunchOnFreedMemoryIsUseAfterFreeAndDoesNotRun) {
  const StreamHandle s = stream();
  const DevicePtr p = alloc(64);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, p)));
  DeviceBuffer buf{p, 16};

  // Through a declared access, and through the pointer parameter alone.
  ASSERT_TRUE(Ok(*sim_, launch(kTouch, s, {&arg_, &buf}, {{p, 64, AccessMode::read}})));
  ASSERT_TRUE(Ok(*sim_, launch(kTouch, s, {&arg_, &buf})));
  sync(s);

  EXPECT_EQ(probe_.runs.load(), 0);
  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 2U);
  EXPECT_EQ(sim_->violation_count(), 2U);
  for (const Violation& v : uaf) {
    EXPECT_NE(v.detail.find("launch 'touch' on stream #1"), std::string::npos) << v.detail;
    EXPECT_NE(v.detail.find("not inside a live allocation"), std::string::npos) << v.detail;
  }
  // A null pointer-led parameter is the kernel's business, not a violation.
  DeviceBuffer null_buf{0, 0};
  ASSERT_TRUE(Ok(*sim_, launch(kTouch, s, {&arg_, &null_buf})));
  sync(s);
  EXPECT_EQ(probe_.runs.load(), 1);
  EXPECT_EQ(sim_->violation_count(), 2U);
}

TEST_F(SimBackendTest, FreeWhileAnotherStreamUsesTheBlockIsUseAfterFree) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = alloc(64);
  DeviceBuffer buf{p, 16};
  std::int32_t seven = 7;
  ASSERT_TRUE(Ok(*sim_, launch(kGateFill, s1, {&arg_, &buf, &seven}, {{p, 64, AccessMode::write}})));
  ASSERT_TRUE(probe_.gate.wait_arrivals(1));

  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s2)));
  sync(s2);
  EXPECT_EQ(sim_->live_allocations(), 0U);
  probe_.gate.open();  // the kernel still writes its (still pinned) bytes safely
  sync(s1);

  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 1U);
  EXPECT_EQ(sim_->violation_count(), 1U);  // not also reported as a conflict
  EXPECT_NE(uaf[0].detail.find("mem_free_async on stream #2 frees"), std::string::npos) << uaf[0].detail;
  EXPECT_NE(uaf[0].detail.find("launch 'gate_fill' on stream #1"), std::string::npos) << uaf[0].detail;
}

TEST_F(SimBackendTest, AccessPastTheEndOfAnAllocationIsReported) {
  const StreamHandle s = stream();
  const DevicePtr p = alloc(64);
  std::vector<std::uint8_t> host(128, 3);
  ASSERT_TRUE(Ok(*sim_, sim_->upload_async(ctx_, p, host.data(), 128, s)));
  sync(s);
  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 1U);
  EXPECT_NE(uaf[0].detail.find("past the end"), std::string::npos) << uaf[0].detail;
}

}  // namespace
}  // namespace tandem::driver
