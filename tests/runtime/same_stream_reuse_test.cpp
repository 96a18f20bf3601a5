// SPDX-License-Identifier: Apache-2.0
// Same-stream reuse (docs/runtime.md, "Release in stream order"): an
// allocation on a stream that holds a pending release of exactly its size
// takes that block (Backend::mem_reuse_async) instead of the release's free
// and a fresh allocation from the pool. The old allocation still counts as
// freed only once its work is proven done; the new one's work follows the
// old one's in stream order, and its first use on another stream waits for
// that order; an injected allocation failure still fires.
#include <vector>

#include "runtime/runtime_test_support.hpp"
#include "tandem/allocation_watch.hpp"

namespace tandem::test {
namespace {

using SameStreamReuse = RuntimeFixture;

constexpr std::uint64_t kCount = 1024;

// A buffer of kCount words on stream a, dropped while a fill of `value`
// held at `g` still runs: its block and a watch on its allocation.
struct Dropped {
  driver::DevicePtr block = 0;
  AllocationWatch watch;
  LaunchFuture fill;
};
Dropped drop_behind_held_fill(const Env& e, Gate& g, std::uint32_t value) {
  View x = allocate(e.a, DType::u32, kCount);
  Dropped d{x.device_ptr(), AllocationWatch(x), fill(e.a, x, value, {.gate = &g})};
  EXPECT_TRUE(g.wait_arrivals(1));
  return d;  // x goes here, the fill still running
}

TEST_F(SameStreamReuse, AnAllocationOfTheSameSizeTakesTheDroppedBlockAndTheOldOneIsFreedOnlyOnceProven) {
  Env e = env();
  settle();
  Gate& parked = gate();
  park_retirement(e, parked);  // it would otherwise free the dropped block first, now and then
  const RuntimeStats before = e.ctx.stats();
  const std::uint64_t sim_base = sim().live_allocations();
  Gate& g = gate();
  const Dropped x = drop_behind_held_fill(e, g, 7);

  View y = allocate(e.a, DType::u32, kCount);
  EXPECT_EQ(y.device_ptr(), x.block) << "the dropped block was not taken";
  EXPECT_EQ(sim().live_allocations(), sim_base + 1) << "a block was allocated or freed on the device";
  RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.awaiting_release_allocations, 0U);
  EXPECT_EQ(st.released_unproven_allocations, 1U);
  EXPECT_EQ(st.live_allocations, before.live_allocations + 2);
  EXPECT_EQ(st.held_bytes, kCount * sizeof(std::uint32_t)) << "both counted as held";
  EXPECT_EQ(st.same_stream_reuses, before.same_stream_reuses + 1);
  EXPECT_FALSE(x.watch.freed()) << "freed while its fill still runs";
  parked.open();

  // Behind the held fill by stream order: its 7s never land after the 9s.
  LaunchFuture next = fill(e.a, y, 9);
  g.open();
  ASSERT_TRUE(next.wait(kPatience));
  settle();
  EXPECT_TRUE(x.watch.freed());
  st = e.ctx.stats();
  EXPECT_EQ(st.released_unproven_allocations, 0U);
  EXPECT_EQ(st.stream_ordered_releases, before.stream_ordered_releases + 1);
  EXPECT_EQ(st.frees_total, before.frees_total + 2);  // and the buffer that parked retirement
  EXPECT_EQ(read_u32(e.a, y), std::vector<std::uint32_t>(kCount, 9));
}

TEST_F(SameStreamReuse, AnotherSizeOrAnotherStreamGetsAFreshBlock) {
  Env e = env();
  settle();
  Gate& g = gate();
  const Dropped x = drop_behind_held_fill(e, g, 1);
  // Another stream never takes it: its work is not ordered after the fill.
  View on_b = allocate(e.b, DType::u32, kCount);
  EXPECT_NE(on_b.device_ptr(), x.block);
  // Another size never takes it either (the device checks exact sizes).
  View smaller = allocate(e.a, DType::u32, kCount / 2);
  EXPECT_NE(smaller.device_ptr(), x.block);
  EXPECT_EQ(e.ctx.stats().released_unproven_allocations, 1U) << "the smaller allocation drains the free";
  EXPECT_EQ(e.ctx.stats().same_stream_reuses, 0U);
  g.open();
  settle();
  EXPECT_EQ(e.ctx.stats().live_allocations, 2U);
}

TEST_F(SameStreamReuse, AnInjectedAllocationFailureFiresOnAReuseAndTheDroppedBlockIsStillFreed) {
  Env e = env();
  settle();
  const std::uint64_t sim_base = sim().live_allocations();
  Gate& parked = gate();
  park_retirement(e, parked);  // the dropped block stays in the inbox for the allocation
  Gate& g = gate();
  const Dropped x = drop_behind_held_fill(e, g, 1);
  sim().fail_nth_alloc(1);
  const std::string msg = error_message_of([&] { (void)allocate(e.a, DType::u32, kCount); });
  EXPECT_NE(msg.find("out_of_memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mem_reuse_async"), std::string::npos) << "the fault did not fire on the reuse: " << msg;
  parked.open();
  EXPECT_EQ(e.ctx.stats().pressure_retries, 0U) << "an injected failure was retried";
  g.open();
  settle();
  EXPECT_TRUE(x.watch.freed());
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
  EXPECT_EQ(sim().live_allocations(), sim_base) << "the dropped block was lost";
}

TEST_F(SameStreamReuse, TheTakenBlocksFirstUseOnAnotherStreamWaitsForTheOldOwnersWork) {
  Env e = env();
  settle();
  Gate& parked = gate();
  park_retirement(e, parked);  // the dropped block stays in the inbox for the allocation
  Gate& g = gate();
  const Dropped x = drop_behind_held_fill(e, g, 7);
  View y = allocate(e.a, DType::u32, kCount);
  parked.open();
  ASSERT_EQ(y.device_ptr(), x.block);
  // Submitted while the old fill is held: run at once, it would write its
  // 5s before the old 7s land (and the sim would see the two overlap).
  LaunchFuture other = fill(e.b, y, 5);
  g.open();
  ASSERT_TRUE(other.wait(kPatience));
  settle();
  EXPECT_EQ(read_u32(e.b, y), std::vector<std::uint32_t>(kCount, 5));
}

}  // namespace
}  // namespace tandem::test
