// SPDX-License-Identifier: Apache-2.0
// Release in stream order and allocation under pressure (spec/runtime.md
// §6, docs/runtime.md "Release in stream order"): the last view of a pool
// allocation dropped while one stream's work still uses it has its free
// enqueued on that stream behind the work, before the host proves anything;
// it counts as freed once that free is proven executed. Leases on several
// streams keep host-proven release in host_proven mode (release_stream_test.cpp:
// the other mode). An allocation the device cannot satisfy
// first gives back what is pending, then waits (bounded) for the work in
// flight.
#include <optional>
#include <thread>

#include "runtime/runtime_test_support.hpp"
#include "tandem/allocation_watch.hpp"
#include "tandem/graph.hpp"

namespace tandem::test {
namespace {

using Release = RuntimeFixture;

// RuntimeStats::held_bytes is its own count, moved with each release state:
// it must read as live bytes less those released on the device.
void expect_held_is_live_less_released(const RuntimeStats& st, const char* when) {
  EXPECT_EQ(st.held_bytes, st.live_bytes - st.released_unproven_bytes) << when;
}

class Pressure : public RuntimeFixture {
 protected:
  // 64 MiB: two 40 MiB buffers never fit at once.
  driver::SimConfig config() const override { return driver::SimConfig{64U << 20}; }
  static constexpr std::uint64_t kBig = (40U << 20) / sizeof(std::uint32_t);
};

// Retirement drains a stream whose newest work has its own event at once
// (kReleaseAtOnce). The tests below that watch a drop's release wait for
// the stream's next allocation or launch park it first (unparked, it took
// the release first in about 1 of 10 TSan runs of this suite).

TEST_F(Release, ABufferDroppedBehindWorkOnOneStreamIsFreedOnThatStreamBeforeTheWorkIsProvenDone) {
  Env e = env();
  settle();
  Gate& parked = gate();
  park_retirement(e, parked);
  const RuntimeStats before = e.ctx.stats();
  Gate& g = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 1024);
  const AllocationWatch watch(*x);
  LaunchFuture f = fill(e.a, *x, 7, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();  // the kernel still runs
  RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.awaiting_release_allocations, 1U);
  // The next allocation on the stream enqueues the free, behind the kernel.
  View y = allocate(e.a, DType::u32, 16);
  st = e.ctx.stats();
  EXPECT_EQ(st.awaiting_release_allocations, 0U) << "the free was not enqueued by the next allocation";
  EXPECT_EQ(st.released_unproven_allocations, 1U);
  EXPECT_EQ(st.released_unproven_bytes, 1024U * sizeof(std::uint32_t));
  // Enqueued is not freed: the kernel and the free behind it have not run.
  EXPECT_FALSE(watch.freed());
  EXPECT_EQ(st.frees_total, before.frees_total);
  EXPECT_EQ(st.live_allocations, before.live_allocations + 2);
  parked.open();
  // The parked adopted buffer is freed first (x cannot be: the kernel runs).
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().frees_total == before.frees_total + 1; }));
  const RuntimeStats mid = e.ctx.stats();
  EXPECT_FALSE(watch.freed());
  g.open();
  ASSERT_TRUE(f.wait(kPatience));
  settle();
  st = e.ctx.stats();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(st.released_unproven_allocations, 0U);
  EXPECT_EQ(st.frees_total, mid.frees_total + 1);
  EXPECT_EQ(st.stream_ordered_releases, before.stream_ordered_releases + 1);
  EXPECT_EQ(st.host_proven_releases, mid.host_proven_releases);
  EXPECT_EQ(st.live_allocations, mid.live_allocations - 1);
}

TEST_F(Release,
       HeldBytesAreLiveBytesLessReleasedOnesAndPeakAtOneBufferWhenTheNextAllocationReusesTheDropped) {
  Env e = env();
  settle();
  constexpr std::uint64_t kBytes = 1024U * sizeof(std::uint32_t);
  Gate& parked = gate();
  park_retirement(e, parked);
  const std::uint64_t base = e.ctx.stats().held_bytes;  // the parked adopted buffer's, if any
  Gate& g = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 1024);
  e.ctx.reset_held_bytes_peak();
  expect_held_is_live_less_released(e.ctx.stats(), "allocated");
  LaunchFuture f = fill(e.a, *x, 7, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();  // awaiting release: still held
  RuntimeStats st = e.ctx.stats();
  expect_held_is_live_less_released(st, "awaiting release");
  EXPECT_EQ(st.held_bytes, base + kBytes);
  // The free goes onto the stream before the pool is asked: one buffer held
  // at any time, never the dropped one and its successor together.
  std::optional<View> y = allocate(e.a, DType::u32, 1024);
  st = e.ctx.stats();
  expect_held_is_live_less_released(st, "released, unproven");
  EXPECT_EQ(st.held_bytes, base + kBytes);
  EXPECT_EQ(st.held_bytes_peak, base + kBytes)
      << "the dropped buffer and the next one were counted as held together";
  parked.open();
  g.open();
  ASSERT_TRUE(f.wait(kPatience));
  settle();
  st = e.ctx.stats();
  expect_held_is_live_less_released(st, "freed");
  EXPECT_EQ(st.held_bytes, kBytes);
  y.reset();  // nothing leases it: freed at once
  settle();
  st = e.ctx.stats();
  expect_held_is_live_less_released(st, "all freed");
  EXPECT_EQ(st.held_bytes, 0U);
  EXPECT_EQ(st.held_bytes_peak, base + kBytes);
}

TEST_F(Release, AQuietStreamsReleaseIsEnqueuedAndProvenByRetirementAlone) {
  Env e = env();
  settle();
  Gate& g = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  LaunchFuture f = fill(e.a, *x, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();
  f = {};
  g.open();
  settle();  // no submission or allocation follows on the stream
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 1U);
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
}

TEST_F(Release, ASubmissionOnTheStreamEnqueuesThePendingFreeBeforeItsOwnWork) {
  Env e = env();
  settle();
  Gate& g = gate();
  View other = allocate(e.a, DType::u32, 16);
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  LaunchFuture f = fill(e.a, *x, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  Gate& parked = gate();
  park_retirement(e, parked);
  x.reset();
  EXPECT_EQ(e.ctx.stats().awaiting_release_allocations, 1U);
  LaunchFuture next = fill(e.a, other, 2);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 1U) << "the launch did not enqueue the free";
  parked.open();
  g.open();
  ASSERT_TRUE(next.wait(kPatience));
  settle();
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 1U);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 0U);
}

TEST_F(Release, LeasesOnTwoStreamsKeepTheFreeUntilTheHostProvesBothDone) {
  ContextOptions o;
  o.multi_stream_release = MultiStreamRelease::host_proven;  // whatever TANDEM_MULTI_STREAM_RELEASE says
  Env e = env_with(o);
  settle();
  Gate& ga = gate();
  Gate& gb = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  LaunchFuture fa = hold(e.a, *x, Access::read, &ga);
  LaunchFuture fb = hold(e.b, *x, Access::read, &gb);
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  x.reset();
  (void)allocate(e.a, DType::u32, 4);  // nothing to drain: no stream holds every lease
  EXPECT_EQ(e.ctx.stats().awaiting_release_allocations, 1U);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 0U);
  ga.open();
  ASSERT_TRUE(fa.wait(kPatience));
  EXPECT_FALSE(watch.freed()) << "freed while stream b still read it";
  gb.open();
  ASSERT_TRUE(fb.wait(kPatience));
  settle();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().host_proven_releases, 1U);
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 0U);
  EXPECT_EQ(e.ctx.stats().awaiting_release_allocations, 0U);
  expect_held_is_live_less_released(e.ctx.stats(), "host-proven free");
}

TEST_F(Release, AFreeBehindAnUnknownCompletionIsNeverProvenAndTheAllocationIsQuarantined) {
  IntentionalLeakScope leak;  // quarantined memory is retained forever, by contract
  Env e = exact_env();
  settle();
  Gate& g = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  sim().arm_completion_unknown(e.a.native());
  LaunchFuture f = fill(e.a, *x, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();
  View y = allocate(e.a, DType::u32, 4);  // drains the free behind the faulted kernel
  g.open();
  settle();
  const RuntimeStats st = e.ctx.stats();
  EXPECT_FALSE(watch.freed());
  EXPECT_TRUE(watch.quarantined());
  EXPECT_EQ(st.quarantined_allocations, 1U);
  EXPECT_EQ(st.released_unproven_allocations, 0U);
  EXPECT_EQ(st.awaiting_release_allocations, 0U);
  EXPECT_EQ(st.live_allocations, 1U);  // y
  expect_held_is_live_less_released(st, "quarantined");
  EXPECT_EQ(st.held_bytes, 4U * sizeof(std::uint32_t))
      << "quarantined memory counts as neither live nor held";
}

TEST_F(Release, AStreamDroppedWithAReleasePendingStillFreesTheMemoryBeforeItGoes) {
  Env e = env();
  settle();
  const std::uint64_t sim_base = sim().live_allocations();
  Gate& g = gate();
  std::optional<View> x = allocate(e.b, DType::u32, 64);
  const AllocationWatch watch(*x);
  {
    Stream doomed = Stream::create(e.ctx);
    (void)fill(doomed, *x, 3, {.gate = &g});
    ASSERT_TRUE(g.wait_arrivals(1));
    x.reset();
  }  // the stream's last handle and the buffer's last view are gone
  g.open();
  settle();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 1U);
  EXPECT_EQ(e.ctx.stats().streams, 2U) << "the dropped stream was not destroyed";
  e.b.synchronize();
  EXPECT_EQ(sim().live_allocations(), sim_base);
}

TEST_F(Release, AGraphHeldAllocationIsFreedOnlyAfterItsReplayRetires) {
  Env e = env();
  settle();
  Gate& g = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  std::optional<Graph> graph = Graph::capture(e.b, [&] { (void)fill(e.b, *x, 5, {.gate = &g}); });
  LaunchFuture replay = graph->replay(e.b);
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();
  graph.reset();  // the replay in flight keeps the graph's reference
  EXPECT_FALSE(watch.freed());
  g.open();
  ASSERT_TRUE(replay.wait(kPatience));
  settle();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 0U) << "graph-held memory keeps host-proven release";
}

TEST_F(Pressure, AnAllocationThatDoesNotFitWaitsForMemoryDroppedBehindWorkOnAnotherStream) {
  Env e = env();
  settle();
  Gate& g = gate();
  std::optional<View> x = allocate(e.a, DType::u32, kBig);
  LaunchFuture f = fill(e.b, *x, 9, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();  // released on b, behind the held kernel
  std::optional<View> y;
  std::thread t([&] { y = allocate(e.a, DType::u32, kBig); });
  // It cannot fit until b's kernel and the free behind it have run.
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().pressure_retries == 1; }));
  EXPECT_FALSE(y.has_value());
  g.open();
  t.join();
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(e.ctx.stats().pressure_recoveries, 1U);
  y.reset();
}

TEST_F(Pressure, TheNextAllocationOnTheSameStreamReusesMemoryDroppedBehindItsWorkWithoutWaiting) {
  ContextOptions o;
  o.out_of_memory_wait = std::chrono::nanoseconds::zero();  // waiting would fail it
  Env e = env_with(o);
  settle();
  Gate& g = gate();
  for (int i = 0; i < 3; ++i) {
    View x = allocate(e.a, DType::u32, kBig);
    (void)fill(e.a, x, static_cast<std::uint32_t>(i), {.gate = i == 0 ? &g : nullptr});
    if (i == 0) {
      ASSERT_TRUE(g.wait_arrivals(1));
    }
  }  // each drop is behind the first, held, kernel
  g.open();
  settle();
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 3U);
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
}

TEST_F(Pressure, WithoutWaitingTheErrorNamesWhatWorkInFlightHolds) {
  ContextOptions o;
  o.out_of_memory_wait = std::chrono::nanoseconds::zero();
  Env e = env_with(o);
  settle();
  Gate& g = gate();
  std::optional<View> x = allocate(e.a, DType::u32, kBig);
  LaunchFuture f = fill(e.b, *x, 9, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();
  const std::string msg = error_message_of([&] { (void)allocate(e.a, DType::u32, kBig); });
  EXPECT_NE(msg.find("out_of_memory"), std::string::npos) << msg;
  EXPECT_NE(
      msg.find(std::to_string(kBig * sizeof(std::uint32_t)) + " bytes are released but not yet proven freed"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("waiting up to 0 ms"), std::string::npos) << msg;
  EXPECT_EQ(e.ctx.stats().pressure_recoveries, 0U);
  g.open();
}

TEST_F(Pressure, AnInjectedAllocationFailureIsNotRetried) {
  Env e = env();
  settle();
  sim().fail_nth_alloc(1);
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_memory, allocate(e.a, DType::u32, 16));
  EXPECT_EQ(e.ctx.stats().pressure_retries, 0U);
  View fine = allocate(e.a, DType::u32, 16);  // the fault fired once
  EXPECT_TRUE(fine.valid());
}

}  // namespace
}  // namespace tandem::test
