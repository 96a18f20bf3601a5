// SPDX-License-Identifier: Apache-2.0
// spec/runtime.md §8 (graphs) and the graph halves of §5 (uniqueness) and
// §6 (deferred destruction), on the simulated device.
#include <thread>
#include <vector>

#include "runtime/runtime_test_support.hpp"
#include "stream_state.hpp"
#include "tandem/graph.hpp"

namespace tandem::test {
namespace {

using Graphs = RuntimeFixture;

TEST_F(Graphs, CapturedWorkRunsOnlyWhenReplayedAndEachReplayRunsItAgain) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  (void)upload_u32(e.a, x, std::vector<std::uint32_t>(8, 10));
  Graph g = Graph::capture(e.a, [&] {
    LaunchFuture f = add(e.a, x, 1);
    EXPECT_FALSE(f.valid()) << "a captured submission has no future: nothing runs yet";
  });
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(8, 10));
  (void)g.replay(e.a);
  (void)g.replay(e.a);
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(8, 12));
  EXPECT_EQ(g.allocation_count(), 1U);
}

TEST_F(Graphs, AGraphMakesItsAllocationsNonUniqueAndKeepsThemAlive) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  {
    Graph g = Graph::capture(e.a, [&] { (void)fill(e.a, x, 3); });
    EXPECT_FALSE(x.is_unique()) << "the graph may touch the allocation again";
    EXPECT_EQ(x.view_count(), 1U) << "a graph reference is not a view";
    const std::int64_t shape[] = {2, 4};
    EXPECT_TANDEM_ERROR(ErrorCode::aliased, std::move(x).to_tensor(shape));
    View gone = std::move(x);
  }  // the graph was the last holder besides `gone`... both dropped now
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);

  View y = allocate(e.a, DType::u32, 8);
  Graph g2 = Graph::capture(e.a, [&] { (void)fill(e.a, y, 4); });
  { View dropped = std::move(y); }
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
  EXPECT_EQ(e.ctx.stats().live_allocations, 1U) << "alive through the graph's reference alone";
  (void)g2.replay(e.b);  // still valid memory to replay into
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
}

TEST_F(Graphs, ReplayIsASubmissionWithTheCapturedLeases) {
  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 8);
  settle();
  Graph g = Graph::capture(e.a, [&] { (void)fill(e.a, x, 5); });
  Gate& gate_ = gate();
  LaunchFuture held = hold(e.b, x, Access::read, &gate_);
  EXPECT_THROW((void)g.replay(e.a), ConflictError) << "the replay writes what another stream still reads";
  gate_.open();
  ASSERT_TRUE(held.wait(kPatience));
  LaunchFuture r = g.replay(e.a);
  ASSERT_TRUE(r.valid());
  ASSERT_TRUE(r.wait(kPatience));
  EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(8, 5));
}

TEST_F(Graphs, DroppingAGraphWithAReplayInFlightDefersItsDestruction) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  settle();
  Gate& gate_ = gate();
  std::optional<Graph> g = Graph::capture(e.a, [&] { (void)fill(e.a, x, 9, {.gate = &gate_}); });
  LaunchFuture r = g->replay(e.a);
  g.reset();
  { View dropped = std::move(x); }
  EXPECT_EQ(e.ctx.stats().live_allocations, 1U) << "the in-flight replay keeps graph and memory alive";
  gate_.open();
  ASSERT_TRUE(r.wait(kPatience));
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U) << "released once the replay retired";
}

TEST_F(Graphs, ACaptureThatThrowsReleasesItsReferences) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  EXPECT_THROW((void)Graph::capture(e.a,
                                    [&] {
                                      (void)fill(e.a, x, 1);
                                      throw std::runtime_error("body failed");
                                    }),
               std::runtime_error);
  EXPECT_TRUE(x.is_unique());
  (void)fill(e.a, x, 2);  // the stream is no longer capturing
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(8, 2));
}

TEST_F(Graphs, AllocatingOrNestingOnACapturingStreamIsUnsupported) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  Graph g = Graph::capture(e.a, [&] {
    EXPECT_TANDEM_ERROR(ErrorCode::unsupported, allocate(e.a, DType::u32, 4));
    EXPECT_THROW((void)Graph::capture(e.a, [] {}), Error);
    (void)fill(e.a, x, 1);
  });
  EXPECT_EQ(g.allocation_count(), 1U);
}

TEST_F(Graphs, ReplayOnAStreamOfAnotherContextIsADeviceMismatch) {
  Env e = env();
  Env other = env();
  View x = allocate(e.a, DType::u32, 8);
  Graph g = Graph::capture(e.a, [&] { (void)fill(e.a, x, 1); });
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, g.replay(other.a));
}

// A replay holds one lease per captured access (16 here): more than a
// record keeps inline. The record, once retired, goes back to its stream's
// pool; the next submission that takes it holds its leases inline again
// (kept on the heap, they would cost every later small launch through that
// record a separate block to write: src/runtime/src/stream_state.cpp).
TEST_F(Graphs, ARecordReusedAfterAReplayHoldsItsLeasesInline) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  View y = allocate(e.a, DType::u32, 8);
  const Graph g = Graph::capture(e.a, [&] {
    for (int i = 0; i < 8; ++i) {
      (void)add(e.a, x, 1);
      (void)add(e.a, y, 1);
    }
  });
  for (int i = 0; i < 4; ++i) (void)g.replay(e.a);
  settle();
  detail::StreamState& st = *StreamRef(e.a).state();
  base::Guard lock(st.mu);
  detail::Submission* r = st.take_submission();
  EXPECT_EQ(r->leases.heap_bytes(), 0U) << "the record kept a replay's leases on the heap";
  EXPECT_TRUE(r->leases.empty());
  st.recycle(r);
}

// A replay takes the tracker locks in allocation order, as every submission
// does (two submitters locking in opposite orders would deadlock); a graph
// puts its accesses in that order once, when its capture ends, and its
// replays submit them as they are, uncopied. 20 accesses: the large-list sort.
TEST_F(Graphs, AReplayLeasesItsCapturedAccessesInAllocationOrder) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  View y = allocate(e.a, DType::u32, 8);
  ASSERT_LT(x.allocation_id(), y.allocation_id());
  (void)fill(e.a, x, 0);
  (void)fill(e.a, y, 0);
  const Graph g = Graph::capture(e.a, [&] {
    for (int i = 0; i < 10; ++i) {
      (void)add(e.a, y, 1);  // the newer allocation first
      (void)add(e.a, x, 1);
    }
  });
  settle();
  Gate& gate_ = gate();
  LaunchFuture first = hold(e.a, x, Access::read, &gate_);  // keeps the replay queued behind it
  LaunchFuture r = g.replay(e.a);
  {
    detail::StreamState& st = *StreamRef(e.a).state();
    base::Guard lock(st.mu);
    const detail::Submission* replay = st.tail.load(std::memory_order_acquire);
    ASSERT_NE(replay, nullptr);
    ASSERT_EQ(replay->leases.size(), 20U);
    for (std::size_t i = 1; i < replay->leases.size(); ++i) {
      EXPECT_LE(replay->leases[i - 1].alloc->id, replay->leases[i].alloc->id) << "lease " << i;
    }
  }
  gate_.open();
  ASSERT_TRUE(r.wait(kPatience));
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(8, 10));
  EXPECT_EQ(read_u32(e.a, y), std::vector<std::uint32_t>(8, 10));
}

// Replays of one graph from several threads at once share its access list
// (read only: ThreadSanitizer checks), and each is ordered against the
// others and against launches that take the same two allocations in the
// opposite order of views.
TEST_F(Graphs, ConcurrentReplaysOfOneGraphAreOrderedAndShareItsAccesses) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  View y = allocate(e.a, DType::u32, 8);
  (void)fill(e.a, x, 0);
  (void)fill(e.a, y, 0);
  const Graph g = Graph::capture(e.a, [&] {
    (void)add(e.a, y, 1);
    (void)add(e.a, x, 1);
  });
  settle();
  constexpr int kThreads = 4, kReplays = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Stream s = Stream::create(e.ctx);
      for (int i = 0; i < kReplays; ++i) {
        if (t == 0) {
          (void)hold_many(s, {{&y, Access::read_write}, {&x, Access::read_write}}, nullptr);  // y first
        } else {
          (void)g.replay(s);
        }
      }
      s.synchronize();
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
  const std::uint32_t replays = (kThreads - 1) * kReplays;
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(8, replays));
  EXPECT_EQ(read_u32(e.a, y), std::vector<std::uint32_t>(8, replays));
}

}  // namespace
}  // namespace tandem::test
