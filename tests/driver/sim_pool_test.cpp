// SPDX-License-Identifier: Apache-2.0
// Unit tests of the simulated device's stream-ordered pool (sim_memory.hpp):
// a free queued on a stream lends its bytes to that stream's next pool
// allocations at once, nothing else may use them before the free ran, and a
// free placed too early is still caught, also one on a stream of its own
// behind waits on the users' streams (the runtime's release stream). Also:
// failures the sim injects are marked Result::injected. The fixture is in
// sim_test_support.hpp.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "driver/sim_test_support.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {
namespace {

using namespace std::chrono_literals;
using namespace sim_test;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kCapacity = 64 * kMiB;

class SimPool : public SimBackendTest {
 protected:
  void SetUp() override {
    SimConfig cfg;
    cfg.memory_bytes = kCapacity;
    make_backend(cfg);
    ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, pool_)));
  }

  Result pool_alloc(StreamHandle s, std::size_t bytes, DevicePtr& out) {
    return sim_->mem_alloc_async(ctx_, pool_, bytes, s, out);
  }
  DevicePtr pool_alloc(StreamHandle s, std::size_t bytes) {
    DevicePtr p = 0;
    EXPECT_TRUE(Ok(*sim_, pool_alloc(s, bytes, p)));
    return p;
  }
  void free_async(DevicePtr p, StreamHandle s) { ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx_, p, s))); }
  std::size_t free_bytes() {
    std::size_t free = 0;
    std::size_t total = 0;
    EXPECT_TRUE(Ok(*sim_, sim_->mem_info(ctx_, free, total)));
    EXPECT_EQ(total, kCapacity);
    return free;
  }
  // Holds `s` until holder_.gate opens: whatever is queued behind it waits.
  void hold(StreamHandle s) { ASSERT_TRUE(Ok(*sim_, launch(kGate, s, {&holder_arg_}))); }

  PoolHandle pool_;
};

// --- reuse on the freeing stream ----------------------------------------------------

TEST_F(SimPool, AFreeQueuedOnAStreamIsReusableAtOnceOnThatStream) {
  const StreamHandle s = stream();
  const DevicePtr a = pool_alloc(s, 40 * kMiB);
  EXPECT_EQ(free_bytes(), 24 * kMiB);
  sim_->set_stream_delay(s, 2ms);
  hold(s);  // the free below cannot run before the test says so
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, a, 1, 40 * kMiB, s)));
  free_async(a, s);

  DevicePtr b = 0;
  ASSERT_TRUE(Ok(*sim_, pool_alloc(s, 40 * kMiB, b)))
      << "only 24 MiB are free, but a's 40 are queued to be freed on s";
  EXPECT_NE(b, a);  // a fresh address: a stays live and checked until its free runs
  EXPECT_EQ(sim_->stream_query(ctx_, s).status, Status::not_ready);
  EXPECT_EQ(free_bytes(), 24 * kMiB);  // b took a's bytes, none of the device's
  EXPECT_EQ(sim_->live_allocations(), 2U);

  holder_.gate.open();
  sync(s);
  EXPECT_EQ(free_bytes(), 24 * kMiB) << "a's free must not give back the bytes b took over";
  EXPECT_EQ(sim_->live_allocations(), 1U);
  EXPECT_EQ(sim_->live_bytes(), 40 * kMiB);
  std::vector<std::uint8_t> head(64, 0);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, head.data(), b, head.size(), s)));
  sync(s);
  EXPECT_NE(head[0], 1) << "b has host bytes of its own, not a's";

  free_async(b, s);
  sync(s);
  EXPECT_EQ(free_bytes(), kCapacity);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimPool, AnAllocationMayTakeFreeBytesAndQueuedFreesTogether) {
  const StreamHandle s = stream();
  const DevicePtr a = pool_alloc(s, 40 * kMiB);
  hold(s);
  free_async(a, s);
  const DevicePtr b = pool_alloc(s, 50 * kMiB);  // 40 of a's, 10 of the device's
  EXPECT_EQ(free_bytes(), 14 * kMiB);
  DevicePtr c = 0;
  EXPECT_EQ(pool_alloc(s, 15 * kMiB, c).status, Status::out_of_memory) << "a's bytes are lent only once";

  holder_.gate.open();
  sync(s);
  EXPECT_EQ(free_bytes(), 14 * kMiB);
  free_async(b, s);
  sync(s);
  EXPECT_EQ(free_bytes(), kCapacity);
}

TEST_F(SimPool, AFreeQueuedOnAStreamIsNotReusableOnAnotherStreamUntilItRan) {
  const StreamHandle s = stream();
  const StreamHandle s2 = stream();
  const DevicePtr a = pool_alloc(s, 40 * kMiB);
  hold(s);
  free_async(a, s);
  const DevicePtr c = pool_alloc(s, 30 * kMiB);  // 30 of a's 40 on s
  EXPECT_EQ(free_bytes(), 24 * kMiB);

  // 24 MiB free and 10 of a's left: enough on s, not elsewhere.
  DevicePtr p = 0;
  const Result other_stream = pool_alloc(s2, 30 * kMiB, p);
  EXPECT_EQ(other_stream.status, Status::out_of_memory);
  EXPECT_FALSE(other_stream.injected);
  EXPECT_EQ(sim_->describe(other_stream),
            "sim: mem_alloc_async: out_of_memory (asked 31457280 bytes, 25165824 free on device 0)");
  const Result not_pooled = sim_->mem_alloc(ctx_, 30 * kMiB, p);
  EXPECT_EQ(not_pooled.status, Status::out_of_memory);
  EXPECT_FALSE(not_pooled.injected);
  const Result too_much = pool_alloc(s, 35 * kMiB, p);
  EXPECT_EQ(sim_->describe(too_much),
            "sim: mem_alloc_async: out_of_memory (asked 36700160 bytes, 25165824 free on device 0 and "
            "10485760 reusable from frees queued on stream #1)");

  holder_.gate.open();
  sync(s);
  EXPECT_EQ(free_bytes(), 34 * kMiB);  // a gave back the 10 MiB it had not lent
  const DevicePtr d = pool_alloc(s2, 30 * kMiB);
  EXPECT_EQ(free_bytes(), 4 * kMiB);

  free_async(c, s);
  free_async(d, s2);
  sync(s);
  sync(s2);
  EXPECT_EQ(free_bytes(), kCapacity);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimPool, AQueuedFreeLendsOnlyToItsOwnPool) {
  const StreamHandle s = stream();
  PoolHandle other;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx_, other)));
  const DevicePtr a = pool_alloc(s, 40 * kMiB);
  hold(s);
  free_async(a, s);

  DevicePtr p = 0;
  EXPECT_EQ(sim_->mem_alloc_async(ctx_, other, 40 * kMiB, s, p).status, Status::out_of_memory)
      << "a CUDA pool reuses its own blocks only";
  const DevicePtr b = pool_alloc(s, 40 * kMiB);

  holder_.gate.open();
  free_async(b, s);
  sync(s);
  EXPECT_EQ(free_bytes(), kCapacity);
  ASSERT_TRUE(Ok(*sim_, sim_->pool_destroy(ctx_, other)));
}

TEST_F(SimPool, AFreeThatCouldNotBeQueuedLendsNothing) {
  const StreamHandle s = stream();
  const DevicePtr a = pool_alloc(s, 40 * kMiB);
  ASSERT_TRUE(Ok(*sim_, sim_->capture_begin(ctx_, s)));
  EXPECT_EQ(sim_->mem_free_async(ctx_, a, s).status, Status::not_permitted);  // withdrawn
  GraphHandle g;
  ASSERT_TRUE(Ok(*sim_, sim_->capture_end(ctx_, s, g)));
  ASSERT_TRUE(Ok(*sim_, sim_->graph_destroy(ctx_, g)));

  DevicePtr p = 0;
  EXPECT_EQ(pool_alloc(s, 40 * kMiB, p).status, Status::out_of_memory);
  hold(s);
  free_async(a, s);  // accepted this time
  const DevicePtr b = pool_alloc(s, 40 * kMiB);

  holder_.gate.open();
  free_async(b, s);
  sync(s);
  EXPECT_EQ(free_bytes(), kCapacity);
}

TEST_F(SimPool, FreesQueuedOnADestroyedStreamStillRunAndGiveBackWhatTheyDidNotLend) {
  const StreamHandle s = stream();
  const EventHandle after_free = event();
  const DevicePtr a = pool_alloc(s, 40 * kMiB);
  hold(s);
  free_async(a, s);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, after_free, s)));
  const DevicePtr b = pool_alloc(s, 30 * kMiB);
  ASSERT_TRUE(Ok(*sim_, sim_->stream_destroy(ctx_, s)));
  EXPECT_EQ(free_bytes(), 24 * kMiB);

  holder_.gate.open();
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx_, after_free)));
  EXPECT_EQ(free_bytes(), 34 * kMiB);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, b)));
  EXPECT_EQ(free_bytes(), kCapacity);
}

TEST_F(SimPool, StreamsCyclingAtCapacityNeverRunOutWhileTheirFreesAreQueued) {
  // Three streams hold 20 MiB each (60 of 64): each frees its block and
  // allocates the next before the free ran, which fits only by reusing it.
  constexpr int kStreams = 3;
  constexpr int kRounds = 100;
  std::vector<StreamHandle> streams;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(stream());
    sim_->set_stream_delay(streams.back(), 100us);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (const StreamHandle s : streams) {
    threads.emplace_back([&, s] {
      DevicePtr block = 0;
      for (int round = 0; round < kRounds; ++round) {
        if (block != 0 && !sim_->mem_free_async(ctx_, block, s).ok()) {
          failures.fetch_add(1);
        }
        block = 0;
        if (!pool_alloc(s, 20 * kMiB, block).ok() || !sim_->memset8_async(ctx_, block, 7, 64, s).ok()) {
          failures.fetch_add(1);
        }
      }
      if (block != 0 && !sim_->mem_free_async(ctx_, block, s).ok()) {
        failures.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  for (const StreamHandle s : streams) {
    sync(s);
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(sim_->live_allocations(), 0U);
  EXPECT_EQ(free_bytes(), kCapacity);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

// --- a free placed too early is still caught -------------------------------------------

TEST_F(SimPool, AFreeRacingAnotherStreamsUseIsAUseAfterFreeEvenWhenItsBytesAreReused) {
  const StreamHandle s0 = stream();  // stream #1
  const StreamHandle s1 = stream();  // stream #2
  const DevicePtr a = pool_alloc(s0, 40 * kMiB);
  DeviceBuffer buf{a, 16};
  std::int32_t seven = 7;
  ASSERT_TRUE(Ok(*sim_, launch(kGateFill, s1, {&arg_, &buf, &seven}, {{a, 40 * kMiB, AccessMode::write}})));
  ASSERT_TRUE(probe_.gate.wait_arrivals(1));  // s1's kernel is using a

  hold(s0);
  free_async(a, s0);  // nothing orders it after s1's kernel: a runtime bug
  const DevicePtr b = pool_alloc(s0, 40 * kMiB);
  holder_.gate.open();
  sync(s0);  // the free ran while the kernel still used a
  probe_.gate.open();
  sync(s1);

  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 1U);
  EXPECT_EQ(sim_->violation_count(), 1U);  // not also an unordered_conflict
  EXPECT_NE(uaf[0].detail.find("mem_free_async on stream #1 frees"), std::string::npos) << uaf[0].detail;
  EXPECT_NE(uaf[0].detail.find("launch 'gate_fill' on stream #2"), std::string::npos) << uaf[0].detail;

  free_async(b, s0);
  sync(s0);
  EXPECT_EQ(free_bytes(), kCapacity);
}

TEST_F(SimPool, AnOperationOnAFreedBlockIsAUseAfterFreeEvenWhenANewBlockTookItsBytes) {
  const StreamHandle s = stream();
  const DevicePtr a = pool_alloc(s, 40 * kMiB);
  hold(s);
  free_async(a, s);
  const DevicePtr b = pool_alloc(s, 40 * kMiB);
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, b, 0x22, 64, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->memset8_async(ctx_, a, 0x11, 64, s)));  // after a's free, in stream order
  std::vector<std::uint8_t> head(64, 0);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx_, head.data(), b, head.size(), s)));
  holder_.gate.open();
  sync(s);

  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 1U);
  EXPECT_EQ(sim_->violation_count(), 1U);
  EXPECT_NE(uaf[0].detail.find("memset8 on stream #1 writes"), std::string::npos) << uaf[0].detail;
  EXPECT_NE(uaf[0].detail.find("not inside a live allocation"), std::string::npos) << uaf[0].detail;
  EXPECT_EQ(head, std::vector<std::uint8_t>(64, 0x22)) << "the late memset of a must not land in b";

  free_async(b, s);
  sync(s);
  EXPECT_EQ(free_bytes(), kCapacity);
}

// --- a release stream: a free behind waits on the readers' streams ------------------
// (the runtime's MultiStreamRelease::release_stream, docs/runtime.md)

// Two streams read block a with gated kernels (probe_ and holder_ open
// them); the events recorded after each reader are what a release stream
// waits on before it frees a.
struct TwoReaders {
  StreamHandle s1, s2;
  EventHandle after1, after2;
};

class SimReleaseStream : public SimPool {
 protected:
  TwoReaders read_on_two_streams(DevicePtr a) {
    TwoReaders r{stream(), stream(), event(), event()};
    const Access read{a, 40 * kMiB, AccessMode::read};
    EXPECT_TRUE(Ok(*sim_, launch(kGate, r.s1, {&arg_}, {read})));         // opened by probe_.gate
    EXPECT_TRUE(Ok(*sim_, launch(kGate, r.s2, {&holder_arg_}, {read})));  // opened by holder_.gate
    EXPECT_TRUE(Ok(*sim_, sim_->event_record(ctx_, r.after1, r.s1)));
    EXPECT_TRUE(Ok(*sim_, sim_->event_record(ctx_, r.after2, r.s2)));
    EXPECT_TRUE(probe_.gate.wait_arrivals(1));
    EXPECT_TRUE(holder_.gate.wait_arrivals(1));
    return r;
  }
};

TEST_F(SimReleaseStream, AFreeBehindWaitsOnBothReadersRunsOnlyAfterBothAndOnlyThenLendsItsBytes) {
  const StreamHandle birth = stream();
  const DevicePtr a = pool_alloc(birth, 40 * kMiB);
  sync(birth);
  const TwoReaders r = read_on_two_streams(a);
  const StreamHandle release = stream();
  const EventHandle freed = event();
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, release, r.after1)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, release, r.after2)));
  free_async(a, release);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, freed, release)));

  probe_.gate.open();
  sync(r.s1);  // one reader done: the free still waits for the other
  EXPECT_EQ(sim_->event_query(ctx_, freed).status, Status::not_ready);
  EXPECT_EQ(sim_->live_allocations(), 1U);
  DevicePtr p = 0;
  EXPECT_EQ(pool_alloc(r.s1, 40 * kMiB, p).status, Status::out_of_memory)
      << "a's bytes are lent to the freeing stream only, and only once its free ran elsewhere";

  holder_.gate.open();
  sync(release);
  EXPECT_EQ(sim_->live_allocations(), 0U);
  const DevicePtr b = pool_alloc(r.s1, 40 * kMiB);  // the free ran: the bytes are the device's again
  free_async(b, r.s1);
  sync(r.s1);
  sync(r.s2);
  EXPECT_EQ(free_bytes(), kCapacity);
  EXPECT_EQ(sim_->violation_count(), 0U);
}

TEST_F(SimReleaseStream, AFreeThatSkipsOneReadersWaitIsAUseAfterFree) {
  const StreamHandle birth = stream();
  const DevicePtr a = pool_alloc(birth, 40 * kMiB);
  sync(birth);
  const TwoReaders r = read_on_two_streams(a);
  const StreamHandle release = stream();  // stream #4
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx_, release, r.after1)));
  free_async(a, release);  // nothing orders it after s2's reader: a runtime bug

  probe_.gate.open();
  sync(release);  // the free ran while s2's kernel still read a
  holder_.gate.open();
  sync(r.s2);
  const auto uaf = violations_of(Violation::Kind::use_after_free);
  ASSERT_EQ(uaf.size(), 1U);
  EXPECT_EQ(sim_->violation_count(), 1U);
  EXPECT_NE(uaf[0].detail.find("mem_free_async on stream #4 frees"), std::string::npos) << uaf[0].detail;
  EXPECT_NE(uaf[0].detail.find("launch 'gate' on stream #3"), std::string::npos) << uaf[0].detail;
  sync(r.s1);
  EXPECT_EQ(free_bytes(), kCapacity);
}

// --- injected failures ---------------------------------------------------------------

using SimFaults = SimPool;

TEST_F(SimFaults, AnInjectedOutOfMemoryIsMarkedInjectedAndARealOneIsNot) {
  const StreamHandle s = stream();
  DevicePtr p = 0;
  sim_->fail_nth_alloc(1);
  const Result injected_async = pool_alloc(s, 64, p);
  EXPECT_EQ(injected_async.status, Status::out_of_memory);
  EXPECT_TRUE(injected_async.injected);
  sim_->fail_nth_alloc(1);
  const Result injected_sync = sim_->mem_alloc(ctx_, 64, p);
  EXPECT_EQ(injected_sync.status, Status::out_of_memory);
  EXPECT_TRUE(injected_sync.injected);

  const Result real_async = pool_alloc(s, kCapacity + 1, p);
  EXPECT_EQ(real_async.status, Status::out_of_memory);
  EXPECT_FALSE(real_async.injected);
  const Result real_sync = sim_->mem_alloc(ctx_, kCapacity + 1, p);
  EXPECT_EQ(real_sync.status, Status::out_of_memory);
  EXPECT_FALSE(real_sync.injected);

  const Result ok = pool_alloc(s, 64, p);
  ASSERT_TRUE(Ok(*sim_, ok));
  EXPECT_FALSE(ok.injected);
  free_async(p, s);
  sync(s);
}

TEST_F(SimFaults, AnInjectedCompletionUnknownIsMarkedInjected) {
  const StreamHandle s = stream();
  const EventHandle faulted = event();
  const EventHandle later = event();
  sim_->arm_completion_unknown(s);
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, faulted, s)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, later, s)));
  sync(s);

  const Result pending = sim_->event_query(ctx_, later);  // inherits the fault pending on s
  EXPECT_EQ(pending.status, Status::completion_unknown);
  EXPECT_TRUE(pending.injected);
  const Result first = sim_->event_synchronize(ctx_, faulted);
  EXPECT_EQ(first.status, Status::completion_unknown);
  EXPECT_TRUE(first.injected);
}

}  // namespace
}  // namespace tandem::driver
