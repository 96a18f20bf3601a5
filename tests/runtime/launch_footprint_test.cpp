// SPDX-License-Identifier: Apache-2.0
// The launch path's footprint (bench/README.md, "cache lines per launch"): on
// the GPU a tracked launch costs what it fetches after the driver's work
// evicted it, so what every launch reads sits together, and what a backend
// ignores is not built.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "allocation_state.hpp"
#include "context_state.hpp"
#include "runtime_test_support.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/driver/forwarding_backend.hpp"

namespace tandem::test {
namespace {

// Whether [field, field + size) lies within the first 64 bytes of `base`
// (two cache lines at most, one when `base` is aligned).
template <class T, class F>
bool in_first_64_bytes(const T& base, const F& field) {
  const auto* b = reinterpret_cast<const char*>(&base);
  const auto* f = reinterpret_cast<const char*>(&field);
  return f >= b && f + sizeof(F) <= b + 64;
}

// ... and `base` starts a cache line.
template <class T, class F>
bool in_first_line(const T& base, const F& field) {
  return reinterpret_cast<std::uintptr_t>(&base) % 64 == 0 && in_first_64_bytes(base, field);
}

// The tracker's address only (nothing in it is read): no lock.
bool tracker_in_first_64_bytes(const detail::AllocationState& a) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  return in_first_64_bytes(a, a.leases);
}

// Whether `a`'s tracker holds `l` (under its lock).
bool tracker_holds(detail::AllocationState& a, const detail::Lease& l) {
  base::Guard g(a.tracker_lock);
  return std::find(a.leases.begin(), a.leases.end(), &l) != a.leases.end();
}

class LaunchFootprint : public RuntimeFixture {};

TEST_F(LaunchFootprint, AnAllocationKeepsWhatEveryLaunchReadsInItsFirst64Bytes) {
  Env e = env();
  const View x = allocate(e.a, DType::u32, 64);
  const detail::AllocationState& a = *x.allocation();
  EXPECT_TRUE(in_first_64_bytes(a, a.id));
  EXPECT_TRUE(in_first_64_bytes(a, a.ctx));
  EXPECT_TRUE(in_first_64_bytes(a, a.birth));
  EXPECT_TRUE(in_first_64_bytes(a, a.tracker_lock));
  EXPECT_TRUE(tracker_in_first_64_bytes(a));  // with its two inline entries
}

TEST_F(LaunchFootprint, AContextKeepsWhatEveryLaunchReadsInItsFirstCacheLine) {
  Env e = env();
  const detail::ContextState& c = *e.ctx.state();
  EXPECT_TRUE(in_first_line(c, c.handle));
  EXPECT_TRUE(in_first_line(c, c.policy));
  EXPECT_TRUE(in_first_line(c, c.backend_reads_accesses));
  EXPECT_TRUE(in_first_line(c, c.share_events));
  EXPECT_TRUE(in_first_line(c, c.retire_latency));
  // The reference count, which every handle copy changes, is not there.
  EXPECT_FALSE(in_first_line(c, c.refs));
}

// A record is three cache lines (submission.hpp): its header, then up to
// three leases inline in the other two, none across a line, each naming the
// record and held by its allocation's tracker. With a fourth line a record
// was a 272-byte heap chunk, over issue 23's 256 bytes per in-flight
// submission (bench/README.md, "Measured memory").
TEST_F(LaunchFootprint, ALaunchOfThreeViewsKeepsItsLeasesInTheRecordsLastTwoLines) {
  Env e = env();
  const View x = allocate(e.a, DType::u32, 64);
  const View y = allocate(e.a, DType::u32, 64);
  const View z = allocate(e.a, DType::u32, 64);
  Gate& g = gate();
  LaunchFuture f = hold_many(e.a, {{&x, Access::read}, {&y, Access::write}, {&z, Access::read_write}}, &g);
  {
    detail::StreamState& s = *e.a.state();
    base::Guard lock(s.mu);
    const detail::Submission* r = s.tail.load(std::memory_order_acquire);
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(r) % 64, 0U);
    ASSERT_EQ(r->leases.size(), 3U);
    EXPECT_EQ(r->leases.heap_bytes(), 0U);
    const auto* record = reinterpret_cast<const char*>(r);
    for (const detail::Lease& l : r->leases) {
      const auto at = static_cast<std::size_t>(reinterpret_cast<const char*>(&l) - record);
      EXPECT_GE(at, 64U) << "a lease in the header's line";
      EXPECT_LE(at + sizeof(l), 3U * 64) << "a lease past the third line";
      EXPECT_EQ(at / 64, (at + sizeof(l) - 1) / 64) << "a lease across two lines";
      EXPECT_EQ(l.owner, r);
      EXPECT_TRUE(l.is_tracked());
      EXPECT_TRUE(tracker_holds(*l.alloc, l));
    }
  }
  g.open();
  ASSERT_TRUE(f.wait(kPatience));
}

// A lease keeps its range's start and end in 48 bits each, and its counts
// and mode in the spare bits above: none spills into another, and taking
// the counts (which ends its being tracked) leaves the range.
TEST(LeaseFields, RangeCountsAndModeShareTwoWordsWithoutSpillingIntoEachOther) {
  constexpr std::uint64_t kTop = detail::Lease::kMaxBytes;
  detail::Lease l(nullptr, nullptr, kTop - 7, 7, driver::AccessMode::atomic, detail::Lease::kMaxCounts);
  EXPECT_EQ(l.offset(), kTop - 7);
  EXPECT_EQ(l.end(), kTop);
  EXPECT_EQ(l.bytes(), 7U);
  EXPECT_EQ(l.mode(), driver::AccessMode::atomic);
  EXPECT_EQ(l.counts(), detail::Lease::kMaxCounts);
  EXPECT_TRUE(l.is_tracked());
  EXPECT_EQ(l.take_counts(), detail::Lease::kMaxCounts);
  EXPECT_FALSE(l.is_tracked());
  EXPECT_EQ(l.counts(), 0U);
  EXPECT_EQ(l.offset(), kTop - 7);
  EXPECT_EQ(l.bytes(), 7U);
  const detail::Lease w(nullptr, nullptr, 0, 1, driver::AccessMode::write, 1);
  const detail::Lease r(nullptr, nullptr, 0, 1, driver::AccessMode::read, 1);
  const detail::Lease rw(nullptr, nullptr, 0, 1, driver::AccessMode::read_write, 1);
  EXPECT_TRUE(rw.mode_covers(r));
  EXPECT_TRUE(rw.mode_covers(w));
  EXPECT_FALSE(w.mode_covers(r));
  EXPECT_FALSE(r.mode_covers(w));
  EXPECT_TRUE(l.mode_covers(rw)) << "atomic covers read and write";
  EXPECT_FALSE(rw.mode_covers(l));
}

// The submit path writes a record's references before its driver call. A
// launch the driver refuses sends that record back to the pool, where a
// marker (which has no future) reuses it as it is: it must hold the queue's
// reference only, or retirement hands it to a future that never comes and
// it leaks (LeakSanitizer found it with idle events capped at 4).
TEST_F(LaunchFootprint, ARecordBackFromARefusedLaunchHoldsOnlyTheQueuesReference) {
  Env e = env();
  const View y = allocate(e.a, DType::u32, 64);
  BufferParam<std::uint32_t> p = y.buffer_param<std::uint32_t>();
  std::uint64_t zero = 0;
  void* params[] = {&p, &zero, &zero};
  const ViewAccess acc[] = {{&y, Access::write}};
  const driver::LaunchDims zero_grid{.grid = {0, 1, 1}, .block = {}};
  EXPECT_TANDEM_ERROR(ErrorCode::driver, launch(e.a, kHold, zero_grid, params, acc));
  detail::StreamState& s = *e.a.state();
  base::Guard g(s.mu);
  s.take_back_returned();
  ASSERT_FALSE(s.free_records.empty());
  detail::Submission* top = s.free_records.pop();
  EXPECT_EQ(top->refs.load(), 1U);
  EXPECT_FALSE(top->keep_alive);
  ASSERT_TRUE(s.free_records.push(top));
}

// Retirement hands settled records back as a list of their addresses and
// writes none of their lines: each line it wrote would have to come back
// from its core when the submitter reuses the record (on the H200 a stack
// linked through the records cost the launch that took it back one such
// line a record). Their events reach the free list once each, and a record
// taken from the pool carries none of its old ones.
TEST_F(LaunchFootprint, RetirementGivesRecordsBackWithoutWritingThem) {
  Env e = env();
  detail::StreamState& s = *e.a.state();
  driver::Backend& b = s.ctx->backend();
  {
    // From an empty free list: without the events a new stream makes up
    // front, what comes back is all there is.
    std::vector<driver::EventHandle> idle, surplus;
    {
      base::Guard g(s.mu);
      s.shed_idle(idle, surplus);
    }
    for (const driver::EventHandle x : idle) ASSERT_TRUE(b.event_destroy(s.ctx->handle, x).ok());
  }
  std::array<driver::EventHandle, 3> ev;
  for (auto& x : ev) ASSERT_TRUE(b.event_create(s.ctx->handle, x).ok());
  auto* older = new detail::Submission();
  auto* newer = new detail::Submission();
  older->event = ev[0];
  newer->birth_mark = ev[1];
  newer->event = ev[2];
  using Bytes = std::array<unsigned char, sizeof(detail::Submission)>;
  Bytes older_before, newer_before, older_after, newer_after;
  std::memcpy(older_before.data(), static_cast<const void*>(older), sizeof(detail::Submission));
  std::memcpy(newer_before.data(), static_cast<const void*>(newer), sizeof(detail::Submission));
  detail::Submission* const settled[] = {older, newer};
  s.give_back(settled, 2);
  std::memcpy(older_after.data(), static_cast<const void*>(older), sizeof(detail::Submission));
  std::memcpy(newer_after.data(), static_cast<const void*>(newer), sizeof(detail::Submission));
  EXPECT_EQ(older_before, older_after);
  EXPECT_EQ(newer_before, newer_after);

  base::Guard g(s.mu);
  ASSERT_TRUE(s.has_free_event());  // takes back what retirement gave
  for (const driver::EventHandle x : ev) {
    EXPECT_EQ(std::count(s.free_events.begin(), s.free_events.end(), x), 1) << x.raw;
  }
  detail::Submission* first = s.take_submission();
  detail::Submission* second = s.take_submission();
  EXPECT_EQ(first, newer);  // the newest settled is reused first
  EXPECT_EQ(second, older);
  for (const detail::Submission* r : {first, second}) {
    EXPECT_FALSE(r->event);
    EXPECT_FALSE(r->birth_mark);
  }
  s.recycle(first);
  s.recycle(second);
}

// Passes launches on to the simulator, saying whether it reads their
// declared accesses, and counts the accesses it is handed.
class AccessCountingBackend : public driver::ForwardingBackend {
 public:
  AccessCountingBackend(std::unique_ptr<driver::Backend> inner, bool reads)
      : ForwardingBackend(std::move(inner)), reads_(reads) {}
  [[nodiscard]] bool reads_declared_accesses() const noexcept override { return reads_; }
  driver::Result launch(const driver::LaunchRequest& r) noexcept override {
    launches.fetch_add(1);
    declared.fetch_add(r.access_count);
    if (r.access_count != 0 && r.accesses == nullptr) null_with_count.fetch_add(1);
    return ForwardingBackend::launch(r);
  }
  std::atomic<int> launches{0};
  std::atomic<int> declared{0};
  std::atomic<int> null_with_count{0};

 private:
  const bool reads_;
};

void sum_twice_on(bool reads, int& launches, int& declared, int& null_with_count) {
  auto owned = std::make_unique<AccessCountingBackend>(std::make_unique<driver::SimBackend>(), reads);
  AccessCountingBackend& b = *owned;
  const Platform p = Platform::with_backend(std::move(owned));
  const Context ctx = Context::create(p.device(0));
  const Stream s = Stream::create(ctx);
  const View src = allocate(s, DType::u32, 64);
  const View dst = allocate(s, DType::u32, 64);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(sum(s, src, dst).wait(kPatience));
  EXPECT_TRUE(p.wait_for_retirement(kPatience));
  launches = b.launches.load();
  declared = b.declared.load();
  null_with_count = b.null_with_count.load();
}

TEST(LaunchFootprintAccesses, ABackendThatReadsDeclaredAccessesGetsEveryOne) {
  int launches = 0, declared = 0, null_with_count = 0;
  sum_twice_on(true, launches, declared, null_with_count);
  EXPECT_EQ(launches, 2);
  EXPECT_EQ(declared, 4);  // one read and one write view per launch
  EXPECT_EQ(null_with_count, 0);
}

TEST(LaunchFootprintAccesses, ABackendThatIgnoresThemIsHandedNone) {
  int launches = 0, declared = 0, null_with_count = 0;
  sum_twice_on(false, launches, declared, null_with_count);
  EXPECT_EQ(launches, 2);
  EXPECT_EQ(declared, 0);
  EXPECT_EQ(null_with_count, 0);
}

}  // namespace
}  // namespace tandem::test
