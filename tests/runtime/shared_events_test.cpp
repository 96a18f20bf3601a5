// SPDX-License-Identifier: Apache-2.0
// ContextOptions::share_completion_events: while a stream has work pending,
// submissions share the next completion event recorded after them. Nothing
// may be released, ordered or reported differently from one event per
// submission, except that an unknown completion covers the whole run.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "runtime/runtime_test_support.hpp"
#include "tandem/driver/forwarding_backend.hpp"

namespace tandem::test {
namespace {

class SharedEvents : public RuntimeFixture {
 protected:
  // A fill of `v` on `s`, running and held at `g` until g.open(): the stream
  // has work pending, so what follows on it shares events.
  LaunchFuture hold(StreamRef s, const View& v, Gate& g) {
    LaunchFuture f = fill(s, v, 0, {.gate = &g});
    EXPECT_TRUE(g.wait_arrivals(1));
    return f;
  }
  struct BurstLeftIdle;
  BurstLeftIdle burst_left_idle();
  struct CountedSharing;
  CountedSharing counted_sharing();
};

// Every submission of a burst behind a held one retires once the device is
// done, including the last ones, which no submission recorded an event
// after: retirement records one when the stream goes quiet.
TEST_F(SharedEvents, EveryCoveredSubmissionRetiresOnceTheStreamIsQuiet) {
  Env e = shared_env();
  View x = allocate(e.a, DType::u32, 64);
  Gate& g = gate();
  LaunchFuture first = hold(e.a, x, g);
  std::vector<LaunchFuture> burst;
  for (std::uint32_t i = 0; i < 21; ++i) burst.push_back(add(e.a, x, 1));  // 21: not a multiple of the run
  for (const LaunchFuture& f : burst)
    EXPECT_EQ(f.status(), SubmissionStatus::pending) << "retired before the gate";
  g.open();
  for (const LaunchFuture& f : burst) {
    ASSERT_TRUE(f.wait(kPatience));
    EXPECT_EQ(f.status(), SubmissionStatus::retired);
  }
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(64, 21));
  EXPECT_EQ(e.ctx.stats().pending_submissions, 0U);
}

// Nobody waits here: retirement alone notices that the covered tail of the
// burst went quiet and records a marker after it. At least one submission
// of the burst is covered; at most all of them (a fresh stream has no free
// event, and covers rather than make one: the next test).
TEST_F(SharedEvents, AQuietCoveredTailGetsAMarkerFromRetirement) {
  Env e = shared_env();
  View x = allocate(e.a, DType::u32, 64);
  settle();
  const RuntimeStats before = e.ctx.stats();
  Gate& g = gate();
  LaunchFuture first = hold(e.a, x, g);
  for (std::uint32_t i = 0; i < 21; ++i) (void)add(e.a, x, 1);  // futures dropped: no waiter
  g.open();
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().pending_submissions == 0; }));
  const RuntimeStats after = e.ctx.stats();
  // At most: a slow machine may pause long enough inside the burst for
  // retirement to cover part of it early, which starts a new run.
  const std::uint64_t shared = after.shared_event_submissions - before.shared_event_submissions;
  EXPECT_GT(shared, 0U);
  EXPECT_LE(shared, 21U);
  EXPECT_GE(after.quiet_tail_markers - before.quiet_tail_markers, 1U);
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(64, 21));
}

// Counts event creations, and those made on one thread (the submitter's;
// forwards everything to the simulator).
class CountingEventCreates : public driver::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  driver::Result event_create(driver::ContextHandle c, driver::EventHandle& out) noexcept override {
    creates.fetch_add(1);
    if (std::this_thread::get_id() == watched.load()) on_watched.fetch_add(1);
    return ForwardingBackend::event_create(c, out);
  }
  std::atomic<int> creates{0};
  std::atomic<std::thread::id> watched{};
  std::atomic<int> on_watched{0};
};

// A context sharing completion events over an event-counting simulator, a
// stream of it, and a buffer allocated on that stream.
struct SharedEvents::CountedSharing {
  CountingEventCreates* counter;
  Platform p;
  Context ctx;
  Stream s;
  View x;
};

SharedEvents::CountedSharing SharedEvents::counted_sharing() {
  auto owned = std::make_unique<CountingEventCreates>(std::make_unique<driver::SimBackend>(config()));
  CountingEventCreates* counter = owned.get();
  Platform p = Platform::with_backend(std::move(owned));
  ContextOptions o;
  o.share_completion_events = true;
  o.max_queued_per_stream =
      0;  // the bursts queue 1,300 behind a held fill: past the bound they would wait for it
  Context ctx = Context::create(p.device(0), o);
  Stream s = Stream::create(ctx);
  View x = allocate(s, DType::u32, 64);
  return CountedSharing{counter, std::move(p), std::move(ctx), std::move(s), std::move(x)};
}

// Making an event stalls the submitting thread for milliseconds while
// other threads launch (cuEventCreate waits for the driver's lock in write
// mode). A sharing stream whose free events are all in flight covers every
// submission until retirement hands one back, however long the burst,
// rather than make one on the submit path (TANDEM_DRY_SHARE_RUN=64, the
// rule before, made one per 64 here); the events of settled submissions
// come back for the next burst. Creations by the retirement thread (a
// marker after a tail that went quiet on a slow machine) do not count.
TEST_F(SharedEvents, AStreamWithNoFreeEventCoversSubmissionsRatherThanMakeOne) {
  auto [counter_of, p, ctx, s, x] = counted_sharing();
  CountingEventCreates& counter = *counter_of;
  // Past the stream's free events (64 made up front, one per run of 8:
  // 512 submissions) by more than ten runs of 64.
  constexpr int kBurst = 1300;
  counter.watched.store(std::this_thread::get_id());
  for (int round = 1; round <= 2; ++round) {
    Gate& g = gate();
    LaunchFuture first = hold(s, x, g);
    const int before = counter.on_watched.load();
    const RuntimeStats stats_before = ctx.stats();
    for (int i = 0; i < kBurst; ++i) (void)add(s, x, 1);
    EXPECT_EQ(counter.on_watched.load() - before, 0) << "events made on the submit path in burst " << round;
    EXPECT_GE(ctx.stats().shared_event_submissions - stats_before.shared_event_submissions,
              static_cast<std::uint64_t>(kBurst - kBurst / 8));
    g.open();
    ASSERT_TRUE(p.wait_for_retirement(kPatience));
    EXPECT_EQ(first.status(), SubmissionStatus::retired);
  }
  EXPECT_EQ(read_u32(s, x), std::vector<std::uint32_t>(64, kBurst));  // each round's hold fills 0
  const RuntimeStats after = ctx.stats();
  EXPECT_EQ(after.pending_submissions, 0U);
  EXPECT_EQ(after.active_leases, 0U);
  EXPECT_EQ(after.quarantined_submissions, 0U);
}

// A stream whose events are all in flight gets its quiet tail's marker
// with one of them once it is back, not with an event made for it: making
// one takes the driver's lock for writing and stalls the retirement thread,
// and every stream's retirement with it, while other threads launch or
// synchronize (151.7 ms on the H200 inside an 8-thread loop). A waiter
// on the burst's last submission makes retirement want the marker at once
// (without it, only after the stream was quiet for a while): before this
// rule it made an event for it while the hold kept every event in flight.
// (A marker with a free event, in a pause inside the burst on a slow
// machine, is allowed.)
TEST_F(SharedEvents, AQuietDryTailWaitsForAnEventInFlightRatherThanMakeOne) {
  auto [counter_of, p, ctx, s, x] = counted_sharing();
  CountingEventCreates& counter = *counter_of;
  constexpr int kBurst = 1300;  // past the stream's free events: the tail is covered, none is free
  counter.watched.store(std::this_thread::get_id());
  Gate& g = gate();
  LaunchFuture first = hold(s, x, g);
  const int before = counter.creates.load() - counter.on_watched.load();
  const std::uint64_t markers_before = ctx.stats().quiet_tail_markers;
  for (int i = 0; i < kBurst - 1; ++i) (void)add(s, x, 1);
  const LaunchFuture last = add(s, x, 1);
  // From here this thread only waits, and a waiter may sweep in the
  // retirement thread's place: every creation from now on is retirement's.
  counter.watched.store(std::thread::id{});
  EXPECT_FALSE(last.wait(std::chrono::milliseconds(200))) << "retired behind the held fill";
  EXPECT_EQ(counter.creates.load() - counter.on_watched.load() - before, 0)
      << "events made by retirement while the stream's events were in flight";
  g.open();
  ASSERT_TRUE(last.wait(kPatience));
  EXPECT_EQ(last.status(), SubmissionStatus::retired);
  ASSERT_TRUE(p.wait_for_retirement(kPatience));
  EXPECT_EQ(counter.creates.load() - counter.on_watched.load() - before, 0)
      << "events made by retirement for the marker";
  EXPECT_GE(ctx.stats().quiet_tail_markers, markers_before + 1);
  EXPECT_EQ(read_u32(s, x), std::vector<std::uint32_t>(64, kBurst));
  EXPECT_EQ(ctx.stats().quarantined_submissions, 0U);
}

// Counts event creations and destructions (forwards everything).
class CountingEvents : public CountingEventCreates {
 public:
  using CountingEventCreates::CountingEventCreates;
  driver::Result event_destroy(driver::ContextHandle c, driver::EventHandle e) noexcept override {
    destroys.fetch_add(1);
    return ForwardingBackend::event_destroy(c, e);
  }
  std::atomic<int> destroys{0};
};

// A context that records one event per submission, with event counting,
// and a stream that has just retired a burst of kBurst additions queued
// behind a held fill of `x` (the hold's future in `first`): the burst made
// an event for each, now idle.
struct SharedEvents::BurstLeftIdle {
  static constexpr int kBurst = 300;
  CountingEvents* counter;
  Platform p;
  Context ctx;
  Stream s;
  View x;
  LaunchFuture first;
};

SharedEvents::BurstLeftIdle SharedEvents::burst_left_idle() {
  auto owned = std::make_unique<CountingEvents>(std::make_unique<driver::SimBackend>(config()));
  CountingEvents* counter = owned.get();
  Platform p = Platform::with_backend(std::move(owned));
  ContextOptions o;
  o.share_completion_events = false;  // one event per submission: the burst makes many
  o.max_queued_per_stream = 0;        // 300 behind a held fill: past the bound they would wait for it
  Context ctx = Context::create(p.device(0), o);
  Stream s = Stream::create(ctx);
  View x = allocate(s, DType::u32, 64);
  Gate& g = gate();
  LaunchFuture first = hold(s, x, g);
  for (int i = 0; i < BurstLeftIdle::kBurst; ++i) (void)add(s, x, 1);
  EXPECT_GE(counter->creates.load(), BurstLeftIdle::kBurst)
      << "the burst was meant to make an event per submission";
  g.open();
  EXPECT_TRUE(p.wait_for_retirement(kPatience));
  return BurstLeftIdle{counter, std::move(p), std::move(ctx), std::move(s), std::move(x), std::move(first)};
}

// TANDEM_MAX_FREE_EVENTS=N (read once per process; CTest runs this test
// with N = 8, it skips elsewhere): a stream keeps at most N idle events.
// A burst made hundreds; once they are idle, the retirement thread destroys
// all but N of them, none still in use (the simulator would refuse a
// record or query of a destroyed one), and the stream works on.
TEST_F(SharedEvents, IdleEventsPastTheCapAreDestroyedByRetirement) {
  const char* cap_text = std::getenv("TANDEM_MAX_FREE_EVENTS");
  if (cap_text == nullptr || std::atoi(cap_text) <= 0)
    GTEST_SKIP() << "SKIPPED: TANDEM_MAX_FREE_EVENTS is not set";
  const int cap = std::atoi(cap_text);
  BurstLeftIdle b = burst_left_idle();
  const auto& [counter_ptr, p, ctx, s, x, first] = b;
  CountingEvents& counter = *counter_ptr;
  constexpr int kBurst = BurstLeftIdle::kBurst;
  // Idle records come back to the stream's pool at its next submissions;
  // their events past the cap then go to retirement.
  std::uint32_t added = kBurst;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  do {
    (void)add(s, x, 1);
    ++added;
    ASSERT_TRUE(p.wait_for_retirement(kPatience));
  } while (counter.creates.load() - counter.destroys.load() > cap + 2 &&
           std::chrono::steady_clock::now() < deadline);
  // The cap, plus the events of the newest submission and of a marker.
  EXPECT_LE(counter.creates.load() - counter.destroys.load(), cap + 2);
  EXPECT_GE(counter.destroys.load(), kBurst - cap - 2);
  EXPECT_EQ(read_u32(s, x), std::vector<std::uint32_t>(64, added));
  EXPECT_EQ(ctx.stats().quarantined_submissions, 0U);
}

// Context::trim destroys the events a burst left idle on a stream (the
// pool above keeps them all while no cap is set), and the stream works on,
// making what it needs again.
TEST_F(SharedEvents, TrimDestroysTheEventsABurstLeftIdle) {
  BurstLeftIdle b = burst_left_idle();
  ASSERT_GE(b.counter->creates.load() - b.counter->destroys.load(), BurstLeftIdle::kBurst)
      << "the burst's events were meant to stay";
  b.first = LaunchFuture();  // its record (and event) back to the pool too
  b.ctx.trim();
  EXPECT_EQ(b.counter->creates.load() - b.counter->destroys.load(), 0);
  (void)add(b.s, b.x, 1);
  EXPECT_EQ(read_u32(b.s, b.x), std::vector<std::uint32_t>(64, BurstLeftIdle::kBurst + 1));
  EXPECT_EQ(b.ctx.stats().quarantined_submissions, 0U);
}

// A long queue of mostly covered submissions, retired a part at a time
// while more arrive: retirement's cursor finds each newest own event
// without losing or double-counting any submission.
TEST_F(SharedEvents, ADeepQueueOfCoveredSubmissionsRetiresCompletely) {
  Env e = shared_env();
  View x = allocate(e.a, DType::u32, 16);
  settle();
  const RuntimeStats before = e.ctx.stats();
  Gate& g = gate();
  LaunchFuture first = hold(e.a, x, g);
  constexpr std::uint32_t kQueued = 500;
  for (std::uint32_t i = 0; i < kQueued; ++i) {
    if (i == kQueued / 2) g.open();  // the first half retires while the second is queued
    (void)add(e.a, x, 1);
  }
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
  const RuntimeStats after = e.ctx.stats();
  EXPECT_EQ(after.retired_submissions - before.retired_submissions, kQueued + 1);
  EXPECT_EQ(after.pending_submissions, 0U);
  EXPECT_EQ(after.active_leases, 0U);
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(16, kQueued));
}

// A conflicting write on another stream waits for a covered submission: on
// the event after it (a marker, if none was recorded yet). The simulator
// reports an unordered overlap as a violation; the contents say who ran last.
TEST_F(SharedEvents, AConflictWithACoveredSubmissionIsOrderedAfterIt) {
  Env e = shared_env();
  View held = allocate(e.a, DType::u32, 16);
  View x = allocate(e.a, DType::u32, 64);
  settle();
  Gate& g = gate();
  LaunchFuture first = hold(e.a, held, g);
  LaunchFuture covered = fill(e.a, x, 7);  // the stream has work pending: it shares the next event
  LaunchFuture later = fill(e.b, x, 9);    // must run after `covered`
  EXPECT_EQ(later.status(), SubmissionStatus::pending);
  g.open();
  ASSERT_TRUE(later.wait(kPatience));
  EXPECT_EQ(read_u32(e.b, x), std::vector<std::uint32_t>(64, 9));
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

// Under reject, a covered submission's lease rejects like any other.
TEST_F(SharedEvents, ACoveredSubmissionsLeaseRejectsAConflictUntilItRetires) {
  Env e = shared_env(ConflictPolicy::reject);
  View held = allocate(e.a, DType::u32, 16);
  View x = allocate(e.a, DType::u32, 64);
  settle();
  Gate& g = gate();
  LaunchFuture first = hold(e.a, held, g);
  LaunchFuture covered = fill(e.a, x, 7);
  EXPECT_TANDEM_ERROR(ErrorCode::conflict, fill(e.b, x, 9));
  g.open();
  ASSERT_TRUE(covered.wait(kPatience));
  EXPECT_NO_THROW((void)fill(e.b, x, 9));
}

// The memory a covered submission uses is freed only after the event that
// proves it done completed.
TEST_F(SharedEvents, MemoryOfACoveredSubmissionIsFreedOnlyAfterItCompletes) {
  Env e = shared_env();
  View held = allocate(e.a, DType::u32, 16);
  settle();
  const RuntimeStats before = e.ctx.stats();
  std::optional<View> x = allocate(e.a, DType::u32, 64);
  Gate& g = gate();
  LaunchFuture first = hold(e.a, held, g);
  (void)add(e.a, *x, 1);  // covered; future dropped
  x.reset();
  EXPECT_EQ(e.ctx.stats().frees_total, before.frees_total) << "freed under pending work";
  g.open();
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
  EXPECT_EQ(e.ctx.stats().frees_total, before.frees_total + 1);
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

// An unknown completion on a shared event cannot be pinned on one of the
// submissions it covers: all of them are quarantined (their memory kept),
// none is reported retired.
TEST_F(SharedEvents, AFaultOnASharedEventQuarantinesEverySubmissionItCovers) {
  IntentionalLeakScope leak;  // quarantined memory is retained forever, by contract
  Env e = shared_env();
  View held = allocate(e.a, DType::u32, 16);
  View y = allocate(e.a, DType::u32, 16);
  View z = allocate(e.a, DType::u32, 16);
  settle();
  Gate& g = gate();
  LaunchFuture first = hold(e.a, held, g);
  sim().arm_completion_unknown(e.a.native());  // the next event recorded on a: the one after fy and fz
  LaunchFuture fy = fill(e.a, y, 1);
  LaunchFuture fz = fill(e.a, z, 2);
  g.open();
  ASSERT_TRUE(fy.wait(kPatience));
  ASSERT_TRUE(fz.wait(kPatience));
  EXPECT_EQ(first.status(), SubmissionStatus::retired);
  EXPECT_EQ(fy.status(), SubmissionStatus::quarantined);
  EXPECT_EQ(fz.status(), SubmissionStatus::quarantined);
  EXPECT_EQ(e.ctx.stats().quarantined_allocations, 2U);
}

// Off: each submission records its own event, and a fault stays with it.
TEST_F(SharedEvents, WithSharingOffAFaultStaysWithItsSubmission) {
  IntentionalLeakScope leak;
  Env e = exact_env();
  View held = allocate(e.a, DType::u32, 16);
  View y = allocate(e.a, DType::u32, 16);
  View z = allocate(e.a, DType::u32, 16);
  settle();
  Gate& g = gate();
  LaunchFuture first = hold(e.a, held, g);
  sim().arm_completion_unknown(e.a.native());
  LaunchFuture fy = fill(e.a, y, 1);  // its own event: the faulted one
  LaunchFuture fz = fill(e.a, z, 2);
  g.open();
  ASSERT_TRUE(fz.wait(kPatience));
  ASSERT_TRUE(fy.wait(kPatience));
  EXPECT_EQ(fy.status(), SubmissionStatus::quarantined);
  EXPECT_EQ(fz.status(), SubmissionStatus::retired);
  EXPECT_EQ(e.ctx.stats().quarantined_allocations, 1U);
}

// Stream::isolate_next_submission: with sharing on, the next submission
// records its own event and what came before it is proven apart (a marker
// after a covered run), so a fault armed for the next event recorded stays
// with that one submission, as with sharing off.
TEST_F(SharedEvents, AnIsolatedSubmissionKeepsAFaultToItselfWithSharingOn) {
  IntentionalLeakScope leak;
  Env e = shared_env();
  View held = allocate(e.a, DType::u32, 16);
  View w = allocate(e.a, DType::u32, 16);
  View y = allocate(e.a, DType::u32, 16);
  View z = allocate(e.a, DType::u32, 16);
  settle();
  Gate& g = gate();
  LaunchFuture first = hold(e.a, held, g);
  LaunchFuture fw = fill(e.a, w, 0);  // covered: the next event proves it
  e.a.isolate_next_submission();
  sim().arm_completion_unknown(e.a.native());
  LaunchFuture fy = fill(e.a, y, 1);  // its own event: the faulted one
  LaunchFuture fz = fill(e.a, z, 2);
  g.open();
  ASSERT_TRUE(fz.wait(kPatience));
  ASSERT_TRUE(fy.wait(kPatience));
  ASSERT_TRUE(fw.wait(kPatience));
  EXPECT_EQ(first.status(), SubmissionStatus::retired);
  EXPECT_EQ(fw.status(), SubmissionStatus::retired);
  EXPECT_EQ(fy.status(), SubmissionStatus::quarantined);
  EXPECT_EQ(fz.status(), SubmissionStatus::retired);
  EXPECT_EQ(e.ctx.stats().quarantined_allocations, 1U);
}

}  // namespace
}  // namespace tandem::test
