// SPDX-License-Identifier: Apache-2.0
// Stream-ordered births and frees (docs/runtime.md "Allocation is
// stream-ordered"): an allocation is enqueued on its stream with no event
// and no submission of its own; another stream's first use waits for the
// allocation (and for nothing enqueued after it); a drop with nothing in
// flight frees at once, stream-ordered on the birth stream, with no
// retirement round trip; Context::trim and a dropped stream still see those
// frees and allocations done.
#include <optional>

#include "runtime/runtime_test_support.hpp"
#include "tandem/detail/footprint.hpp"
#include "tandem/graph.hpp"

namespace tandem::test {
namespace {

using Births = RuntimeFixture;

TEST_F(Births, AnAllocationWithNothingInFlightIsFreedWithoutARetirementRoundTrip) {
  Env e = env();
  std::optional<View> used = allocate(e.a, DType::u32, 64);
  (void)fill(e.a, *used, 1);
  settle();
  e.ctx.trim();
  Gate& parked = gate();
  park_retirement(e, parked);  // from here on, nothing that needs retirement can happen
  const std::uint64_t sim_base = sim().live_allocations();
  const RuntimeStats before = e.ctx.stats();
  {
    View fresh = allocate(e.a, DType::u32, 64);  // never used
    EXPECT_EQ(e.ctx.stats().pending_submissions, before.pending_submissions)
        << "an allocation made a submission";
  }
  used.reset();  // used on its birth stream, its work retired before
  RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.frees_total, before.frees_total + 2) << "a drop with nothing in flight waited for retirement";
  EXPECT_EQ(st.live_allocations, before.live_allocations - 1);
  EXPECT_EQ(st.allocations_total, before.allocations_total + 1);
  e.a.synchronize();  // the frees are stream-ordered on the birth stream
  EXPECT_EQ(sim().live_allocations(), sim_base - 1);
  parked.open();
}

TEST_F(Births, TheFreeOfADroppedAllocationFollowsItsBirthStreamsEarlierWork) {
  Env e = env();
  View busy = allocate(e.a, DType::u32, 4);
  settle();
  e.ctx.trim();
  const std::uint64_t sim_base = sim().live_allocations();
  const std::uint64_t frees = e.ctx.stats().frees_total;
  Gate& g = gate();
  LaunchFuture f = fill(e.a, busy, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  { View x = allocate(e.a, DType::u32, 64); }  // allocated and freed behind the held kernel
  EXPECT_EQ(e.ctx.stats().frees_total, frees + 1) << "the free was not enqueued at the drop";
  EXPECT_EQ(sim().live_allocations(), sim_base + 1) << "freed before its stream reached it";
  g.open();
  ASSERT_TRUE(f.wait(kPatience));
  e.a.synchronize();
  EXPECT_EQ(sim().live_allocations(), sim_base);
}

TEST_F(Births, AnAllocationUsedOnAnotherStreamIsFreedOnlyAfterThatUseRetires) {
  Env e = env();
  settle();
  const std::uint64_t frees = e.ctx.stats().frees_total;
  std::optional<View> x = allocate(e.a, DType::u32, 256);
  // Stream b's kernel stays running for a while after it is released: a
  // free on the birth stream that overlapped it would be a use_after_free.
  sim().set_stream_delay(e.b.native(), std::chrono::milliseconds(20));
  Gate& g = gate();
  LaunchFuture use = hold(e.b, *x, Access::write, &g);
  ASSERT_TRUE(g.wait_arrivals(1));
  x.reset();
  EXPECT_EQ(e.ctx.stats().frees_total, frees) << "freed while another stream's lease was pending";
  g.open();
  ASSERT_TRUE(use.wait(kPatience));
  // Released in stream order behind the use (its only lease): freed once
  // that free is proven executed, which retirement waits for.
  settle();
  EXPECT_EQ(e.ctx.stats().frees_total, frees + 1);
  EXPECT_EQ(e.ctx.stats().stream_ordered_releases, 1U);
  sim().set_stream_delay(e.b.native(), std::chrono::microseconds(0));
  settle();
  e.a.synchronize();
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

// The first submission after an allocation that writes it whole records no
// birth mark of its own (submit.cpp, writes_the_new_allocation): another
// stream's use overlaps that write, so it is ordered after it (order) or
// refused (reject) all the same, and the allocation precedes it.
TEST_F(Births, AnotherStreamsFirstUseOfANewBufferWrittenWholeWaitsForThatWrite) {
  for (const bool shared : {false, true}) {
    for (ConflictPolicy policy : {ConflictPolicy::order, ConflictPolicy::reject}) {
      SCOPED_TRACE(std::string(policy == ConflictPolicy::reject ? "reject" : "order") +
                   (shared ? ", shared events" : ""));
      Env e = env_sharing(policy, shared);
      settle();
      View busy = allocate(e.a, DType::u32, 4);
      Gate& before = gate();
      // Work already pending on the stream: the write below may share the
      // next event (with shared events on), and records no birth mark.
      LaunchFuture pending = fill(e.a, busy, 1, {.gate = &before});
      ASSERT_TRUE(before.wait_arrivals(1));
      View x = allocate(e.a, DType::u32, 64);
      Gate& g = gate();
      LaunchFuture first = fill(e.a, x, 1, {.gate = &g});  // the whole buffer, queued behind `pending`
      if (policy == ConflictPolicy::reject) {
        EXPECT_TANDEM_ERROR(ErrorCode::conflict, hold(e.b, x, Access::read, nullptr));
        before.open();
        g.open();
      } else {
        LaunchFuture other = hold(e.b, x, Access::read, nullptr);
        before.open();
        ASSERT_TRUE(g.wait_arrivals(1));
        EXPECT_EQ(other.status(), SubmissionStatus::pending) << "ran before the first write finished";
        g.open();
        ASSERT_TRUE(other.wait(kPatience));
      }
      ASSERT_TRUE(first.wait(kPatience));
      settle();
      EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
    }
  }
}

// The first use on another stream waits for the allocation, which sits
// behind the birth stream's earlier work, and for nothing enqueued on the
// birth stream after it (a read there never orders a read here).
TEST_F(Births, FirstUseOnAnotherStreamWaitsForTheAllocationAndNothingAfterIt) {
  for (ConflictPolicy policy : {ConflictPolicy::order, ConflictPolicy::reject}) {
    SCOPED_TRACE(policy == ConflictPolicy::reject ? "reject" : "order");
    Env e = env(policy);
    View before = allocate(e.a, DType::u32, 4);
    View after = allocate(e.a, DType::u32, 4);
    settle();
    Journal j;
    Gate& earlier = gate();
    LaunchFuture first = fill(e.a, before, 1, {.gate = &earlier, .journal = &j, .tag = 1});
    ASSERT_TRUE(earlier.wait_arrivals(1));
    View y = allocate(e.a, DType::u32, 16);  // behind the held kernel on a
    Gate& later = gate();
    LaunchFuture next = hold(e.a, after, Access::read, &later);  // after the allocation on a
    LaunchFuture use = fill(e.b, y, 2, {.journal = &j, .tag = 2});
    // Not synchronization: unordered, it would be done by now.
    EXPECT_FALSE(use.wait(std::chrono::milliseconds(20))) << "ran before its allocation";
    earlier.open();
    ASSERT_TRUE(use.wait(kPatience)) << "the first use waited for work enqueued after the allocation";
    EXPECT_EQ(next.status(), SubmissionStatus::pending);
    EXPECT_EQ(j.tags(), (std::vector<std::uint32_t>{1, 2})) << "used on stream b before its allocation on a";
    later.open();
    ASSERT_TRUE(next.wait(kPatience));
    EXPECT_EQ(read_u32(e.b, y), std::vector<std::uint32_t>(16, 2));
  }
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

TEST_F(Births, AStreamDroppedRightAfterAnAllocationStillOrdersItsFirstUseElsewhere) {
  Env e = env();
  settle();
  e.ctx.trim();
  const std::uint64_t sim_base = sim().live_allocations();
  const std::uint64_t streams = e.ctx.stats().streams;
  std::optional<Stream> s = Stream::create(e.ctx);
  std::optional<View> x = allocate(*s, DType::u32, 32);
  s.reset();  // nothing submitted on it: its allocation is proven done before it goes
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().streams == streams; })) << "the dropped stream was kept";
  LaunchFuture f = fill(e.b, *x, 7);
  ASSERT_TRUE(f.wait(kPatience));
  EXPECT_EQ(read_u32(e.b, *x), std::vector<std::uint32_t>(32, 7));
  x.reset();  // its birth stream is gone: freed on the context's own stream
  settle();
  e.ctx.trim();
  EXPECT_EQ(sim().live_allocations(), sim_base);
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
}

TEST_F(Births, TrimWaitsForFreesEnqueuedOnTheBirthStreams) {
  Env e = env();
  View busy = allocate(e.a, DType::u32, 4);
  settle();
  e.ctx.trim();
  const std::uint64_t sim_base = sim().live_allocations();
  const MemoryInfo base = e.ctx.memory_info();
  Gate& g = gate();
  LaunchFuture f = fill(e.a, busy, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  for (int i = 0; i < 4; ++i) View x = allocate(i % 2 ? e.a : e.b, DType::u32, 1 << 16);
  g.open();
  e.ctx.trim();  // no synchronize and no wait for retirement first
  EXPECT_EQ(sim().live_allocations(), sim_base);
  EXPECT_EQ(e.ctx.memory_info().free_bytes, base.free_bytes);
  ASSERT_TRUE(f.wait(kPatience));
}

TEST_F(Births, AGraphCaptureOnTheBirthStreamStillOrdersAnotherStreamsFirstUse) {
  Env e = env();
  View other = allocate(e.a, DType::u32, 4);
  settle();
  Journal j;
  Gate& g = gate();
  LaunchFuture first = fill(e.a, other, 1, {.gate = &g, .journal = &j, .tag = 1});
  ASSERT_TRUE(g.wait_arrivals(1));
  View x = allocate(e.a, DType::u32, 16);  // nothing submitted on a after it when the capture begins
  std::optional<LaunchFuture> use;
  Graph graph = Graph::capture(e.a, [&] {
    (void)fill(e.a, other, 3);                         // recorded, not run
    use = fill(e.b, x, 2, {.journal = &j, .tag = 2});  // another stream: runs, after the allocation
  });
  EXPECT_FALSE(use->wait(std::chrono::milliseconds(20)))
      << "ran before its allocation";  // not synchronization
  g.open();
  ASSERT_TRUE(use->wait(kPatience));
  EXPECT_EQ(j.tags(), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(16, 2));
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

// The first submission after an allocation records the allocation's birth
// mark before its work; a fault armed for the next event on the stream
// lands on that mark, and is the submission's own.
TEST_F(Births, AFaultOnTheBirthMarkQuarantinesTheSubmissionThatRecordedIt) {
  IntentionalLeakScope leak;  // quarantined memory is retained forever, by contract
  Env e = exact_env();
  View y = allocate(e.a, DType::u32, 16);
  settle();
  std::optional<View> x = allocate(e.a, DType::u32, 16);
  sim().arm_completion_unknown(e.a.native());
  LaunchFuture fx = fill(e.a, *x, 1);
  LaunchFuture fy = fill(e.a, y, 2);
  ASSERT_TRUE(fx.wait(kPatience));
  ASSERT_TRUE(fy.wait(kPatience));
  EXPECT_EQ(fx.status(), SubmissionStatus::quarantined);
  EXPECT_EQ(fy.status(), SubmissionStatus::retired);
  const std::uint64_t frees = e.ctx.stats().frees_total;
  x.reset();
  settle();
  const RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.frees_total, frees);
  EXPECT_EQ(st.quarantined_allocations, 1U);
  EXPECT_EQ(st.quarantined_submissions, 1U);
}

// Launches on a hot buffer hand their lease counts on to the next one of
// their stream; a quarantined launch's counts so handed on still retain
// the allocation once the last one retires and the last view goes.
TEST_F(Births, CountsHandedOnByAQuarantinedLeaseStillRetainTheAllocation) {
  IntentionalLeakScope leak;
  Env e = exact_env();  // f1 alone faulted: f2 and f3 must not share its event
  std::optional<View> x = allocate(e.a, DType::u32, 16);
  (void)fill(e.a, *x, 0);
  settle();
  Gate& g = gate();
  LaunchFuture f0 = fill(e.a, *x, 0, {.gate = &g});  // nothing after it retires before the gate opens
  sim().arm_completion_unknown(e.a.native());
  LaunchFuture f1 = fill(e.a, *x, 1);  // faulted
  LaunchFuture f2 = fill(e.a, *x, 2);
  LaunchFuture f3 = fill(e.a, *x, 3);  // displaces f1's lease and takes its count
  g.open();
  ASSERT_TRUE(f3.wait(kPatience));
  ASSERT_TRUE(f1.wait(kPatience));
  EXPECT_EQ(f1.status(), SubmissionStatus::quarantined);
  EXPECT_EQ(f3.status(), SubmissionStatus::retired);
  const RuntimeStats before = e.ctx.stats();
  x.reset();
  settle();
  const RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.frees_total, before.frees_total) << "a quarantined allocation was freed";
  EXPECT_EQ(st.quarantined_allocations, 1U);
  EXPECT_EQ(st.live_allocations, before.live_allocations);
  EXPECT_EQ(st.active_leases, 1U) << "only the quarantined lease is still held";
}

TEST_F(Births, ALaunchStreamOnAHotBufferIsFreedOnceAfterItsLastLaunchRetires) {
  Env e = env();
  settle();
  e.ctx.trim();
  const std::uint64_t sim_base = sim().live_allocations();
  const RuntimeStats before = e.ctx.stats();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  Gate& g = gate();
  LaunchFuture first = fill(e.a, *x, 0, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  for (std::uint32_t i = 1; i <= 100; ++i) (void)add(e.a, *x, 1);
  std::optional<View> tail = x->slice(0, 8);
  x.reset();
  EXPECT_EQ(e.ctx.stats().frees_total, before.frees_total);
  g.open();
  ASSERT_TRUE(first.wait(kPatience));
  EXPECT_EQ(read_u32(e.a, *tail), std::vector<std::uint32_t>(8, 100));
  tail.reset();
  settle();
  const RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.frees_total, before.frees_total + 1);
  EXPECT_EQ(st.live_allocations, before.live_allocations);
  EXPECT_EQ(st.active_leases, 0U);
  e.ctx.trim();
  EXPECT_EQ(sim().live_allocations(), sim_base);
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

// Context::trim visits every stream of the context while retirement
// destroys the dropped ones.
TEST_F(Births, TrimIsSafeWhileDroppedStreamsAreDestroyed) {
  Env e = env();
  std::atomic<bool> stop{false};
  std::thread trimmer([&] {
    while (!stop.load()) e.ctx.trim();
  });
  for (int i = 0; i < 200; ++i) {
    std::optional<Stream> s = Stream::create(e.ctx);
    { View x = allocate(*s, DType::u32, 16); }  // a free enqueued on it
    std::optional<View> y = allocate(*s, DType::u32, 16);
    s.reset();  // destroyed once its untracked work is proven done
    if (i % 2) (void)fill(e.b, *y, 1);
  }
  stop.store(true);
  trimmer.join();
  settle();
  e.ctx.trim();
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

TEST(TrackerFootprint, PerAllocationAndPerLeaseStayWithinTheirBudgets) {
  const detail::TrackerFootprint f = detail::tracker_footprint();
  EXPECT_GT(f.per_allocation_bytes, 0U);
  EXPECT_LE(f.per_allocation_bytes, 256U);
  EXPECT_GT(f.per_lease_bytes, 0U);
  EXPECT_LE(f.per_lease_bytes, 64U);
}

}  // namespace
}  // namespace tandem::test
