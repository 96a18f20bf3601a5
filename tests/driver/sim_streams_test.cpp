// SPDX-License-Identifier: Apache-2.0
// Unit tests of the simulated device (SimBackend): streams (asynchrony, order, concurrency, destruction) and
// events. Each test is named after the rule of sim_backend.hpp / backend.hpp it checks; the test kernels and
// the fixture are in sim_test_support.hpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "driver/sim_test_support.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {
namespace {

using namespace std::chrono_literals;
using namespace sim_test;

// --- streams: asynchrony, order, concurrency -------------------------------------------

TEST_F(SimBackendTest, WorkCompletesLaterOnAWorkerThread) {
  const StreamHandle s = stream();
  const EventHandle e = event();
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s)));

  // Everything returned while the first kernel is still blocked.
  EXPECT_EQ(probe_.runs.load(), 0);
  EXPECT_EQ(sim_->event_query(ctx_, e).status, Status::not_ready);
  EXPECT_EQ(sim_->stream_query(ctx_, s).status, Status::not_ready);
  ASSERT_TRUE(probe_.gate.wait_arrivals(1));

  probe_.gate.open();
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));
  EXPECT_EQ(probe_.runs.load(), 2);
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, e)));
  EXPECT_TRUE(Ok(*sim_, sim_->stream_query(ctx_, s)));
  std::lock_guard lock(probe_.m);
  ASSERT_EQ(probe_.threads.size(), 1U);
  EXPECT_NE(*probe_.threads.begin(), std::this_thread::get_id());
}

TEST_F(SimBackendTest, StreamDelayKeepsWorkRunningAtLeastThatLong) {
  const StreamHandle s = stream();
  sim_->set_stream_delay(s, 50ms);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  sync(s);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  EXPECT_EQ(probe_.runs.load(), 1);
}

TEST_F(SimBackendTest, StreamRunsOperationsInOrder) {
  const StreamHandle s = stream();
  std::vector<std::int32_t> index(100);
  for (std::int32_t i = 0; i < 100; ++i) {
    index[static_cast<std::size_t>(i)] = i;  // launch copies the value; keep storage distinct anyway
    ASSERT_TRUE(Ok(*sim_, launch(kOrder, s, {&arg_, &index[static_cast<std::size_t>(i)]})));
  }
  // Transfers and kernels interleave in order too: memset, add, download.
  const DevicePtr p = alloc(4 * sizeof(std::int32_t));
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, p, 0, 4 * sizeof(std::int32_t), s)));
  DeviceBuffer buf{p, 4};
  std::int32_t delta = 5;
  ASSERT_TRUE(Ok(*sim_, launch(kAdd, s, {&buf, &delta})));
  EXPECT_EQ(download_ints(s, p, 4), (std::vector<std::int32_t>{5, 5, 5, 5}));

  std::lock_guard lock(probe_.m);
  std::vector<int> expected(100);
  for (int i = 0; i < 100; ++i) {
    expected[static_cast<std::size_t>(i)] = i;
  }
  EXPECT_EQ(probe_.order, expected);
}

TEST_F(SimBackendTest, StreamsRunConcurrently) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  sim_->set_stream_delay(s1, 1ms);
  sim_->set_stream_delay(s2, 1ms);
  ASSERT_TRUE(Ok(*sim_, launch(kRendezvous, s1, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, launch(kRendezvous, s2, {&arg_})));
  // Both kernels are inside their host function at the same time.
  ASSERT_TRUE(probe_.rendezvous.wait_arrivals(2));
  EXPECT_EQ(probe_.max_running.load(), 2);
  probe_.rendezvous.open();
  sync(s1);
  sync(s2);
  EXPECT_EQ(probe_.running.load(), 0);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimBackendTest, DestroyedStreamStillRunsItsPendingWork) {
  const StreamHandle s = stream();
  const EventHandle e = event();
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s)));
  // Returns while the gate is closed: destroy does not wait for the work.
  ASSERT_TRUE(Ok(*sim_, sim_->stream_destroy(ctx_, s)));
  EXPECT_EQ(probe_.runs.load(), 0);
  EXPECT_EQ(sim_->stream_query(ctx_, s).status, Status::invalid_handle);

  probe_.gate.open();
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));
  EXPECT_EQ(probe_.runs.load(), 2);
}

TEST_F(SimBackendTest, StreamCreateDestroyCyclesDoNotAccumulateThreads) {
  const std::size_t before = thread_count();
  constexpr int kCycles = 2000;
  for (int i = 0; i < kCycles; ++i) {
    const StreamHandle s = stream();
    ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
    ASSERT_TRUE(Ok(*sim_, sim_->stream_destroy(ctx_, s)));
  }
  // Finished workers are joined lazily; only those still draining remain.
  // How many that is depends on how the machine schedules them (72 of 2000
  // seen with both of CI's cores busy); workers never joined would be about
  // all 2000.
  EXPECT_LT(thread_count(), before + kCycles / 8);
  sim_.reset();  // drains and joins the rest
  EXPECT_EQ(probe_.runs.load(), kCycles);
}

// A backend can outlive every later call (kept to the end of the process by
// quarantined memory); a worker reaped lazily would then stay unjoined.
TEST_F(SimBackendTest, DestroyingAnIdleStreamJoinsItsWorkerAtOnce) {
  const StreamHandle s = stream();
  ASSERT_TRUE(Ok(*sim_, launch(kCount, s, {&arg_})));
  sync(s);
  // Counted from here: a sanitizer may start a thread of its own at the
  // process's first thread creation.
  const std::size_t with_worker = thread_count();
  ASSERT_TRUE(Ok(*sim_, sim_->stream_destroy(ctx_, s)));
  EXPECT_EQ(thread_count(), with_worker - 1) << "the idle stream's worker outlived stream_destroy";
}

TEST_F(SimBackendTest, DestructorDrainsQueuesOfLeakedHandles) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();  // leaked, as are the streams and the memory
  sim_->set_stream_delay(s1, 1ms);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Ok(*sim_, launch(kCount, s1, {&arg_})));
  }
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s2, e)));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Ok(*sim_, launch(kCount, s2, {&arg_})));
  }
  (void)alloc(128);
  sim_.reset();
  EXPECT_EQ(probe_.runs.load(), 10);
}

// --- events ----------------------------------------------------------------------------

TEST_F(SimBackendTest, EventNeverRecordedIsOkAndReRecordingSupersedes) {
  const StreamHandle blocked = stream();
  const StreamHandle idle = stream();
  const EventHandle e = event();
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, e)));
  EXPECT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));

  ASSERT_TRUE(Ok(*sim_, launch(kGate, blocked, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, blocked)));
  EXPECT_EQ(sim_->event_query(ctx_, e).status, Status::not_ready);
  // The newer record, on an idle stream, is what query refers to now.
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, idle)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, e)));
  EXPECT_TRUE(Ok(*sim_, sim_->event_query(ctx_, e)));
  EXPECT_EQ(sim_->stream_query(ctx_, blocked).status, Status::not_ready);
  probe_.gate.open();
  sync(blocked);
}

TEST_F(SimBackendTest, StreamWaitEventOrdersAcrossStreams) {
  const StreamHandle s1 = stream();
  const StreamHandle s2 = stream();
  const EventHandle e = event();
  const DevicePtr p = upload_ints(s1, {0, 0, 0, 0});
  DeviceBuffer buf{p, 4};
  std::int32_t seven = 7;
  std::int32_t one = 1;
  const Access write_all{p, 16, AccessMode::write};
  const Access update_all{p, 16, AccessMode::read_write};

  ASSERT_TRUE(Ok(*sim_, launch(kGateFill, s1, {&arg_, &buf, &seven}, {write_all})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, s2, e)));
  ASSERT_TRUE(Ok(*sim_, launch(kAdd, s2, {&buf, &one}, {update_all})));
  // The wait blocks s2's worker, not this thread.
  ASSERT_TRUE(probe_.gate.wait_arrivals(1));
  EXPECT_EQ(sim_->stream_query(ctx_, s2).status, Status::not_ready);

  probe_.gate.open();
  EXPECT_EQ(download_ints(s2, p, 4), (std::vector<std::int32_t>{8, 8, 8, 8}));
  EXPECT_EQ(sim_->violation_count(), 0U);
}

}  // namespace
}  // namespace tandem::driver
