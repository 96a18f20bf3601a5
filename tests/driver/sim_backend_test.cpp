// SPDX-License-Identifier: Apache-2.0
// Unit tests of the simulated device (SimBackend): injected completion faults, graphs and kernel launches.
// Each test is named after the rule of sim_backend.hpp / backend.hpp it checks; the test kernels and the
// fixture are in sim_test_support.hpp.
#include "tandem/driver/sim_backend.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "driver/sim_test_support.hpp"

namespace tandem::driver {
namespace {

using namespace std::chrono_literals;
using namespace sim_test;

// --- injected completion faults ---------------------------------------------------------------

TEST_F(SimBackendTest, CompletionUnknownReportsOnlyAfterTheWorkRan) {
  const StreamHandle s = stream();
  const EventHandle e = event();
  sim_->arm_completion_unknown(s);
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s)));
  EXPECT_EQ(sim_->event_query(ctx_, e).status, Status::not_ready);

  probe_.gate.open();
  const Result r = sim_->event_synchronize(ctx_, e);
  EXPECT_EQ(r.status, Status::completion_unknown);
  EXPECT_NE(sim_->describe(r).find("arm_completion_unknown"), std::string::npos);
  EXPECT_EQ(probe_.runs.load(), 1);  // the work it covers did run
  EXPECT_EQ(sim_->event_query(ctx_, e).status, Status::completion_unknown);
  EXPECT_EQ(sim_->event_query(ctx_, e).status, Status::completion_unknown);  // stays faulted
}

TEST_F(SimBackendTest, CompletionUnknownIsPendingOnLaterEventsUntilObserved) {
  const StreamHandle s = stream();
  const StreamHandle other = stream();
  const EventHandle faulted = event();
  const EventHandle later = event();
  const EventHandle elsewhere = event();
  const EventHandle after = event();
  sim_->arm_completion_unknown(s);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, faulted, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, later, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, elsewhere, other)));
  sync(s);
  sync(other);

  // A runtime checking only its newest event still learns of the fault ...
  const Result newest = sim_->event_query(ctx_, later);
  EXPECT_EQ(newest.status, Status::completion_unknown);
  EXPECT_NE(sim_->describe(newest).find("earlier event"), std::string::npos);
  EXPECT_EQ(sim_->event_synchronize(ctx_, later).status, Status::completion_unknown);
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, elsewhere)));  // other streams unaffected
  // ... and walking oldest-first attributes it to the faulted event.
  EXPECT_EQ(sim_->event_query(ctx_, faulted).status, Status::completion_unknown);
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, later)));

  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, after, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, after)));
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, after)));
  EXPECT_EQ(sim_->event_query(ctx_, faulted).status, Status::completion_unknown);
}

TEST_F(SimBackendTest, ReRecordingAFaultedEventClearsTheFault) {
  const StreamHandle s = stream();
  const EventHandle e = event();
  sim_->arm_completion_unknown(s);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s)));
  EXPECT_EQ(sim_->event_synchronize(ctx_, e).status, Status::completion_unknown);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s)));
  EXPECT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, e)));
}

TEST_F(SimBackendTest, StreamWaitingOnAFaultedEventIsReleased) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  sim_->arm_completion_unknown(s1);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s2, e)));
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s2, {&arg_})));
  sync(s2);
  EXPECT_EQ(probe_.runs.load(), 1);
}

// --- graphs ----------------------------------------------------------------------------------

TEST_F(SimBackendTest, GraphReplayRunsTheCapturedWorkEachTime) {
  const StreamHandle s = stream();
  const StreamHandle replay = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s, {0, 0});
  DeviceBuffer buf{p, 2};
  std::int32_t delta = 1;

  ASSERT_TRUE(Ok(*sim_, sim_->capture_begin(ctx_, s)));
  ASSERT_TRUE(Ok(*sim_, launch(kAdd, s, {&buf, &delta}, {{p, 8, AccessMode::read_write}})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s)));
  GraphHandle g;
  ASSERT_TRUE(Ok(*sim_, sim_->capture_end(ctx_, s, g)));
  delta = 100;                                         // parameters were copied at capture time
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, e)));  // the captured record never ran
  EXPECT_EQ(download_ints(s, p, 2), (std::vector<std::int32_t>{0, 0}));  // nothing ran yet

  ASSERT_TRUE(Ok(*sim_, sim_->graph_launch(ctx_, g, replay)));
  ASSERT_TRUE(Ok(*sim_, sim_->graph_launch(ctx_, g, replay)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));  // recorded by the last replay
  EXPECT_EQ(download_ints(replay, p, 2), (std::vector<std::int32_t>{2, 2}));
  ASSERT_TRUE(Ok(*sim_, sim_->graph_destroy(ctx_, g)));
  EXPECT_EQ(sim_->graph_launch(ctx_, g, replay).status, Status::invalid_handle);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimBackendTest, GraphDestroyedWhileReplayingStillRuns) {
  const StreamHandle s = stream();
  ASSERT_TRUE(Ok(*sim_, sim_->capture_begin(ctx_, s)));
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  GraphHandle g;
  ASSERT_TRUE(Ok(*sim_, sim_->capture_end(ctx_, s, g)));
  ASSERT_TRUE(Ok(*sim_, sim_->graph_launch(ctx_, g, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->graph_destroy(ctx_, g)));
  probe_.gate.open();
  sync(s);
  EXPECT_EQ(probe_.runs.load(), 2);
}

TEST_F(SimBackendTest, CaptureForbidsStreamOrderedAllocationAndSynchronization) {
  const StreamHandle s = stream();
  PoolHandle pool;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, pool)));
  const DevicePtr p = alloc(64);
  GraphHandle g;
  const Result no_begin = sim_->capture_end(ctx_, s, g);
  EXPECT_EQ(no_begin.status, Status::invalid_value);
  EXPECT_NE(sim_->describe(no_begin).find("not capturing"), std::string::npos);

  ASSERT_TRUE(Ok(*sim_, sim_->capture_begin(ctx_, s)));
  DevicePtr q = 0;
  const Result alloc_result = sim_->mem_alloc_async(ctx_, pool, 64, s, q);
  EXPECT_EQ(alloc_result.status, Status::not_permitted);
  EXPECT_NE(sim_->describe(alloc_result).find("is capturing"), std::string::npos);
  EXPECT_EQ(sim_->mem_free_async(ctx_, p, s).status, Status::not_permitted);
  EXPECT_EQ(sim_->stream_synchronize(ctx_, s).status, Status::not_permitted);
  EXPECT_EQ(sim_->stream_query(ctx_, s).status, Status::not_permitted);
  EXPECT_EQ(sim_->capture_begin(ctx_, s).status, Status::not_permitted);
  ASSERT_TRUE(Ok(*sim_, sim_->capture_end(ctx_, s, g)));
  ASSERT_TRUE(Ok(*sim_, sim_->graph_destroy(ctx_, g)));

  // The refused free left the block live and freeable.
  EXPECT_EQ(sim_->live_allocations(), 1U);
  EXPECT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s)));
  sync(s);
  EXPECT_EQ(sim_->live_allocations(), 0U);
}

// --- kernels ---------------------------------------------------------------------------------

TEST_F(SimBackendTest, KernelParametersAreCopiedAtLaunch) {
  const StreamHandle s = stream();
  const DevicePtr p = upload_ints(s, {10});
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
  {
    DeviceBuffer buf{p, 1};
    std::int32_t delta = 5;
    ASSERT_TRUE(Ok(*sim_, launch(kAdd, s, {&buf, &delta})));
    buf = DeviceBuffer{};  // the caller's storage changes (and dies) right after
    delta = -1000;
  }
  probe_.gate.open();
  EXPECT_EQ(download_ints(s, p, 1), (std::vector<std::int32_t>{15}));
}

TEST_F(SimBackendTest, KernelWithoutHostReferenceIsNotSupported) {
  FunctionHandle f;
  const Result r = sim_->kernel_function(ctx_, kNoHost, f);
  EXPECT_EQ(r.status, Status::not_supported);
  EXPECT_NE(sim_->describe(r).find("device_only"), std::string::npos) << sim_->describe(r);
  FunctionHandle g;
  ASSERT_TRUE(Ok(*sim_, sim_->kernel_function(ctx_, kCount, g)));
  EXPECT_TRUE(g);
}

TEST_F(SimBackendTest, LaunchRejectsArgumentsThatCanNeverBeRight) {
  const StreamHandle s = stream();
  void* params[] = {&arg_};
  LaunchRequest req;
  req.context = ctx_;
  req.symbol = &kCount;
  req.stream = s;
  req.params = params;
  req.dims.block.x = 2048;
  const Result too_big = sim_->launch(req);
  EXPECT_EQ(too_big.status, Status::invalid_value);
  EXPECT_NE(sim_->describe(too_big).find("2048 threads"), std::string::npos) << sim_->describe(too_big);
  req.dims.block.x = 1;
  req.params = nullptr;
  EXPECT_EQ(sim_->launch(req).status, Status::invalid_value);
  req.params = params;
  req.stream = StreamHandle{};
  EXPECT_EQ(sim_->launch(req).status, Status::invalid_handle);
}

}  // namespace
}  // namespace tandem::driver
