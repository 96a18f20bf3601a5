// SPDX-License-Identifier: Apache-2.0
// spec/runtime.md §9 (failure and bad input) and §6 (device memory
// baseline), plus the allocation counters a report reads.
#include <optional>

#include "runtime/runtime_test_support.hpp"

namespace tandem::test {
namespace {

class Failure : public RuntimeFixture {
 protected:
  driver::SimConfig config() const override {
    driver::SimConfig c;
    c.memory_bytes = std::size_t{1} << 20;  // 1 MiB device
    return c;
  }
};

class Memory : public RuntimeFixture {};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void expect_same_counters(const RuntimeStats& a, const RuntimeStats& b) {
  EXPECT_EQ(a.live_allocations, b.live_allocations);
  EXPECT_EQ(a.live_bytes, b.live_bytes);
  EXPECT_EQ(a.allocations_total, b.allocations_total);
  EXPECT_EQ(a.frees_total, b.frees_total);
  EXPECT_EQ(a.active_leases, b.active_leases);
  EXPECT_EQ(a.pending_submissions, b.pending_submissions);
  EXPECT_EQ(a.submissions_total, b.submissions_total);
  EXPECT_EQ(a.quarantined_allocations, b.quarantined_allocations);
}

TEST_F(Failure, OutOfMemoryNamesTheBytesAskedAndFreeAndLeavesCountersConsistent) {
  Env e = env();
  View held = allocate(e.a, DType::u8, 256 * 1024);
  settle();
  const RuntimeStats before = e.ctx.stats();
  const std::uint64_t sim_live = sim().live_allocations();
  const std::string msg = error_message_of([&] { (void)allocate(e.a, DType::u8, 2 << 20); });
  EXPECT_EQ(error_code_of([&] { (void)allocate(e.a, DType::u8, 2 << 20); }), ErrorCode::out_of_memory);
  EXPECT_TRUE(contains(msg, "out_of_memory")) << msg;
  EXPECT_TRUE(contains(msg, "2097152")) << "bytes asked not named: " << msg;
  EXPECT_TRUE(contains(msg, std::to_string((1 << 20) - 256 * 1024))) << "free bytes not named: " << msg;
  EXPECT_TRUE(contains(msg, "stream " + std::to_string(e.a.id()))) << msg;
  // Overflowing element counts are refused before the driver is asked.
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, allocate(e.a, DType::u64, ~std::uint64_t{0} / 4));
  settle();
  expect_same_counters(e.ctx.stats(), before);
  EXPECT_EQ(sim().live_allocations(), sim_live);
  // Still fully usable.
  View more = allocate(e.a, DType::u32, 128 * 1024);  // 512 KiB
  (void)fill(e.a, more, 5);
  const std::vector<std::uint32_t> got = read_u32(e.b, more.slice(1000, 4));
  EXPECT_EQ(got, std::vector<std::uint32_t>(4, 5));
}

TEST_F(Failure, InjectedAllocationFailureGivesOutOfMemoryAndLeaksNothing) {
  Env e = env();
  settle();
  e.ctx.trim();
  const RuntimeStats before = e.ctx.stats();
  const std::uint64_t sim_base = sim().live_allocations();
  sim().fail_nth_alloc(2);
  std::optional<View> first = allocate(e.a, DType::u32, 64);
  settle();
  const RuntimeStats mid = e.ctx.stats();
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_memory, allocate(e.b, DType::u32, 64));
  expect_same_counters(e.ctx.stats(), mid);
  std::optional<View> third = allocate(e.a, DType::u32, 64);
  EXPECT_EQ(e.ctx.stats().allocations_total, before.allocations_total + 2);
  EXPECT_EQ(sim().live_allocations(), sim_base + 2);
  (void)fill(e.a, *first, 1);
  (void)fill(e.b, *third, 2);
  first.reset();
  third.reset();
  settle();
  e.ctx.trim();
  const RuntimeStats after = e.ctx.stats();
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  EXPECT_EQ(after.frees_total, before.frees_total + 2);
  EXPECT_EQ(after.active_leases, 0U);
  EXPECT_EQ(sim().live_allocations(), sim_base);
}

TEST_F(Failure, ErrorsNameWhatWasAskedWhatWasFoundAndTheIds) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 16);
  const std::string id = "allocation " + std::to_string(x.allocation_id());
  {
    View alias = x.share();
    const std::string m = error_message_of([&] { (void)std::move(x).reinterpret(DType::u8); });
    EXPECT_TRUE(contains(m, id)) << m;
    EXPECT_TRUE(contains(m, "2 views")) << "what was found is not said: " << m;
  }
  {
    const std::string m = error_message_of([&] { (void)x.slice(12, 8); });
    EXPECT_TRUE(contains(m, id)) << m;
    EXPECT_TRUE(contains(m, "12")) << m;
    EXPECT_TRUE(contains(m, "16-element")) << m;
  }
  {
    const std::string m = error_message_of([&] { (void)upload_u32(e.a, x, iota_u32(3)); });
    EXPECT_TRUE(contains(m, "out_of_range")) << m;
    EXPECT_TRUE(contains(m, "12 bytes")) << m;
    EXPECT_TRUE(contains(m, "64-byte")) << m;
    EXPECT_TRUE(contains(m, id)) << m;
  }
  {
    View y = allocate(e.a, DType::u32, 8);
    const std::string m = error_message_of([&] { (void)copy(e.a, x, y); });
    EXPECT_TRUE(contains(m, id)) << m;
    EXPECT_TRUE(contains(m, "allocation " + std::to_string(y.allocation_id()))) << m;
  }
  {
    Env other = env();
    View z = allocate(other.a, DType::u32, 8);
    const std::string m = error_message_of([&] { (void)fill(e.a, z, 1); });
    EXPECT_TRUE(contains(m, "allocation " + std::to_string(z.allocation_id()))) << m;
    EXPECT_TRUE(contains(m, "context " + std::to_string(e.ctx.id()))) << m;
    EXPECT_TRUE(contains(m, "context " + std::to_string(other.ctx.id()))) << m;
  }
  {
    const std::int64_t shape[] = {4, 4};
    View t = std::move(x).to_tensor(shape);
    const DimRange r[] = {{0, 4}, {0, 2}};
    View sub = t.tensor_view(std::nullopt, std::span<const DimRange>(r));
    const std::string m = error_message_of([&] { (void)copy(e.a, sub, sub); });
    EXPECT_TRUE(contains(m, "non_contiguous")) << m;
    EXPECT_TRUE(contains(m, id)) << m;
  }
}

TEST_F(Failure, AMovedFromOrConsumedViewIsAnInvalidHandle) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 16);
  View y = std::move(x);
  settle();
  const RuntimeStats before = e.ctx.stats();
  ASSERT_FALSE(x.valid());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, fill(e.a, x, 1));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle,
                      hold_many(e.a, {{&y, Access::write}, {&x, Access::read}}, nullptr));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, copy(e.a, x, y));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, copy(e.a, y, x));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, upload_u32(e.a, x, {}));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, download(e.a, x));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, memset_bytes(e.a, x, 0));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.slice(0, 1));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.peel(0));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.share());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.atomic());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.is_unique());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.view_count());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.allocation_id());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.device_ptr());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.context());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, std::move(x).split_at(0));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, std::move(x).reinterpret(DType::u8));
  const std::int64_t shape[] = {16};
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, std::move(x).to_tensor(shape));
  auto halves = std::move(y).split_at(8);
  View& lo = halves.first;
  View& hi = halves.second;
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, fill(e.a, y, 1));  // consumed by split_at
  hi = View();
  const std::int64_t eight[] = {8};
  View t = std::move(lo).to_tensor(eight);
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, fill(e.a, lo, 1));  // consumed by to_tensor
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, std::move(lo).into_buffer());
  View back = std::move(t).into_buffer();
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, t.as_buffer());  // consumed by into_buffer
  // A launch on no stream at all.
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, fill(StreamRef(nullptr), back, 1));
  settle();
  const RuntimeStats after = e.ctx.stats();
  EXPECT_EQ(after.active_leases, before.active_leases);
  EXPECT_EQ(after.submissions_total, before.submissions_total);
}

TEST_F(Failure, InvalidArgumentsLeaveTheRuntimeConsistent) {
  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 16);
  View y = allocate(e.a, DType::u32, 8);
  settle();
  const RuntimeStats before = e.ctx.stats();
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, upload_u32(e.a, x, iota_u32(15)));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, copy(e.a, x, y));
  const std::int64_t shape[] = {4, 4};
  View t = std::move(x).to_tensor(shape);
  const DimRange r[] = {{0, 4}, {0, 2}};
  View strided = t.tensor_view(std::nullopt, std::span<const DimRange>(r));
  EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous, memset_bytes(e.a, strided, 0));
  EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous, download(e.a, strided));
  EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous, copy(e.a, y, strided));
  const std::int64_t bad_rank[] = {1, 1, 1, 1, 16};
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, View(allocate(e.a, DType::u32, 16)).to_tensor(bad_rank));
  const std::int64_t negative[] = {-4, -4};
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, View(allocate(e.a, DType::u32, 16)).to_tensor(negative));
  // A kernel the driver cannot run (no host reference on the sim).
  const driver::KernelSymbol no_host{.name = "test_device_only",
                                     .module = nullptr,
                                     .host = nullptr,
                                     .params = kHoldParams,
                                     .param_count = 3};
  BufferParam<std::uint32_t> p = y.buffer_param<std::uint32_t>();
  std::uint64_t zero = 0;
  void* params[] = {&p, &zero, &zero};
  const ViewAccess acc[] = {{&y, Access::write}};
  EXPECT_TANDEM_ERROR(ErrorCode::unsupported, launch(e.a, no_host, kOneThread, params, acc));
  // Bad launch dimensions are a driver error, nothing held.
  const driver::LaunchDims zero_grid{.grid = {0, 1, 1}, .block = {}};
  EXPECT_TANDEM_ERROR(ErrorCode::driver, launch(e.a, kHold, zero_grid, params, acc));
  settle();
  const RuntimeStats after = e.ctx.stats();
  EXPECT_EQ(after.active_leases, 0U);
  EXPECT_EQ(after.pending_submissions, 0U);
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  // y took no lease from any failed call: another stream may write it.
  EXPECT_NO_THROW((void)fill(e.b, y, 1));
}

// A malformed argument gets an error, never a wrapped-around allocation:
// `count * element size` must not overflow (allocate() checks this).
TEST_F(Failure, AdoptRefusesAnElementCountWhoseByteSizeOverflows) {
  Env e = env();
  const driver::DevicePtr p = foreign_alloc(e.ctx, 256);
  auto releases = std::make_shared<std::atomic<int>>(0);
  auto owner = [releases] { releases->fetch_add(1); };
  const std::uint64_t huge = (std::uint64_t{1} << 62) + 1;  // x 4 bytes = 2^64 + 4: wraps to 4
  std::uint64_t leaked_count = 0;
  const ErrorCode code = error_code_of([&] {
    View v = adopt(e.ctx, p, DType::f32, huge, owner);
    leaked_count = v.element_count();
  });
  EXPECT_EQ(code, ErrorCode::out_of_range)
      << "adopt accepted " << leaked_count << " f32 elements (a byte size that wraps around 64 bits)";
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, adopt(e.ctx, 0, DType::u32, 4, owner));
  (void)platform().backend().mem_free(e.ctx.native(), p);
}

// A lease keeps its range in 48 bits (src/runtime/src/submission.hpp), so
// allocations of 2^48 bytes (256 TiB) or more are refused before the driver
// is asked, and the largest below is not.
TEST_F(Failure, AllocationsOf2To48BytesOrMoreAreRefusedBeforeTheDriverIsAsked) {
  Env e = env();
  settle();
  const RuntimeStats before = e.ctx.stats();
  constexpr std::uint64_t k2To48 = std::uint64_t{1} << 48;
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, allocate(e.a, DType::u8, k2To48));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, allocate(e.a, DType::u32, k2To48 / 4));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_memory, allocate(e.a, DType::u8, k2To48 - 1));  // the sim has 1 MiB
  const driver::DevicePtr p = foreign_alloc(e.ctx, 256);
  auto releases = std::make_shared<std::atomic<int>>(0);
  auto owner = [releases] { releases->fetch_add(1); };
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, adopt(e.ctx, p, DType::u8, k2To48, owner));
  {
    const View v = adopt(e.ctx, p, DType::u8, k2To48 - 1, owner);
    EXPECT_EQ(v.extent_bytes(), k2To48 - 1);
  }
  settle();
  EXPECT_EQ(releases->load(), 1) << "the adopted view's owner ran " << releases->load() << " times";
  (void)platform().backend().mem_free(e.ctx.native(), p);
  EXPECT_EQ(e.ctx.stats().live_allocations, before.live_allocations);
}

TEST_F(Memory, VramReturnsToBaselineAfterBufferCycles) {
  Env e = env();
  settle();
  e.ctx.trim();
  const MemoryInfo base = e.ctx.memory_info();
  EXPECT_EQ(base.total_bytes, driver::SimConfig{}.memory_bytes);
  constexpr std::uint64_t kWords = (std::uint64_t{1} << 20) / 4;  // 1 MiB
  for (int i = 0; i < 64; ++i) {
    const Stream& s = i % 2 ? e.a : e.b;
    View v = allocate(s, DType::u32, kWords);
    (void)fill(s, v, static_cast<std::uint32_t>(i));
    if (i % 4 == 0) (void)add(i % 2 ? e.b : e.a, v, 1);  // another stream, ordered after
    if (i % 8 == 0) {
      View half = v.slice(0, kWords / 2);
      (void)read_back(s, half.slice(0, 1));
    }
  }  // every buffer dropped with work in flight
  ASSERT_TRUE(e.ctx.wait_for_retirement(kPatience));
  e.ctx.trim();
  EXPECT_EQ(e.ctx.memory_info().free_bytes, base.free_bytes)
      << "device memory did not return to its baseline";
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
  EXPECT_EQ(e.ctx.stats().live_bytes, 0U);
  EXPECT_EQ(sim().live_allocations(), 0U);
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

TEST_F(Memory, AllocationCountersCountAllocationsAndFrees) {
  Env e = env();
  settle();
  const RuntimeStats before = e.ctx.stats();
  {
    std::vector<View> views;
    for (int i = 0; i < 10; ++i) views.push_back(allocate(e.a, DType::u32, 16 + i));
    for (int i = 0; i < 3; ++i) views.push_back(allocate(e.a, DType::u32, 0));  // empty: not counted
    const driver::DevicePtr p = foreign_alloc(e.ctx, 128);
    views.push_back(adopt(e.ctx, p, DType::u32, 32,
                          [&be = platform().backend(), h = e.ctx.native(), p] { (void)be.mem_free(h, p); }));
    views.push_back(views[0].slice(0, 4));  // a view, not an allocation
    const RuntimeStats st = e.ctx.stats();
    EXPECT_EQ(st.allocations_total, before.allocations_total + 11);
    EXPECT_EQ(st.live_allocations, before.live_allocations + 11);
    std::uint64_t bytes = 128;
    for (int i = 0; i < 10; ++i) bytes += 4 * (16 + i);
    EXPECT_EQ(st.live_bytes, before.live_bytes + bytes);
    EXPECT_EQ(st.frees_total, before.frees_total);
    (void)fill(e.b, views[3], 1);
  }
  settle();
  const RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.allocations_total, before.allocations_total + 11);
  EXPECT_EQ(st.frees_total, before.frees_total + 11);
  EXPECT_EQ(st.live_allocations, before.live_allocations);
  EXPECT_EQ(st.live_bytes, before.live_bytes);
  EXPECT_EQ(st.foreign_owners_unreleased, 0U);
}

}  // namespace
}  // namespace tandem::test

namespace tandem::test {
namespace {

// "A scenario or argument that is malformed gets an error, never a crash."
// These run in a child process (a death test) so that a crash fails the
// test instead of taking the whole suite down. The child exits 0 when the
// call threw Error(invalid_handle), 1 for another error, 2 for none.
[[noreturn]] void exit_with_error_code(void (*call)()) {
  int code = 2;
  try {
    call();
  } catch (const Error& e) {
    code = e.code() == ErrorCode::invalid_handle ? 0 : 1;
  }
  std::_Exit(code);
}

void allocate_on_null_stream() { (void)allocate(StreamRef(nullptr), DType::u32, 4); }

void launch_with_null_view() {
  Platform p = Platform::sim();
  Context c = Context::create(p.device(0));
  Stream s = Stream::create(c);
  BufferParam<std::uint32_t> buf{nullptr, 0};
  std::uint64_t zero = 0;
  void* params[] = {&buf, &zero, &zero};
  const ViewAccess acc[] = {{nullptr, Access::read}};
  (void)launch(s, kHold, kOneThread, params, acc);
}

TEST(FailureDeathTest, AllocateOnANullStreamIsAnErrorNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_error_code(&allocate_on_null_stream), ::testing::ExitedWithCode(0), "");
}

TEST(FailureDeathTest, LaunchWithANullViewPointerIsAnErrorNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_error_code(&launch_with_null_view), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tandem::test
