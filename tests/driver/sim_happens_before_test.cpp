// SPDX-License-Identifier: Apache-2.0
// The simulated device's race check is by happens-before, not by timing
// (sim_checker.hpp, sim_clock.hpp): two conflicting accesses that nothing
// orders are reported even when they never ran at the same time, and the
// orders a runtime legitimately uses (stream order, event waits, host
// synchronization, stream-ordered frees) are never reported. Each "is a race"
// test runs the second access only after the first one has provably left the
// device (a later kernel on its stream has started), so a check that compares
// only operations running at the same moment misses it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "driver/sim_test_support.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {
namespace {

using namespace sim_test;

class SimHappensBeforeTest : public SimBackendTest {
 protected:
  // Launches add(+1) over the whole of `p` (4 ints) on `s`, declared `mode`.
  void add_on(StreamHandle s, DevicePtr p, AccessMode mode) {
    buf_ = DeviceBuffer{p, 4};
    ASSERT_TRUE(Ok(*sim_, launch(kAdd, s, {&buf_, &one_}, {{p, 16, mode}})));
  }
  // Queues a gate kernel behind everything on `s` and waits until it runs:
  // all earlier work of `s` has completed, and the host has observed nothing.
  void drain_unobserved(StreamHandle s) {
    ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
    ASSERT_TRUE(probe_.gate.wait_arrivals(++gated_));
  }
  void finish(std::initializer_list<StreamHandle> streams) {
    probe_.gate.open();
    for (StreamHandle s : streams) {
      sync(s);
    }
  }

  DeviceBuffer buf_;
  std::int32_t one_ = 1;
  int gated_ = 0;
};

TEST_F(SimHappensBeforeTest, UnorderedWritesOnTwoStreamsAreARaceEvenWhenTheyNeverOverlapInTime) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  drain_unobserved(s1);
  add_on(s2, p, AccessMode::read_write);
  sync(s2);
  finish({s1});

  const auto races = violations_of(Violation::Kind::unordered_conflict);
  ASSERT_EQ(races.size(), 1U);
  EXPECT_EQ(sim_->violation_count(), 1U);
  const std::string& d = races[0].detail;
  EXPECT_NE(d.find("launch 'add' on stream #2"), std::string::npos) << d;
  EXPECT_NE(d.find("launch 'add' on stream #1"), std::string::npos) << d;
  EXPECT_NE(d.find("unordered"), std::string::npos) << d;
  // Not overlapping in time, so it was performed: both adds landed.
  EXPECT_EQ(download_ints(s1, p, 4), (std::vector<std::int32_t>{2, 2, 2, 2}));
}

TEST_F(SimHappensBeforeTest, AReadAfterAnUnorderedWriteOnAnotherStreamIsARace) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  drain_unobserved(s1);
  std::vector<std::int32_t> out(4);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, out.data(), p + 4, 4, s2)));
  sync(s2);
  finish({s1});
  const auto races = violations_of(Violation::Kind::unordered_conflict);
  ASSERT_EQ(races.size(), 1U);
  EXPECT_NE(races[0].detail.find("download on stream #2 reads"), std::string::npos) << races[0].detail;
}

TEST_F(SimHappensBeforeTest, ReadsOnTwoStreamsWithoutOrderAreNotARace) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  std::vector<std::int32_t> a(4);
  std::vector<std::int32_t> b(4);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, a.data(), p, 16, s1)));
  drain_unobserved(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, b.data(), p, 16, s2)));
  sync(s2);
  finish({s1});
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, DisjointBytesOfOneAllocationAreNotARace) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0, 0, 0, 0, 0});
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, p, 1, 16, s1)));
  drain_unobserved(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, p + 16, 2, 16, s2)));
  sync(s2);
  finish({s1});
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, AnEventWaitOrdersTheWaitingStreamsLaterAccesses) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  drain_unobserved(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s2, e)));
  add_on(s2, p, AccessMode::read_write);
  sync(s2);
  finish({s1});
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, AnEventRecordedBeforeTheAccessDoesNotOrderIt) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  add_on(s1, p, AccessMode::read_write);
  drain_unobserved(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s2, e)));
  add_on(s2, p, AccessMode::read_write);
  sync(s2);
  finish({s1});
  EXPECT_EQ(violations_of(Violation::Kind::unordered_conflict).size(), 1U);
}

TEST_F(SimHappensBeforeTest, HostSynchronizationOrdersEveryLaterSubmission) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  sync(s1);
  add_on(s2, p, AccessMode::read_write);
  sync(s2);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, AnEventSynchronizeOrdersLaterSubmissions) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));
  add_on(s2, p, AccessMode::read_write);
  sync(s2);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, AnEventQueryThatFindsItCompleteOrdersLaterSubmissions) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  Status status = Status::not_ready;
  while (status == Status::not_ready) {  // the query is the host's observation
    status = sim_->event_query(ctx_, e).status;
  }
  ASSERT_EQ(status, Status::ok);
  add_on(s2, p, AccessMode::read_write);
  sync(s2);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, AnIdleStreamFoundByAQueryOrdersLaterSubmissions) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  Status status = Status::not_ready;
  while (status == Status::not_ready) {  // the query is the host's observation
    status = sim_->stream_query(ctx_, s1).status;
  }
  ASSERT_EQ(status, Status::ok);
  add_on(s2, p, AccessMode::read_write);
  sync(s2);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, AStreamOrderedFreeNotOrderedAfterAnotherStreamsUseIsUseAfterFree) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  drain_unobserved(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s2)));
  sync(s2);
  finish({s1});
  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 1U);
  EXPECT_EQ(sim_->violation_count(), 1U);
  EXPECT_NE(uaf[0].detail.find("mem_free_async on stream #2 frees"), std::string::npos) << uaf[0].detail;
  EXPECT_NE(uaf[0].detail.find("launch 'add' on stream #1"), std::string::npos) << uaf[0].detail;
}

TEST_F(SimHappensBeforeTest, AFreeOrderedByAnEventWaitOrOnTheSameStreamIsNotReported) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  const DevicePtr q = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  add_on(s1, q, AccessMode::read_write);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, q, s1)));  // stream order
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s2, e)));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s2)));  // event wait
  sync(s2);
  sync(s1);
  EXPECT_EQ(sim_->violation_count(), 0U);
  EXPECT_EQ(sim_->live_allocations(), 0U);
}

TEST_F(SimHappensBeforeTest, AHostFreeAfterTheHostSawTheUseCompleteIsNotReported) {
  const StreamHandle s1 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, p)));
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, AHostFreeOfMemoryAStreamUsedUnobservedIsUseAfterFree) {
  const StreamHandle s1 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  drain_unobserved(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, p)));
  finish({s1});
  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 1U);
  EXPECT_NE(uaf[0].detail.find("mem_free on the host frees"), std::string::npos) << uaf[0].detail;
}

TEST_F(SimHappensBeforeTest, WorkSubmittedAfterAHostSyncIsOrderedAfterEverythingTheHostSaw) {
  // s1 -> host (sync) -> s2 -> event -> s3: transitively ordered.
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const StreamHandle s3 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  add_on(s1, p, AccessMode::read_write);
  sync(s1);
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s2, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s2)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s3, e)));
  probe_.gate.open();
  add_on(s3, p, AccessMode::read_write);
  sync(s3);
  sync(s2);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, TheRaceCheckForgetsABlockWhenItIsFreed) {
  const StreamHandle s1 = stream();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0, 0, 0, 0, 0});
  const DevicePtr q = upload_ints(s1, {0, 0, 0, 0});
  // Three different histories in p: written by add, by the upload only, read.
  add_on(s1, p, AccessMode::read_write);
  std::vector<std::int32_t> out(2);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, out.data(), p + 24, 8, s1)));
  sync(s1);
  EXPECT_EQ(sim_->race_check_ranges(), 4U);  // p: 3 ranges, q: 1
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s1)));
  sync(s1);
  EXPECT_EQ(sim_->race_check_ranges(), 1U);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, q)));
  EXPECT_EQ(sim_->race_check_ranges(), 0U);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimHappensBeforeTest, RepeatedOrderedAccessesKeepOneRangePerHistory) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  for (int i = 0; i < 50; ++i) {
    const StreamHandle s = i % 2 == 0 ? s1 : s2;
    const StreamHandle other = i % 2 == 0 ? s2 : s1;
    add_on(s, p, AccessMode::read_write);
    ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s)));
    ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, other, e)));
  }
  sync(s1);
  sync(s2);
  EXPECT_EQ(sim_->race_check_ranges(), 1U);
  EXPECT_EQ(sim_->violation_count(), 0U);
  EXPECT_EQ(download_ints(s1, p, 4), (std::vector<std::int32_t>{50, 50, 50, 50}));
}

}  // namespace
}  // namespace tandem::driver
