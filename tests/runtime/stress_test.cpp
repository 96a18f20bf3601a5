// SPDX-License-Identifier: Apache-2.0
// Stress tests of spec/runtime.md §5 and §4/§6 under concurrency:
//
//  1. Uniqueness racing retirement: many threads, each launching short work
//     on buffers it owns (futures dropped at once, so retirement releases
//     leases concurrently with the checks), check is_unique() where the
//     answer is known: a buffer whose only other holders are in-flight
//     leases must be unique; one with a live slice must not be. Any false
//     alias or false unique is a failure (the upstream bug: 3,308 of them).
//  2. Concurrent submits from several threads to shared streams and shared
//     allocations under the order policy: every increment is serialized, so
//     the final counts are exact, and the sim records no violation.
//  3. Same-stream reuse across threads: threads sharing streams allocate,
//     fill and drop buffers of one size, and drop each other's, so an
//     allocation takes blocks dropped by other threads while more are
//     pushed: every buffer reads back its own fill, every allocation is
//     freed, and the sim records no violation.
//
// Scale: TANDEM_STRESS_SCALE (a positive factor, default 1; 0.5 by default
// under ThreadSanitizer) scales the number of submissions. The number of
// uniqueness checks stays >= 1,000,000 at any scale (checks are cheap).
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>

#include "runtime/runtime_test_support.hpp"

namespace tandem::test {
namespace {

double stress_scale() {
  if (const char* s = std::getenv("TANDEM_STRESS_SCALE")) {
    const double v = std::strtod(s, nullptr);
    if (v > 0) return v;
  }
#if defined(TANDEM_TEST_TSAN)
  return 0.5;
#else
  return 1.0;
#endif
}

std::uint64_t scaled(std::uint64_t n) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(n) * stress_scale()));
}

constexpr int kThreads = 8;
constexpr std::uint64_t kMinUniquenessChecks = 1'000'000;

class Stress : public RuntimeFixture {};

TEST_F(Stress, UniquenessChecksNeverFailWhileRetirementReleasesLeases) {
  Context ctx = Context::create(device());
  const std::uint64_t iterations = scaled(3000);
  constexpr int kBuffers = 4;
  const std::uint64_t checks_per_iteration = std::max<std::uint64_t>(
      kBuffers * 2, (kMinUniquenessChecks + kThreads * iterations - 1) / (kThreads * iterations));
  std::atomic<std::uint64_t> false_alias{0}, false_unique{0}, checks{0}, transfer_failures{0}, submitted{0};
  std::atomic<std::uint64_t> wrong_data{0};

  auto worker = [&](int t) {
    Stream s = Stream::create(ctx);
    Stream s2 = Stream::create(ctx);
    std::vector<View> bufs;
    for (int i = 0; i < kBuffers; ++i) bufs.push_back(allocate(s, DType::u32, 16));
    for (View& b : bufs) (void)memset_bytes(s, b, 0);
    std::uint64_t local_checks = 0, alias = 0, unique = 0, launches = 0;
    for (std::uint64_t it = 0; it < iterations; ++it) {
      // Short work on every buffer; the futures are dropped at once.
      for (View& b : bufs) {
        (void)add(s, b, 1);
        ++launches;
      }
      if (it % 8 == 0) {  // a reader on another stream: ordered after the adds
        (void)hold(s2, bufs[it % kBuffers], Access::read, nullptr);
        ++launches;
      }
      if (it % 16 == 0) {  // a buffer that dies with work in flight
        View tmp = allocate(s2, DType::u32, 8);
        (void)fill(s2, tmp, static_cast<std::uint32_t>(it));
        launches += 2;
      }
      const std::size_t sliced = it % kBuffers;
      std::optional<View> slice = bufs[sliced].slice(it % 16, 1);
      for (std::uint64_t c = 0; c < checks_per_iteration; ++c) {
        const std::size_t j = c % kBuffers;
        const bool expected = j != sliced;
        if (bufs[j].is_unique() != expected) ++(expected ? alias : unique);
        ++local_checks;
      }
      slice.reset();
      // An ownership transfer while completion is pending must succeed.
      if (it % 32 == 0) {
        View& b = bufs[(it / 32) % kBuffers];
        try {
          const std::int64_t shape[] = {4, 4};
          View tensor = std::move(b).to_tensor(shape);
          b = std::move(tensor).into_buffer();
        } catch (const Error&) {
          transfer_failures.fetch_add(1);
          return;  // this worker's buffers are no longer in a known state
        }
      }
    }
    for (View& b : bufs) {
      const std::vector<std::uint32_t> got = read_u32(s, b);
      if (got != std::vector<std::uint32_t>(16, static_cast<std::uint32_t>(iterations)))
        wrong_data.fetch_add(1);
    }
    false_alias.fetch_add(alias);
    false_unique.fetch_add(unique);
    checks.fetch_add(local_checks);
    submitted.fetch_add(launches);
    (void)t;
  };

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  EXPECT_EQ(false_alias.load(), 0U) << "a unique buffer looked aliased while retirement ran";
  EXPECT_EQ(false_unique.load(), 0U) << "an aliased buffer looked unique while retirement ran";
  EXPECT_EQ(transfer_failures.load(), 0U) << "to_tensor/into_buffer refused while only leases were pending";
  EXPECT_EQ(wrong_data.load(), 0U);
  EXPECT_GE(checks.load(), kMinUniquenessChecks);
  EXPECT_GE(ctx.stats().uniqueness_checks, checks.load());
  ASSERT_TRUE(ctx.wait_for_retirement(kPatience));
  const RuntimeStats st = ctx.stats();
  EXPECT_EQ(st.live_allocations, 0U);
  EXPECT_EQ(st.active_leases, 0U);
  EXPECT_EQ(st.pending_submissions, 0U);
  EXPECT_EQ(st.quarantined_allocations, 0U);
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
  std::printf("[ stress   ] %d threads, %llu submissions, %llu uniqueness checks in %.2f s (scale %.2f)\n",
              kThreads, static_cast<unsigned long long>(submitted.load()),
              static_cast<unsigned long long>(checks.load()), secs, stress_scale());
}

TEST_F(Stress, ConcurrentSubmitsToSharedStreamsAndAllocationsAreOrdered) {
  // Shared completion events on: a conflict with a covered owner waits on
  // the next event after it, or on a marker queued for the purpose.
  ContextOptions o;
  o.conflict_policy = ConflictPolicy::order;
  o.share_completion_events = true;
  Context ctx = Context::create(device(), o);
  constexpr int kStreams = 3;
  constexpr int kShared = 2;
  constexpr std::uint32_t kWords = 64;
  std::vector<Stream> streams;
  for (int i = 0; i < kStreams; ++i) streams.push_back(Stream::create(ctx));
  std::vector<View> shared;
  for (int i = 0; i < kShared; ++i) {
    shared.push_back(allocate(streams[static_cast<std::size_t>(i)], DType::u32, kWords));
    (void)memset_bytes(streams[static_cast<std::size_t>(i)], shared.back(), 0);
  }
  const std::uint64_t per_thread = scaled(500);
  std::atomic<std::uint64_t> adds[kShared] = {0, 0};
  std::atomic<std::uint64_t> bad_sums{0};

  auto worker = [&](int t) {
    std::mt19937 rng(static_cast<unsigned>(t) * 7919U + 1);
    View out = allocate(streams[static_cast<std::size_t>(t % kStreams)], DType::u64, 1);
    std::uint64_t local_adds[kShared] = {0, 0};
    for (std::uint64_t m = 0; m < per_thread; ++m) {
      const Stream& s = streams[rng() % kStreams];
      const std::size_t b = rng() % kShared;
      const unsigned what = rng() % 8;
      if (what < 6) {
        (void)add(s, shared[b], 1);
        ++local_adds[b];
      } else if (what == 6) {
        (void)sum(s, shared[b], out);  // reads the shared buffer, writes our own
      } else {
        View part = shared[b].slice(rng() % kWords, 1);  // a slice written on its own
        (void)add(s, part, 0);
      }
    }
    // Our last sum must see a multiple-of-kWords total (whole increments only).
    const std::vector<std::byte> raw = read_back(streams[0], out, kPatience);
    std::uint64_t total = 0;
    std::memcpy(&total, raw.data(), sizeof total);
    if (total % kWords != 0 && total != 0xCDCDCDCDCDCDCDCDULL) bad_sums.fetch_add(1);
    for (int i = 0; i < kShared; ++i) adds[i].fetch_add(local_adds[i]);
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();

  for (int i = 0; i < kShared; ++i) {
    const std::vector<std::uint32_t> got = read_u32(streams[0], shared[static_cast<std::size_t>(i)]);
    EXPECT_EQ(got, std::vector<std::uint32_t>(kWords, static_cast<std::uint32_t>(adds[i].load())))
        << "shared buffer " << i << ": increments from different streams were not serialized";
    EXPECT_TRUE(shared[static_cast<std::size_t>(i)].is_unique());
  }
  EXPECT_EQ(bad_sums.load(), 0U) << "a reader saw a half-applied increment";
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
  shared.clear();
  ASSERT_TRUE(ctx.wait_for_retirement(kPatience));
  const RuntimeStats st = ctx.stats();
  EXPECT_EQ(st.live_allocations, 0U);
  EXPECT_EQ(st.active_leases, 0U);
  EXPECT_EQ(st.pending_submissions, 0U);
  std::printf("[ stress   ] %d threads on %d shared streams: %llu + %llu ordered increments\n", kThreads,
              kStreams, static_cast<unsigned long long>(adds[0].load()),
              static_cast<unsigned long long>(adds[1].load()));
}

TEST_F(Stress, BlocksDroppedOnSharedStreamsAndTakenBackAcrossThreadsKeepEachBuffersOwnContents) {
  ContextOptions o;
  o.share_completion_events = true;
  Context ctx = Context::create(device(), o);
  constexpr int kStreams = 4;  // two threads on each
  constexpr std::uint32_t kWords = 64;
  std::vector<Stream> streams;
  for (int i = 0; i < kStreams; ++i) streams.push_back(Stream::create(ctx));
  const std::uint64_t per_thread = scaled(1500);
  std::mutex box_mu;
  std::vector<View> box;  // buffers handed to another thread to drop
  std::atomic<std::uint64_t> wrong_contents{0}, reads{0};

  auto worker = [&](int t) {
    const Stream& s = streams[static_cast<std::size_t>(t % kStreams)];
    for (std::uint64_t m = 0; m < per_thread; ++m) {
      const auto tag = static_cast<std::uint32_t>(t * 1'000'000 + m);
      View v = allocate(s, DType::u32, kWords);
      (void)fill(s, v, tag);
      if (m % 16 == 0) {
        reads.fetch_add(1);
        if (read_u32(s, v) != std::vector<std::uint32_t>(kWords, tag)) wrong_contents.fetch_add(1);
      }
      if (m % 3 == 0) {
        std::optional<View> theirs;
        {
          std::lock_guard lock(box_mu);
          box.push_back(std::move(v));
          if (box.size() > 4) {
            theirs = std::move(box.front());
            box.erase(box.begin());
          }
        }
        theirs.reset();  // dropped here, leased on its owner's stream
      }
    }
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  box.clear();
  ASSERT_TRUE(ctx.wait_for_retirement(kPatience));

  EXPECT_EQ(wrong_contents.load(), 0U) << "of " << reads.load() << " read backs";
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
  const RuntimeStats st = ctx.stats();
  EXPECT_EQ(st.live_allocations, 0U);
  EXPECT_EQ(st.frees_total, st.allocations_total) << "an allocation was lost or freed twice";
  EXPECT_EQ(st.held_bytes, 0U);
  EXPECT_GT(st.same_stream_reuses, 0U) << "no allocation took a dropped block: the test tests nothing";
  std::printf("[ stress   ] %d threads on %d shared streams: %llu allocations, %llu took a dropped block\n",
              kThreads, kStreams, static_cast<unsigned long long>(st.allocations_total),
              static_cast<unsigned long long>(st.same_stream_reuses));
}

}  // namespace
}  // namespace tandem::test
