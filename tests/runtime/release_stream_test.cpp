// SPDX-License-Identifier: Apache-2.0
// Release of memory leased on several streams (spec/runtime.md §6,
// docs/runtime.md "Several streams"): with MultiStreamRelease::release_stream
// the last view's drop hands the allocation to the context's release
// stream, which waits on each lease stream's covering event and frees
// there; it counts as freed once that free is proven executed and every
// lease retired. host_proven (the default) frees only after the host proved
// every lease done. Either way no user stream waits on another's work, and
// the sim's use-after-free check (every test's TearDown) sees no free placed
// before a reader ran.
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/runtime_test_support.hpp"
#include "tandem/allocation_watch.hpp"
#include "tandem/graph.hpp"

namespace tandem::test {
namespace {

ContextOptions with_mode(MultiStreamRelease m, bool share_completion_events = false) {
  ContextOptions o;
  o.multi_stream_release = m;
  o.share_completion_events = share_completion_events;
  return o;
}

class ReleaseStream : public RuntimeFixture {
 protected:
  Env release_stream_env(bool share_completion_events = false) {
    return env_with(with_mode(MultiStreamRelease::release_stream, share_completion_events));
  }
};

class ReleaseStreamPressure : public ReleaseStream {
 protected:
  // 64 MiB: two 40 MiB buffers never fit at once.
  driver::SimConfig config() const override { return driver::SimConfig{64U << 20}; }
  static constexpr std::uint64_t kBig = (40U << 20) / sizeof(std::uint32_t);
};

TEST(MultiStreamReleaseNames, EachModeIsSpelledAsTheEnvironmentTakesIt) {
  for (MultiStreamRelease m : kAllMultiStreamReleases) {
    EXPECT_EQ(parse_multi_stream_release(multi_stream_release_name(m)), m);
  }
  EXPECT_EQ(multi_stream_release_name(MultiStreamRelease::host_proven), "host_proven");
  EXPECT_EQ(multi_stream_release_name(MultiStreamRelease::release_stream), "release_stream");
  EXPECT_EQ(parse_multi_stream_release("release-stream"), std::nullopt);
  EXPECT_EQ(parse_multi_stream_release(""), std::nullopt);
}

TEST_F(ReleaseStream, HostProvenIsTheDefaultUnlessTheEnvironmentChoosesAndAnExplicitChoiceWins) {
  const char* env = std::getenv("TANDEM_MULTI_STREAM_RELEASE");
  const MultiStreamRelease expected =
      env ? parse_multi_stream_release(env).value_or(MultiStreamRelease::host_proven)
          : MultiStreamRelease::host_proven;
  EXPECT_EQ(Context::create(device()).multi_stream_release(), expected);
  for (MultiStreamRelease m : kAllMultiStreamReleases) {
    EXPECT_EQ(Context::create(device(), with_mode(m)).multi_stream_release(), m);
  }
}

TEST_F(ReleaseStream, ABufferReadOnTwoStreamsIsFreedThereOnlyAfterBothReadersRan) {
  Env e = release_stream_env();
  settle();
  // Retirement drains the idle release stream itself, at once: parked, it
  // leaves the drop's release to the allocation below (unparked, it took it
  // first in about 1 of 100 runs under ASan).
  Gate& parked = gate();
  park_retirement(e, parked);
  const RuntimeStats before = e.ctx.stats();
  Gate& ga = gate();
  Gate& gb = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  LaunchFuture fa = hold(e.a, *x, Access::read, &ga);
  LaunchFuture fb = hold(e.b, *x, Access::read, &gb);
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  x.reset();  // both readers still run
  EXPECT_EQ(e.ctx.stats().awaiting_release_allocations, 1U);
  View y = allocate(e.a, DType::u32, 4);  // the allocating thread enqueues the free on the release stream
  RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.awaiting_release_allocations, 0U) << "the allocation did not drain the release stream";
  EXPECT_EQ(st.released_unproven_allocations, 1U);
  EXPECT_EQ(st.released_unproven_bytes, 64U * sizeof(std::uint32_t));
  EXPECT_FALSE(watch.freed()) << "enqueued is not freed";
  parked.open();
  // The parked adopted buffer is freed first (x cannot be: both readers run).
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().frees_total == before.frees_total + 1; }));
  const std::uint64_t frees_base = before.frees_total + 1;
  const std::uint64_t live_base = before.live_allocations - 1;
  ga.open();
  ASSERT_TRUE(fa.wait(kPatience));
  EXPECT_FALSE(watch.freed()) << "freed while stream b still read it";
  EXPECT_EQ(e.ctx.stats().frees_total, frees_base);
  gb.open();
  ASSERT_TRUE(fb.wait(kPatience));
  settle();
  st = e.ctx.stats();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(st.frees_total, frees_base + 1);
  EXPECT_EQ(st.stream_ordered_releases, before.stream_ordered_releases + 1);
  EXPECT_EQ(st.host_proven_releases, before.host_proven_releases);
  EXPECT_EQ(st.released_unproven_allocations, 0U);
  EXPECT_EQ(st.live_allocations, live_base + 1);  // y
  EXPECT_EQ(st.streams, 2U) << "the release stream is not a user's stream";
}

TEST_F(ReleaseStream, InHostProvenModeTheSameBufferWaitsForHostProofOfBothReaders) {
  Env e = env_with(with_mode(MultiStreamRelease::host_proven));
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
  (void)allocate(e.a, DType::u32, 4);  // nothing to drain
  EXPECT_EQ(e.ctx.stats().awaiting_release_allocations, 1U);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 0U);
  ga.open();
  gb.open();
  settle();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().host_proven_releases, 1U);
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 0U);
}

TEST_F(ReleaseStream, RetirementAloneEnqueuesAndProvesTheFreeWhenNoAllocationFollows) {
  Env e = release_stream_env();
  settle();
  (void)allocate(e.b, DType::u8, 1);  // the context's first allocation makes the release stream
  Gate& ga = gate();
  Gate& gb = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  (void)hold(e.a, *x, Access::read, &ga);
  (void)hold(e.b, *x, Access::read, &gb);
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  x.reset();
  // Released by the retirement thread while both still run: no host proof.
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().released_unproven_allocations == 1; }));
  EXPECT_FALSE(watch.freed());
  ga.open();
  gb.open();
  settle();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 1U);
  EXPECT_EQ(e.ctx.stats().host_proven_releases, 0U);
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
}

// With shared completion events the newest reader on a stream may have no
// event of its own: the release stream waits on the next event of that
// stream, a marker queued for the purpose (never a wait on that stream).
TEST_F(ReleaseStream, ACoveredReaderIsWaitedForThroughTheEventThatProvesIt) {
  Env e = release_stream_env(/*share_completion_events=*/true);
  settle();
  Gate& ga = gate();
  Gate& gb = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  (void)hold(e.a, *x, Access::read, &ga);
  (void)hold(e.b, *x, Access::read, &gb);
  (void)hold(e.b, *x, Access::read, nullptr);  // covered: shares b's next event
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  x.reset();
  (void)allocate(e.a, DType::u32, 4);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 1U);
  ga.open();
  gb.open();
  settle();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 1U);
}

TEST_F(ReleaseStream, AFreeBehindAnUnknownCompletionOnOneLeaseStreamLeavesTheAllocationQuarantined) {
  IntentionalLeakScope leak;  // quarantined memory is retained forever, by contract
  Env e = release_stream_env();
  settle();
  Gate& ga = gate();
  Gate& gb = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  (void)hold(e.a, *x, Access::read, &ga);
  sim().arm_completion_unknown(e.b.native());
  (void)hold(e.b, *x, Access::read, &gb);
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  x.reset();
  View y = allocate(e.a, DType::u32, 4);  // enqueues the free behind both readers
  ga.open();
  gb.open();
  settle();
  const RuntimeStats st = e.ctx.stats();
  EXPECT_FALSE(watch.freed()) << "a lease whose completion is unknown was counted as done";
  EXPECT_TRUE(watch.quarantined());
  EXPECT_EQ(st.quarantined_allocations, 1U);
  EXPECT_EQ(st.released_unproven_allocations, 0U);
  EXPECT_EQ(st.awaiting_release_allocations, 0U);
  EXPECT_EQ(st.live_allocations, 1U);  // y
}

TEST_F(ReleaseStream, AdoptedMemoryReadOnTwoStreamsKeepsHostProvenRelease) {
  Env e = release_stream_env();
  settle();
  (void)allocate(e.a, DType::u8, 1);  // the release stream exists
  Gate& ga = gate();
  Gate& gb = gate();
  const driver::DevicePtr p = foreign_alloc(e.ctx, 256);
  std::optional<View> f =
      adopt(e.ctx, p, DType::u32, 64,
            [&be = platform().backend(), h = e.ctx.native(), p] { (void)be.mem_free(h, p); });
  const AllocationWatch watch(*f);
  (void)hold(e.a, *f, Access::read, &ga);
  (void)hold(e.b, *f, Access::read, &gb);
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  f.reset();  // its owner runs on the host, after both readers
  (void)allocate(e.a, DType::u32, 4);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 0U);
  EXPECT_FALSE(watch.owner_released());
  ga.open();
  gb.open();
  settle();
  EXPECT_TRUE(watch.owner_released());
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 0U);
}

TEST_F(ReleaseStream, GraphHeldMemoryReadOnTwoStreamsKeepsHostProvenRelease) {
  Env e = release_stream_env();
  settle();
  Gate& ga = gate();
  Gate& gb = gate();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  const AllocationWatch watch(*x);
  std::optional<Graph> graph = Graph::capture(e.b, [&] { (void)hold(e.b, *x, Access::read, &gb); });
  LaunchFuture replay = graph->replay(e.b);
  (void)hold(e.a, *x, Access::read, &ga);
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  x.reset();      // the graph still refers to it
  graph.reset();  // the replay in flight keeps the graph's reference
  (void)allocate(e.a, DType::u32, 4);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 0U);
  EXPECT_FALSE(watch.freed());
  ga.open();
  gb.open();
  ASSERT_TRUE(replay.wait(kPatience));
  settle();
  EXPECT_TRUE(watch.freed());
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 0U) << "graph-held memory keeps host-proven release";
}

TEST_F(ReleaseStream, TheContextIsReleasedOnceItsLastUserIsGoneAndRetirementWaitedFor) {
  driver::Backend& be = platform().backend();
  driver::ContextHandle h;
  {
    Env e = release_stream_env();
    h = e.ctx.native();
    Gate& ga = gate();
    Gate& gb = gate();
    View x = allocate(e.a, DType::u32, 64);
    (void)hold(e.a, x, Access::read, &ga);
    (void)hold(e.b, x, Access::read, &gb);
    ASSERT_TRUE(ga.wait_arrivals(1));
    ASSERT_TRUE(gb.wait_arrivals(1));
    ga.open();
    gb.open();
  }  // the buffer goes behind its readers, then every handle
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  int ordinal = -1;
  EXPECT_FALSE(be.context_device(h, ordinal).ok())
      << "the release stream kept the context alive after wait_for_retirement returned";
}

TEST_F(ReleaseStreamPressure, MemoryReadOnTwoStreamsIsReusedByANewAllocationOnlyAfterBothReadersRan) {
  Env e = release_stream_env();
  settle();
  Gate& ga = gate();
  Gate& gb = gate();
  std::optional<View> x = allocate(e.a, DType::u32, kBig);
  LaunchFuture fa = hold(e.a, *x, Access::read, &ga);
  LaunchFuture fb = hold(e.b, *x, Access::read, &gb);
  ASSERT_TRUE(ga.wait_arrivals(1));
  ASSERT_TRUE(gb.wait_arrivals(1));
  const std::uint64_t sim_blocks = sim().live_allocations();
  x.reset();
  std::optional<View> y;
  std::thread t([&] { y = allocate(e.a, DType::u32, kBig); });
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().pressure_retries == 1; }));
  ga.open();
  ASSERT_TRUE(fa.wait(kPatience));
  // The free waits on the release stream for b's reader: the device still
  // holds the old block, and the allocation cannot have it.
  EXPECT_EQ(sim().live_allocations(), sim_blocks) << "the old block was freed while b still read it";
  EXPECT_FALSE(y.has_value());
  gb.open();
  t.join();
  ASSERT_TRUE(y.has_value());
  // The retry may get the block once the sim has run the free, before
  // retirement proves it and counts the release (seen under TSan).
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  const RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.pressure_recoveries, 1U);
  EXPECT_EQ(st.stream_ordered_releases, 1U);
  EXPECT_EQ(st.host_proven_releases, 0U);
  y.reset();
}

// Both modes under concurrent drops from several threads: nothing stays
// live, nothing is freed before its readers ran (TearDown's violations).
TEST_F(ReleaseStream, ThreadsDroppingBuffersReadOnTwoStreamsLeaveNothingLiveInEitherMode) {
  for (MultiStreamRelease m : kAllMultiStreamReleases) {
    Env e = env_with(with_mode(m, /*share_completion_events=*/true));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&e, t] {
        const Stream own = Stream::create(e.ctx);
        for (int i = 0; i < 50; ++i) {
          View x = allocate(own, DType::u32, 256);
          (void)fill(own, x, static_cast<std::uint32_t>(t * 1000 + i));
          (void)add(i % 2 == 0 ? e.a : e.b, x, 1);  // ordered after the fill on the device
          (void)hold(own, x, Access::read, nullptr);
        }
      });
    }
    for (std::thread& th : threads) th.join();
    settle();
    const RuntimeStats st = e.ctx.stats();
    EXPECT_EQ(st.live_allocations, 0U) << multi_stream_release_name(m);
    EXPECT_EQ(st.awaiting_release_allocations + st.released_unproven_allocations, 0U)
        << multi_stream_release_name(m);
  }
}

}  // namespace
}  // namespace tandem::test
