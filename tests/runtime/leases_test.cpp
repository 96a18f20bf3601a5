// SPDX-License-Identifier: Apache-2.0
// spec/runtime.md §4 — access tracking and leases: what conflicts, the order
// and reject policies, host transfers, context mixing, aliasing arguments,
// release at retirement.
#include <optional>

#include "runtime/runtime_test_support.hpp"
#include "tandem/graph.hpp"

namespace tandem::test {
namespace {

class Leases : public RuntimeFixture {};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST_F(Leases, OverlappingWriteOnAnotherStreamConflictsAndTheErrorNamesBothLeases) {
  Env e = env(ConflictPolicy::reject);
  EXPECT_EQ(e.ctx.conflict_policy(), ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 64);
  settle();
  View head = x.slice(0, 32);  // bytes [0, 128)
  View mid = x.slice(16, 32);  // bytes [64, 192)
  Gate& g = gate();
  LaunchFuture held = hold(e.a, head, Access::write, &g);
  ASSERT_TRUE(g.wait_arrivals(1));
  try {
    (void)hold(e.b, mid, Access::read, nullptr);
    ADD_FAILURE() << "no conflict";
  } catch (const ConflictError& c) {
    EXPECT_EQ(c.code(), ErrorCode::conflict);
    EXPECT_EQ(c.allocation_id, x.allocation_id());
    EXPECT_EQ(c.held.offset, 0U);
    EXPECT_EQ(c.held.bytes, 128U);
    EXPECT_EQ(c.held.mode, driver::AccessMode::write);
    EXPECT_EQ(c.held.stream_id, e.a.id());
    EXPECT_EQ(c.held.submission_id, held.id());
    EXPECT_EQ(c.requested.offset, 64U);
    EXPECT_EQ(c.requested.bytes, 128U);
    EXPECT_EQ(c.requested.mode, driver::AccessMode::read);
    EXPECT_EQ(c.requested.stream_id, e.b.id());
    const std::string m = c.what();
    EXPECT_TRUE(contains(m, "allocation " + std::to_string(x.allocation_id()) + " ")) << m;
    EXPECT_TRUE(contains(m, "[64, 192)")) << m;
    EXPECT_TRUE(contains(m, "[0, 128)")) << m;
    EXPECT_TRUE(contains(m, "submission " + std::to_string(held.id()) + " ")) << m;
    EXPECT_TRUE(contains(m, "stream " + std::to_string(e.a.id()) + " ")) << m;
    EXPECT_TRUE(contains(m, "stream " + std::to_string(e.b.id()) + " ")) << m;
    EXPECT_TRUE(contains(m, "write")) << m;
    EXPECT_TRUE(contains(m, "read")) << m;
  }
  // Write against a held write, and write against a held read, conflict too.
  EXPECT_THROW((void)hold(e.b, mid, Access::write, nullptr), ConflictError);
  g.open();
  ASSERT_TRUE(held.wait(kPatience));
  Gate& g2 = gate();
  LaunchFuture reader = hold(e.a, head, Access::read, &g2);
  ASSERT_TRUE(g2.wait_arrivals(1));
  EXPECT_THROW((void)hold(e.b, mid, Access::read_write, nullptr), ConflictError);
  g2.open();
}

TEST_F(Leases, ReadAndReadNeverConflict) {
  for (ConflictPolicy policy : {ConflictPolicy::reject, ConflictPolicy::order}) {
    SCOPED_TRACE(policy == ConflictPolicy::reject ? "reject" : "order");
    Env e = env(policy);
    View x = allocate(e.a, DType::u32, 64);
    settle();
    Gate& g = gate();
    LaunchFuture r1 = hold(e.a, x, Access::read, &g);
    ASSERT_TRUE(g.wait_arrivals(1));
    // Neither rejected nor ordered: it completes while the first read is held.
    LaunchFuture r2 = hold(e.b, x, Access::read, nullptr);
    EXPECT_TRUE(r2.wait(kPatience));
    EXPECT_EQ(r1.status(), SubmissionStatus::pending);
    g.open();
    EXPECT_TRUE(r1.wait(kPatience));
  }
}

TEST_F(Leases, SameStreamAccessesNeverConflict) {
  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 64);
  settle();
  Gate& g = gate();
  Journal j;
  LaunchFuture w1 = fill(e.a, x, 1, {.gate = &g, .journal = &j, .tag = 1});
  ASSERT_TRUE(g.wait_arrivals(1));
  LaunchFuture w2 = fill(e.a, x, 2, {.journal = &j, .tag = 2});  // write after write, same stream
  LaunchFuture r3 = hold(e.a, x, Access::read, nullptr);
  LaunchFuture w4 = add(e.a, x, 5);
  g.open();
  ASSERT_TRUE(w4.wait(kPatience));
  EXPECT_EQ(j.tags(), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(64, 7));
}

TEST_F(Leases, EmptyRangesNeverConflict) {
  for (ConflictPolicy policy : {ConflictPolicy::reject, ConflictPolicy::order}) {
    SCOPED_TRACE(policy == ConflictPolicy::reject ? "reject" : "order");
    Env e = env(policy);
    View x = allocate(e.a, DType::u32, 16);
    View empty = allocate(e.a, DType::u32, 0);
    settle();
    View none = x.slice(5, 0);
    Gate& g = gate();
    LaunchFuture held = hold(e.a, x, Access::write, &g);
    ASSERT_TRUE(g.wait_arrivals(1));
    const std::uint64_t leases = e.ctx.stats().active_leases;
    LaunchFuture w1 = fill(e.b, none, 1);  // an empty range inside the held one
    LaunchFuture w2 = fill(e.b, empty, 1);
    EXPECT_TRUE(w1.wait(kPatience)) << "ordered after the held write";
    EXPECT_TRUE(w2.wait(kPatience));
    EXPECT_EQ(e.ctx.stats().active_leases, leases) << "an empty range took a lease";
    g.open();
    ASSERT_TRUE(held.wait(kPatience));
  }
}

TEST_F(Leases, DisjointSlicesNeverConflict) {
  for (ConflictPolicy policy : {ConflictPolicy::reject, ConflictPolicy::order}) {
    SCOPED_TRACE(policy == ConflictPolicy::reject ? "reject" : "order");
    Env e = env(policy);
    View x = allocate(e.a, DType::u32, 16);
    settle();
    View lo = x.slice(0, 8);
    View hi = x.slice(8, 8);  // adjacent: [32, 64) against [0, 32)
    Gate& g = gate();
    LaunchFuture wl = fill(e.a, lo, 1, {.gate = &g});
    ASSERT_TRUE(g.wait_arrivals(1));
    LaunchFuture wh = fill(e.b, hi, 2);
    EXPECT_TRUE(wh.wait(kPatience)) << "a disjoint slice was ordered after the held write";
    EXPECT_EQ(wh.status(), SubmissionStatus::retired);
    if (policy == ConflictPolicy::reject) {
      View straddle = x.slice(7, 2);  // one element of each half
      EXPECT_THROW((void)fill(e.b, straddle, 3), ConflictError);
    }
    g.open();
    ASSERT_TRUE(wl.wait(kPatience));
    std::vector<std::uint32_t> want(16, 2);
    std::fill_n(want.begin(), 8, 1U);
    EXPECT_EQ(read_u32(e.a, x), want);
  }
}

TEST_F(Leases, OrderPolicyRunsTheLaterSubmissionAfterTheEarlierOne) {
  Env e = env(ConflictPolicy::order);
  View x = allocate(e.a, DType::u32, 64);
  settle();
  Gate& g = gate();
  Journal j;
  LaunchFuture first = fill(e.a, x, 1, {.gate = &g, .journal = &j, .tag = 1});
  ASSERT_TRUE(g.wait_arrivals(1));
  // The launch returns at once (no host block): we are here while the gate is shut.
  LaunchFuture second = fill(e.b, x, 2, {.journal = &j, .tag = 2});
  EXPECT_EQ(second.status(), SubmissionStatus::pending);
  g.open();
  ASSERT_TRUE(second.wait(kPatience));
  ASSERT_TRUE(first.wait(kPatience));
  EXPECT_EQ(j.tags(), (std::vector<std::uint32_t>{1, 2})) << "the later write ran before the earlier one";
  EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(64, 2));
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

TEST_F(Leases, OrderPolicyHoldsUnderDeviceDelay) {
  Env e = env(ConflictPolicy::order);
  View x = allocate(e.a, DType::u32, 256);
  View pad = allocate(e.a, DType::u32, 4);
  settle();
  // Stream a is slow: its fill of x starts ~40 ms of device time from now and
  // stays running for another 40 ms. Stream b has no delay.
  sim().set_stream_delay(e.a.native(), std::chrono::milliseconds(40));
  (void)memset_bytes(e.a, pad, 0);
  LaunchFuture slow = fill(e.a, x, 1);
  sim().set_stream_delay(e.a.native(), std::chrono::microseconds(0));
  LaunchFuture fast = fill(e.b, x, 2);  // unordered, it would run first and be overwritten
  ASSERT_TRUE(fast.wait(kPatience));
  ASSERT_TRUE(slow.wait(kPatience));
  EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(256, 2));
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

// view.hpp allocate(): "usable there at once; work on other streams is
// ordered after the allocation automatically" — under either policy, so a
// fresh buffer used on another stream is ordered, never rejected.
TEST_F(Leases, AFreshAllocationIsOrderedNotRejectedOnOtherStreams) {
  Env e = env(ConflictPolicy::reject);
  View other = allocate(e.a, DType::u32, 4);
  settle();
  Gate& g = gate();
  Journal j;
  LaunchFuture first = fill(e.a, other, 1, {.gate = &g, .journal = &j, .tag = 1});
  ASSERT_TRUE(g.wait_arrivals(1));
  View x = allocate(e.a, DType::u32, 16);  // its allocation is queued behind the gate on a
  LaunchFuture use = fill(e.b, x, 2, {.journal = &j, .tag = 2});
  g.open();
  ASSERT_TRUE(use.wait(kPatience));
  ASSERT_TRUE(first.wait(kPatience));
  EXPECT_EQ(j.tags(), (std::vector<std::uint32_t>{1, 2})) << "used on stream b before its allocation on a";
  EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(16, 2));
}

TEST_F(Leases, RejectLeavesNoTraceAndARetryAfterRetirementSucceeds) {
  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 32);
  View y = allocate(e.a, DType::u32, 32);
  settle();
  Gate& g = gate();
  LaunchFuture held = fill(e.a, x, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  const RuntimeStats before = e.ctx.stats();
  const std::uint64_t sim_live = sim().live_allocations();
  for (int i = 0; i < 3; ++i) EXPECT_THROW((void)fill(e.b, x, 2), ConflictError);
  EXPECT_THROW((void)memset_bytes(e.b, x, 0), ConflictError);
  EXPECT_THROW((void)copy(e.b, y, x), ConflictError);  // y (read) is fine, x (write) is not
  EXPECT_THROW((void)sum(e.b, y, x), ConflictError);
  EXPECT_THROW((void)upload_u32(e.b, x, iota_u32(32)), ConflictError);
  const RuntimeStats after = e.ctx.stats();
  EXPECT_EQ(after.submissions_total, before.submissions_total);
  EXPECT_EQ(after.pending_submissions, before.pending_submissions);
  EXPECT_EQ(after.active_leases, before.active_leases);
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  EXPECT_EQ(after.allocations_total, before.allocations_total);
  EXPECT_EQ(after.frees_total, before.frees_total);
  EXPECT_EQ(after.retired_submissions, before.retired_submissions);
  EXPECT_EQ(sim().live_allocations(), sim_live);
  EXPECT_EQ(x.view_count(), 1U);
  EXPECT_EQ(y.view_count(), 1U);
  // y took no lease from the rejected copy: a write to it on stream b is fine.
  LaunchFuture wy = fill(e.b, y, 4);
  EXPECT_TRUE(wy.wait(kPatience));
  g.open();
  ASSERT_TRUE(held.wait(kPatience));
  LaunchFuture retry = fill(e.b, x, 2);
  ASSERT_TRUE(retry.wait(kPatience));
  EXPECT_EQ(retry.status(), SubmissionStatus::retired);
  EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(32, 2));
}

TEST_F(Leases, HostTransfersAreSubmissionsWithTheSameRules) {
  {
    Env e = env(ConflictPolicy::reject);
    View x = allocate(e.a, DType::u32, 16);
    settle();
    Gate& g = gate();
    LaunchFuture reader = hold(e.a, x, Access::read, &g);
    ASSERT_TRUE(g.wait_arrivals(1));
    const std::uint64_t submitted = e.ctx.stats().submissions_total;
    EXPECT_THROW((void)upload_u32(e.b, x, iota_u32(16)), ConflictError);  // upload writes
    Download d = download(e.b, x);                                        // download reads: fine
    EXPECT_TRUE(d.future().wait(kPatience));
    EXPECT_EQ(e.ctx.stats().submissions_total, submitted + 1) << "a download is a submission";
    g.open();
    ASSERT_TRUE(reader.wait(kPatience));

    Gate& g2 = gate();
    LaunchFuture writer = fill(e.a, x, 9, {.gate = &g2});
    ASSERT_TRUE(g2.wait_arrivals(1));
    EXPECT_THROW((void)download(e.b, x), ConflictError);
    EXPECT_THROW((void)read_back(e.b, x), ConflictError);
    g2.open();
    ASSERT_TRUE(writer.wait(kPatience));
  }
  {
    Env e = env(ConflictPolicy::order);
    View y = allocate(e.a, DType::u32, 16);
    settle();
    Gate& g = gate();
    LaunchFuture writer = fill(e.a, y, 42, {.gate = &g});
    ASSERT_TRUE(g.wait_arrivals(1));
    Download d = download(e.b, y);  // ordered after the held write
    g.open();
    const std::vector<std::byte> got = d.get(kPatience);
    std::vector<std::uint32_t> values(16);
    ASSERT_EQ(got.size(), 64U);
    std::memcpy(values.data(), got.data(), 64);
    EXPECT_EQ(values, std::vector<std::uint32_t>(16, 42));
    // An upload on a and a read on b: the read sees the upload.
    sim().set_stream_delay(e.a.native(), std::chrono::milliseconds(20));
    (void)upload_u32(e.a, y, iota_u32(16, 7));
    sim().set_stream_delay(e.a.native(), std::chrono::microseconds(0));
    EXPECT_EQ(read_u32(e.b, y), iota_u32(16, 7));
  }
}

TEST_F(Leases, ALaunchMixingContextsFailsBeforeAnyLeaseIsTaken) {
  Env e1 = env(ConflictPolicy::reject);
  Env e2 = env(ConflictPolicy::reject);
  View x1 = allocate(e1.a, DType::u32, 16);
  View x2 = allocate(e2.a, DType::u32, 16);
  View bytes2 = allocate(e2.a, DType::u8, 4);
  settle();
  const RuntimeStats b1 = e1.ctx.stats();
  const RuntimeStats b2 = e2.ctx.stats();
  const std::string msg = error_message_of([&] {
    (void)hold_many(e1.a, {{&x1, Access::write}, {&x2, Access::read}}, nullptr);
  });
  EXPECT_NE(msg.find("device_mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allocation " + std::to_string(x2.allocation_id())), std::string::npos) << msg;
  EXPECT_NE(msg.find("stream " + std::to_string(e1.a.id())), std::string::npos) << msg;
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch,
                      hold_many(e1.a, {{&x2, Access::read}, {&x1, Access::write}}, nullptr));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, copy(e1.a, x1, x2));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, copy(e1.a, x2, x1));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, upload_u32(e1.a, x2, iota_u32(16)));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, download(e1.a, x2));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, memset_bytes(e1.a, x2, 0));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, std::move(bytes2).to_bool_checked(e1.a));
  EXPECT_TRUE(bytes2.valid());
  for (const auto& [before, ctx] : {std::pair{b1, e1.ctx}, std::pair{b2, e2.ctx}}) {
    const RuntimeStats now = ctx.stats();
    EXPECT_EQ(now.active_leases, before.active_leases);
    EXPECT_EQ(now.submissions_total, before.submissions_total);
  }
  // x1 was not leased: another stream of its own context may write it at once.
  LaunchFuture w = fill(e1.b, x1, 3);
  EXPECT_TRUE(w.wait(kPatience));
  // A view of another platform's device is refused the same way.
  Platform other = Platform::sim();
  Context oc = Context::create(other.device(0));
  Stream os = Stream::create(oc);
  View ox = allocate(os, DType::u32, 16);
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, fill(e1.a, ox, 1));
  EXPECT_TRUE(oc.wait_for_retirement(kPatience));
}

TEST_F(Leases, TwoArgumentsOfOneLaunchMayAliasEachOther) {
  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 16);
  settle();
  View lo = x.slice(0, 8);
  View ax = x.atomic();
  LaunchFuture f = hold_many(
      e.a, {{&x, Access::write}, {&lo, Access::read}, {&x, Access::read_write}, {&ax, Access::read}},
      nullptr);
  ASSERT_TRUE(f.wait(kPatience));
  EXPECT_EQ(f.status(), SubmissionStatus::retired);
  // A copy between overlapping ranges of one allocation in one submission.
  (void)upload_u32(e.a, x, iota_u32(16));
  (void)copy(e.a, x.slice(0, 8), x.slice(4, 8));
  EXPECT_EQ(read_u32(e.a, x),
            (std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15}));
}

TEST_F(Leases, LeasesAreReleasedAtRetirement) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 16);
  View out = allocate(e.a, DType::u64, 1);
  settle();
  EXPECT_EQ(e.ctx.stats().active_leases, 0U);
  Gate& g = gate();
  LaunchFuture held = hold(e.a, x, Access::write, &g);
  LaunchFuture s = sum(e.a, x, out);
  ASSERT_TRUE(g.wait_arrivals(1));
  RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.active_leases, 3U);
  EXPECT_EQ(st.pending_submissions, 2U);
  g.open();
  settle();
  st = e.ctx.stats();
  EXPECT_EQ(st.active_leases, 0U);
  EXPECT_EQ(st.pending_submissions, 0U);
  EXPECT_EQ(held.status(), SubmissionStatus::retired);
  EXPECT_EQ(s.status(), SubmissionStatus::retired);
  // Released means gone from the tracker, too: the reject policy now admits a write elsewhere.
  Env r = env(ConflictPolicy::reject);
  View z = allocate(r.a, DType::u32, 16);
  settle();
  Gate& g2 = gate();
  LaunchFuture hz = hold(r.a, z, Access::write, &g2);
  ASSERT_TRUE(g2.wait_arrivals(1));
  EXPECT_THROW((void)fill(r.b, z, 1), ConflictError);
  g2.open();
  ASSERT_TRUE(hz.wait(kPatience));
  EXPECT_NO_THROW((void)fill(r.b, z, 1));
}

// A lease holds at most 65,535 of its allocation's lease counts (16 bits
// beside its range: src/runtime/src/submission.hpp). Counts pile up on one
// lease when the newest launch on a buffer covers many older entries of its
// stream at once: here a graph replay's 256 leases on disjoint elements,
// each replay swept up by the second of two whole-buffer launches after it,
// 260 times behind one held launch: 66,560 counts in all (a replay takes
// 256 in one submission, which keeps the test short). Past the limit
// compaction leaves an entry in the tracker instead of handing its counts
// on; a count lost there would keep the buffer alive for good (or free it
// early).
TEST_F(Leases, CountsPastWhatOneLeaseHoldsAreNeitherLostNorFreedEarly) {
  ContextOptions o;
  o.max_queued_per_stream = 0;  // 780 submissions behind a held kernel: past the bound they would wait for it
  Env e = env_with(o);
  settle();
  const std::uint64_t live_before = e.ctx.stats().live_allocations;
  constexpr std::uint32_t kElements = 256, kBursts = 260;
  {
    View x = allocate(e.a, DType::u32, kElements);
    (void)fill(e.a, x, 0);
    const Graph each = Graph::capture(e.a, [&] {
      for (std::uint32_t i = 0; i < kElements; ++i) (void)add(e.a, x.slice(i, 1), 1);
    });
    Gate& g = gate();
    LaunchFuture first = hold(e.a, x, Access::read_write, &g);
    for (std::uint32_t b = 0; b < kBursts; ++b) {
      (void)each.replay(e.a);
      (void)add(e.a, x, 1);
      (void)add(e.a, x, 1);
    }
    EXPECT_GE(e.ctx.stats().active_leases, std::uint64_t{kBursts} * (kElements + 2));
    g.open();
    EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(kElements, 3 * kBursts));
  }
  settle();
  EXPECT_EQ(e.ctx.stats().live_allocations, live_before) << "not freed: a lease count was lost";
  EXPECT_EQ(e.ctx.stats().active_leases, 0U);
}

// A submission's leases are published before its work is enqueued (so the
// trackers are not locked across the driver calls). One whose launch the
// driver then refuses withdraws them: a racing submitter on another stream
// waiting on them moves on, nothing stays held, and nothing deadlocks.
TEST_F(Leases, AFailedLaunchWithdrawsItsLeasesWhileAnotherStreamRacesForThem) {
  for (ConflictPolicy policy : {ConflictPolicy::order, ConflictPolicy::reject}) {
    SCOPED_TRACE(policy == ConflictPolicy::reject ? "reject" : "order");
    Env e = env(policy);
    View x = allocate(e.a, DType::u32, 16);
    (void)fill(e.a, x, 0);
    settle();
    constexpr int kRounds = 2000;
    std::atomic<int> failed{0}, driver_errors{0}, conflicts{0}, added{0};
    const bool done = returns_within(
        [&] {
          std::thread refused([&] {
            BufferParam<std::uint32_t> p = x.buffer_param<std::uint32_t>();
            std::uint64_t zero = 0;
            void* params[] = {&p, &zero, &zero};
            const ViewAccess acc[] = {{&x, Access::write}};
            const driver::LaunchDims zero_grid{.grid = {0, 1, 1}, .block = {}};
            for (int i = 0; i < kRounds; ++i) {
              try {
                (void)launch(e.a, kHold, zero_grid, params, acc);
              } catch (const ConflictError&) {
                conflicts.fetch_add(1);
              } catch (const Error& err) {
                if (err.code() == ErrorCode::driver) driver_errors.fetch_add(1);
                failed.fetch_add(1);
              }
            }
          });
          for (int i = 0; i < kRounds; ++i) {
            try {
              (void)add(e.b, x, 1);
              added.fetch_add(1);
            } catch (const ConflictError&) {
              conflicts.fetch_add(1);
            }
          }
          refused.join();
        },
        kPatience, [] {});
    ASSERT_TRUE(done) << "a submitter waiting on a refused launch's leases never moved on";
    EXPECT_EQ(failed.load(), driver_errors.load()) << "a refused launch failed with another error";
    if (policy == ConflictPolicy::order) {
      EXPECT_EQ(conflicts.load(), 0);
    }
    settle();
    const RuntimeStats st = e.ctx.stats();
    EXPECT_EQ(st.active_leases, 0U);
    EXPECT_EQ(st.pending_submissions, 0U);
    EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(16, static_cast<std::uint32_t>(added.load())));
    // Nothing of the refused launches is left in the tracker: a write elsewhere is admitted.
    EXPECT_NO_THROW((void)fill(e.b, x, 1));
  }
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

}  // namespace
}  // namespace tandem::test
