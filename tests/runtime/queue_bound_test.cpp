// SPDX-License-Identifier: Apache-2.0
// ContextOptions::max_queued_per_stream: a submission waits while the
// device runs more than the cap behind its stream, and only then: not for
// retirement's lag, and never with the bound off.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

#include "runtime/runtime_test_support.hpp"

namespace tandem::test {
namespace {

class QueueBound : public RuntimeFixture {
 protected:
  // One event per submission: no quiet-tail marker (retirement's, after a
  // covered tail, on a slow machine) takes a seq between two of the test's.
  Env capped(std::uint32_t cap) {
    ContextOptions o;
    o.share_completion_events = false;
    o.max_queued_per_stream = cap;
    return env_with(o);
  }
  // A fill of `v` on `s`, running and held at `g` until g.open().
  LaunchFuture hold(StreamRef s, const View& v, Gate& g) {
    LaunchFuture f = fill(s, v, 0, {.gate = &g});
    EXPECT_TRUE(g.wait_arrivals(1));
    return f;
  }
  struct Burst {
    std::uint64_t waits;  // queue_waits once the burst waited (or gave up)
    int before_open;      // additions queued before the held fill was let go
  };
  // kBurst additions to one buffer on `s` behind a held fill, from another
  // thread: how many queued before one waited for the device. The buffer
  // ends up holding kBurst everywhere, checked.
  Burst burst_behind_a_hold(const Env& e, StreamRef s);
};

// Sets an environment variable for a scope (Context::create reads
// TANDEM_MAX_QUEUED at each call).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

constexpr std::uint32_t kCap = 32;
constexpr int kBurst = 100;

QueueBound::Burst QueueBound::burst_behind_a_hold(const Env& e, StreamRef s) {
  View x = allocate(s, DType::u32, 64);
  Gate& g = gate();
  LaunchFuture first = hold(s, x, g);
  std::atomic<int> done{0};
  std::thread burst([&] {
    for (int i = 0; i < kBurst; ++i) {
      (void)add(s, x, 1);
      done.fetch_add(1);
    }
  });
  // The burst's thread counts a wait before it blocks in it; a burst that
  // never waits is done well before the patience runs out.
  const auto give_up = std::chrono::steady_clock::now() + kPatience;
  while (e.ctx.stats().queue_waits == 0 && done.load() < kBurst && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  const Burst out{e.ctx.stats().queue_waits, done.load()};
  g.open();
  burst.join();
  EXPECT_TRUE(first.wait(kPatience));
  settle();
  EXPECT_EQ(read_u32(s, x), std::vector<std::uint32_t>(64, kBurst));
  EXPECT_EQ(e.ctx.stats().quarantined_submissions, 0U);
  return out;
}

TEST_F(QueueBound, ASubmissionWaitsWhileTheDeviceRunsMoreThanTheCapBehindItsStream) {
  Env e = capped(kCap);
  const Burst b = burst_behind_a_hold(e, e.a);
  EXPECT_EQ(b.waits, 1U) << "no submission waited behind the held fill";
  // The hold and kCap additions queue (kCap + 1, more than the cap); the next one looks and waits.
  EXPECT_EQ(b.before_open, static_cast<int>(kCap)) << "additions queued before the wait";
}

TEST_F(QueueBound, AStreamsOwnBoundReplacesTheContexts) {
  Env e = capped(0);
  e.a.set_max_queued(kCap);
  EXPECT_EQ(e.a.max_queued(), kCap);
  EXPECT_EQ(e.b.max_queued(), 0U) << "another stream of the context changed";
  const Burst b = burst_behind_a_hold(e, e.a);
  EXPECT_EQ(b.waits, 1U) << "the stream's own bound did not hold its burst";
  EXPECT_EQ(b.before_open, static_cast<int>(kCap));
}

TEST_F(QueueBound, AStreamWithItsBoundOffNeverWaitsInABoundedContext) {
  Env e = capped(kCap);
  e.a.set_max_queued(0);
  EXPECT_EQ(e.b.max_queued(), kCap);
  const Burst b = burst_behind_a_hold(e, e.a);
  EXPECT_EQ(b.waits, 0U);
  EXPECT_EQ(b.before_open, kBurst) << "a burst on an unbounded stream waited behind a held fill";
  // The context's other streams keep theirs.
  const Burst other = burst_behind_a_hold(e, e.b);
  EXPECT_EQ(other.waits, 1U);
  EXPECT_EQ(other.before_open, static_cast<int>(kCap));
}

TEST_F(QueueBound, ZeroLeavesTheQueueToTheDriver) {
  Env e = capped(0);
  View x = allocate(e.a, DType::u32, 64);
  Gate& g = gate();
  LaunchFuture first = hold(e.a, x, g);
  auto burst = std::async(std::launch::async, [&] {
    for (int i = 0; i < kBurst; ++i) (void)add(e.a, x, 1);
  });
  const bool finished = burst.wait_for(kPatience) == std::future_status::ready;
  g.open();
  burst.get();
  EXPECT_TRUE(finished) << "a burst behind a held fill waited with the bound off";
  EXPECT_EQ(e.ctx.stats().queue_waits, 0U);
  settle();
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(64, kBurst));
}

// Retirement parked: nothing settles, so tandem's pending queue grows far
// past the cap, but the device has done each submission before the next:
// the probes say so, and no submission waits (a wait here would be for
// retirement, parked: the test would hang).
TEST_F(QueueBound, RetirementsLagAloneIsNoReasonToWait) {
  Env e = capped(8);
  View x = allocate(e.a, DType::u32, 64);
  (void)fill(e.a, x, 0);
  settle();
  Gate& parked = gate();
  park_retirement(e, parked);
  for (int i = 0; i < kBurst; ++i) {
    (void)add(e.a, x, 1);
    e.a.synchronize();  // the device, not retirement
  }
  EXPECT_GE(e.ctx.stats().pending_submissions, static_cast<std::uint64_t>(kBurst));
  EXPECT_EQ(e.ctx.stats().queue_waits, 0U);
  parked.open();
  settle();
  EXPECT_EQ(read_u32(e.a, x), std::vector<std::uint32_t>(64, kBurst));
}

TEST_F(QueueBound, ABadEnvironmentValueIsTheCreatorsError) {
  ScopedEnv bad("TANDEM_MAX_QUEUED", "lots");
  try {
    (void)Context::create(device());
    FAIL() << "Context::create accepted TANDEM_MAX_QUEUED=lots";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(err.what()).find("TANDEM_MAX_QUEUED='lots'"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace tandem::test
