// SPDX-License-Identifier: Apache-2.0
// spec/runtime.md §2 — handles: Device, Context (owned/borrowed), Stream
// (owned/borrowed), Allocation identity, launch futures.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>

#include "runtime/runtime_test_support.hpp"

namespace tandem::test {
namespace {

class Handles : public RuntimeFixture {};

class TwoDevices : public RuntimeFixture {
 protected:
  driver::SimConfig config() const override {
    driver::SimConfig c;
    c.devices = 2;
    c.memory_bytes = std::size_t{64} << 20;
    return c;
  }
};

// Signals when a shared_ptr's deleter ran (keep-alive objects).
struct ReleaseFlag {
  std::mutex m;
  std::condition_variable cv;
  int releases = 0;
  std::thread::id thread;

  std::shared_ptr<void> make_keep_alive(const std::shared_ptr<ReleaseFlag>& self) {
    return std::shared_ptr<void>(new int(0), [self](void* p) {
      delete static_cast<int*>(p);
      std::lock_guard lock(self->m);
      ++self->releases;
      self->thread = std::this_thread::get_id();
      self->cv.notify_all();
    });
  }
  int count() {
    std::lock_guard lock(m);
    return releases;
  }
  bool wait_released(std::chrono::nanoseconds timeout = kPatience) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, timeout, [&] { return releases > 0; });
  }
};

TEST_F(Handles, AllocationIdsAreUniqueAndNeverReused) {
  Env e = env();
  std::uint64_t last = 0;
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 200; ++i) {
    View v = allocate(i % 2 ? e.a : e.b, DType::u32, 16);
    const std::uint64_t id = v.allocation_id();
    EXPECT_GT(id, last) << "allocation " << i;
    EXPECT_TRUE(seen.insert(id).second);
    last = id;
    // Every view of one allocation carries its id.
    View s = v.slice(2, 4);
    EXPECT_EQ(s.allocation_id(), id);
    if (i % 3 == 0) (void)fill(e.a, v, static_cast<std::uint32_t>(i));  // some die with work in flight
  }
  settle();
  // After all of them were freed (and their memory reused), ids still only grow,
  // for empty and foreign allocations, in another context and another platform.
  View empty = allocate(e.a, DType::u32, 0);
  EXPECT_GT(empty.allocation_id(), last);
  last = empty.allocation_id();
  const driver::DevicePtr p = foreign_alloc(e.ctx, 64);
  View foreign = adopt(e.ctx, p, DType::u32, 16,
                       [&b = platform().backend(), h = e.ctx.native(), p] { (void)b.mem_free(h, p); });
  EXPECT_GT(foreign.allocation_id(), last);
  last = foreign.allocation_id();
  Env e2 = env();
  View other_ctx = allocate(e2.a, DType::u32, 16);
  EXPECT_GT(other_ctx.allocation_id(), last);
  last = other_ctx.allocation_id();
  {
    Platform p2 = Platform::sim();
    Context c2 = Context::create(p2.device(0));
    Stream s2 = Stream::create(c2);
    View other_platform = allocate(s2, DType::u32, 16);
    EXPECT_GT(other_platform.allocation_id(), last);
    EXPECT_TRUE(c2.wait_for_retirement(kPatience));
  }
}

TEST_F(Handles, DeviceDescribesTheSimulatedGpu) {
  EXPECT_TRUE(platform().is_sim());
  EXPECT_EQ(platform().backend_name(), "sim");
  EXPECT_EQ(platform().device_count(), 1);
  EXPECT_FALSE(platform().driver_version().empty());
  const Device d = device();
  EXPECT_EQ(d.ordinal(), 0);
  EXPECT_FALSE(d.name().empty());
  EXPECT_EQ(d.uuid().rfind("SIM-", 0), 0U) << d.uuid();
  EXPECT_EQ(d.pci_bus_id(), "0000:00:00.0");
  EXPECT_EQ(d.compute_capability(), "9.0");
  EXPECT_EQ(d.total_memory(), driver::SimConfig{}.memory_bytes);
  EXPECT_GT(d.info().multiprocessors, 0);
  EXPECT_EQ(d.info().ordinal, 0);

  // A value: copies compare equal; a device of another platform does not.
  const Device copy = d;
  EXPECT_TRUE(copy == d);
  Platform other = Platform::sim();
  EXPECT_FALSE(other.device(0) == d);
  EXPECT_NE(other.device(0).uuid(), d.uuid());

  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, platform().device(1));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, platform().device(-1));
  const std::string msg = error_message_of([&] { (void)platform().device(3); });
  EXPECT_NE(msg.find("device 3"), std::string::npos) << msg;

  // A context knows its device.
  Context ctx = Context::create(d);
  EXPECT_TRUE(ctx.device() == d);
  EXPECT_TRUE(ctx.owned());
  EXPECT_EQ(ctx.conflict_policy(), ConflictPolicy::order);
  EXPECT_EQ(ctx.memory_info().total_bytes, d.total_memory());
}

// Platform::with_backend takes any backend (an instrumenting wrapper, say):
// the platform is what that backend makes of it, and no backend is refused.
TEST_F(Handles, APlatformRunsOnTheBackendItIsGiven) {
  driver::SimConfig config;
  config.devices = 2;
  Platform p = Platform::with_backend(std::make_unique<driver::SimBackend>(config));
  EXPECT_EQ(p.backend_name(), "sim");
  EXPECT_TRUE(p.is_sim());
  EXPECT_EQ(p.device_count(), 2);
  Context ctx = Context::create(p.device(1));
  Stream s = Stream::create(ctx);
  const View b = allocate(s, DType::f32, 16);
  EXPECT_EQ(b.device_ordinal(), 1);

  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, (void)Platform::with_backend(nullptr));
}

TEST_F(TwoDevices, DevicesHaveDistinctIdentitiesAndWork) {
  ASSERT_EQ(platform().device_count(), 2);
  const Device d0 = platform().device(0);
  const Device d1 = platform().device(1);
  EXPECT_EQ(d1.ordinal(), 1);
  EXPECT_FALSE(d0 == d1);
  EXPECT_NE(d0.uuid(), d1.uuid());
  EXPECT_NE(d0.pci_bus_id(), d1.pci_bus_id());
  EXPECT_EQ(d1.total_memory(), std::size_t{64} << 20);

  Context c1 = Context::create(d1);
  EXPECT_TRUE(c1.device() == d1);
  Stream s1 = Stream::create(c1);
  View v = allocate(s1, DType::u32, 32);
  (void)fill(s1, v, 11);
  EXPECT_EQ(read_u32(s1, v), std::vector<std::uint32_t>(32, 11));
}

// spec §4: a launch that mixes views of different devices fails before any
// lease is taken.
TEST_F(TwoDevices, ALaunchMixingDevicesFailsBeforeAnyLeaseIsTaken) {
  Context c0 = Context::create(platform().device(0), ContextOptions{ConflictPolicy::reject});
  Context c1 = Context::create(platform().device(1), ContextOptions{ConflictPolicy::reject});
  Stream s0 = Stream::create(c0);
  Stream s0b = Stream::create(c0);
  Stream s1 = Stream::create(c1);
  View x0 = allocate(s0, DType::u32, 16);
  View x1 = allocate(s1, DType::u32, 16);
  settle();
  const RuntimeStats before0 = c0.stats();
  const RuntimeStats before1 = c1.stats();
  const std::string msg = error_message_of([&] {
    (void)hold_many(s0, {{&x0, Access::write}, {&x1, Access::read}}, nullptr);
  });
  EXPECT_NE(msg.find("device_mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 1"), std::string::npos) << msg;
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, copy(s0, x1, x0));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, read_back(s1, x0));
  EXPECT_EQ(c0.stats().active_leases, before0.active_leases);
  EXPECT_EQ(c1.stats().active_leases, before1.active_leases);
  EXPECT_EQ(c0.stats().submissions_total, before0.submissions_total);
  // x0 holds no lease from the failed launch: a write on another stream is admitted.
  EXPECT_NO_THROW((void)fill(s0b, x0, 1));
}

TEST_F(TwoDevices, BorrowingAContextOfAnotherDeviceIsRejected) {
  driver::Backend& be = platform().backend();
  driver::ContextHandle h1;
  ASSERT_TRUE(be.context_create(1, h1).ok());
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, Context::borrow(platform().device(0), h1));
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle,
                      Context::borrow(platform().device(0), driver::ContextHandle{}));
  {
    Context ok = Context::borrow(platform().device(1), h1);
    EXPECT_FALSE(ok.owned());
  }
  EXPECT_TRUE(be.context_destroy(h1).ok());
}

TEST_F(Handles, OwnedContextReleasesThePrimaryContextWithItsLastUser) {
  driver::Backend& be = platform().backend();
  int ordinal = -1;
  std::optional<Context> c1 = Context::create(device());
  EXPECT_TRUE(c1->owned());
  const driver::ContextHandle h = c1->native();
  ASSERT_TRUE(be.context_device(h, ordinal).ok());
  {
    Context c2 = Context::create(device());  // retains the same primary context again
    EXPECT_EQ(c2.native(), h);
    EXPECT_NE(c2.id(), c1->id());
  }
  EXPECT_TRUE(be.context_device(h, ordinal).ok()) << "released while another Context still uses it";

  // An allocation keeps its Context alive after the caller's handle is gone.
  const driver::DevicePtr p = foreign_alloc(*c1, 256);
  View v = adopt(*c1, p, DType::u32, 64, [&be, h, p] { (void)be.mem_free(h, p); });
  c1.reset();
  EXPECT_TRUE(be.context_device(h, ordinal).ok()) << "released while an allocation still uses it";
  EXPECT_EQ(v.context().device().ordinal(), 0);
  v = View();  // the last user: nothing in flight, so the release happens now
  EXPECT_FALSE(be.context_device(h, ordinal).ok()) << "the primary context was never released";
}

// An allocation born on a stream holds its context through the stream's
// anchor (StreamAnchor::ctx), not through a reference of its own: with the
// stream and the Context handle gone it still keeps the context, and its
// drop, nothing in flight, lets the context go.
TEST_F(Handles, AnAllocationKeepsItsContextAliveAfterItsBirthStreamIsGone) {
  driver::Backend& be = platform().backend();
  int ordinal = -1;
  std::optional<Context> c = Context::create(device());
  const driver::ContextHandle h = c->native();
  std::optional<Stream> s = Stream::create(*c);
  View v = allocate(*s, DType::u32, 64);
  (void)fill(*s, v, 3);
  s.reset();
  c.reset();
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  EXPECT_TRUE(be.context_device(h, ordinal).ok()) << "released while an allocation born on it still uses it";
  EXPECT_EQ(v.context().stats().live_allocations, 1U);
  EXPECT_EQ(read_u32(Stream::create(v.context()), v), std::vector<std::uint32_t>(64, 3));
  v = View();
  EXPECT_TRUE(eventually([&] { return !be.context_device(h, ordinal).ok(); }))
      << "the primary context was never released";
}

TEST_F(Handles, BorrowedContextIsNeverDestroyedAndItsKeepAliveOutlivesTheLastUse) {
  driver::Backend& be = platform().backend();
  driver::ContextHandle h;
  ASSERT_TRUE(be.context_create(0, h).ok());  // made by "another library"
  auto flag = std::make_shared<ReleaseFlag>();
  Gate& g = gate();
  std::optional<Context> ctx = Context::borrow(device(), h, flag->make_keep_alive(flag));
  EXPECT_FALSE(ctx->owned());
  EXPECT_EQ(ctx->native(), h);
  std::optional<Stream> s = Stream::create(*ctx);
  std::optional<View> v = allocate(*s, DType::u32, 64);
  std::optional<LaunchFuture> f = fill(*s, *v, 7, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  // Everything of the caller goes, the work is still in flight.
  f.reset();
  v.reset();
  s.reset();
  ctx.reset();
  EXPECT_EQ(flag->count(), 0) << "keep-alive released while work in the context is still in flight";
  g.open();
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  ASSERT_TRUE(flag->wait_released()) << "keep-alive never released after the last use retired";
  EXPECT_EQ(flag->count(), 1);
  EXPECT_NE(flag->thread, std::this_thread::get_id()) << "the last use retired on the retirement thread";

  // tandem never destroyed the foreign context: it is still fully usable.
  int ordinal = -1;
  EXPECT_TRUE(be.context_device(h, ordinal).ok());
  driver::StreamHandle raw;
  ASSERT_TRUE(be.stream_create(h, raw).ok());
  driver::DevicePtr p = 0;
  ASSERT_TRUE(be.mem_alloc(h, 64, p).ok());
  EXPECT_TRUE(be.memset8_async(h, p, 1, 64, raw).ok());
  EXPECT_TRUE(be.stream_synchronize(h, raw).ok());
  EXPECT_TRUE(be.mem_free(h, p).ok());
  EXPECT_TRUE(be.stream_destroy(h, raw).ok());
  EXPECT_TRUE(be.context_destroy(h).ok()) << "someone else destroyed the borrowed context";
}

TEST_F(Handles, OwnedStreamIsDestroyedOnlyAfterItsWorkRetires) {
  driver::Backend& be = platform().backend();
  Env e = env();
  std::optional<Stream> s = Stream::create(e.ctx);
  EXPECT_TRUE(s->owned());
  EXPECT_NE(s->id(), e.a.id());
  EXPECT_TRUE(s->context() == e.ctx);
  const driver::StreamHandle raw = s->native();
  View v = allocate(*s, DType::u32, 16);
  Gate& g = gate();
  (void)fill(*s, v, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  const std::uint64_t streams = e.ctx.stats().streams;
  s.reset();
  // Dropped with pending work: the driver stream still lives (and still runs it).
  EXPECT_EQ(be.stream_query(e.ctx.native(), raw).status, driver::Status::not_ready);
  EXPECT_EQ(e.ctx.stats().streams, streams);
  g.open();
  settle();
  EXPECT_TRUE(eventually([&] { return e.ctx.stats().streams == streams - 1; }))
      << "the dropped stream's record was never destroyed";
  // The record leaves the context's list before the driver stream is
  // destroyed (Context::trim must not find a stream being destroyed), so the
  // count can drop a moment before the handle dies.
  EXPECT_TRUE(eventually([&] {
    return be.stream_query(e.ctx.native(), raw).status == driver::Status::invalid_handle;
  })) << "the owned driver stream was not destroyed";
  EXPECT_EQ(read_u32(e.a, v), std::vector<std::uint32_t>(16, 1));
}

TEST_F(Handles, BorrowedStreamIsNeverDestroyed) {
  driver::Backend& be = platform().backend();
  Env e = env();
  driver::StreamHandle raw;
  ASSERT_TRUE(be.stream_create(e.ctx.native(), raw).ok());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, Stream::borrow(e.ctx, driver::StreamHandle{}));
  const std::uint64_t streams = e.ctx.stats().streams;
  {
    Stream s = Stream::borrow(e.ctx, raw);
    EXPECT_FALSE(s.owned());
    EXPECT_EQ(s.native(), raw);
    View v = allocate(s, DType::u32, 16);
    Gate& g = gate();
    (void)fill(s, v, 4, {.gate = &g});
    ASSERT_TRUE(g.wait_arrivals(1));
    EXPECT_EQ(e.ctx.stats().streams, streams + 1);
    g.open();
  }  // the Stream handle, its buffer and its future are gone
  settle();
  ASSERT_TRUE(eventually([&] { return e.ctx.stats().streams == streams; }))
      << "the borrowed stream's record was never dropped";
  // The driver stream is still ours and usable.
  EXPECT_EQ(be.stream_query(e.ctx.native(), raw).status, driver::Status::ok);
  driver::DevicePtr p = 0;
  ASSERT_TRUE(be.mem_alloc(e.ctx.native(), 64, p).ok());
  EXPECT_TRUE(be.memset8_async(e.ctx.native(), p, 0, 64, raw).ok());
  EXPECT_TRUE(be.stream_synchronize(e.ctx.native(), raw).ok());
  EXPECT_TRUE(be.mem_free(e.ctx.native(), p).ok());
  EXPECT_TRUE(be.stream_destroy(e.ctx.native(), raw).ok()) << "tandem destroyed a borrowed stream";
}

TEST_F(Handles, StreamsAllocationsAndSubmissionsKeepTheirContextAlive) {
  std::optional<Context> ctx = Context::create(device());
  const std::uint64_t ctx_id = ctx->id();
  std::optional<Stream> s = Stream::create(*ctx);
  View v = allocate(*s, DType::u32, 32);
  Gate& g = gate();
  LaunchFuture first = fill(*s, v, 5, {.gate = &g});
  ctx.reset();  // the caller's Context handle goes first
  EXPECT_EQ(s->context().id(), ctx_id);
  EXPECT_EQ(v.context().id(), ctx_id);
  LaunchFuture second = add(*s, v, 1);  // still submits
  std::optional<Stream> keep_b = Stream::create(s->context());
  s.reset();  // now only the allocation, the submissions and stream b hold it
  g.open();
  ASSERT_TRUE(second.wait(kPatience));
  EXPECT_EQ(first.status(), SubmissionStatus::retired);
  EXPECT_EQ(second.status(), SubmissionStatus::retired);
  EXPECT_EQ(read_u32(*keep_b, v), std::vector<std::uint32_t>(32, 6));
  EXPECT_EQ(v.context().stats().pending_submissions, 0U);
}

TEST_F(Handles, DroppedLaunchFutureChangesNothingAboutLeases) {
  Env e = env(ConflictPolicy::reject);
  std::optional<View> v = allocate(e.a, DType::u32, 256);
  settle();
  Gate& g = gate();
  std::optional<LaunchFuture> f = fill(e.a, *v, 9, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  EXPECT_TRUE(returns_within([&] { f.reset(); }, kPatience, [&] { g.open(); })) << "dropping a future waited";
  // The lease is still in force (reject: a conflicting access fails) ...
  EXPECT_THROW((void)fill(e.b, *v, 1), ConflictError);
  EXPECT_EQ(e.ctx.stats().active_leases, 1U);
  // ... and keeps the memory alive after the last view is gone.
  v.reset();
  EXPECT_EQ(e.ctx.stats().live_allocations, 1U);
  g.open();
  settle();
  EXPECT_EQ(e.ctx.stats().live_allocations, 0U);
  EXPECT_EQ(e.ctx.stats().active_leases, 0U);
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

TEST_F(Handles, ForgottenLaunchFutureChangesNothingAboutLeases) {
  IntentionalLeakScope leak;  // forget() leaks the small submission record by contract
  Env e = env(ConflictPolicy::reject);
  std::optional<View> v = allocate(e.a, DType::u32, 256);
  settle();
  Gate& g = gate();
  LaunchFuture f = fill(e.a, *v, 9, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  std::move(f).forget();
  EXPECT_FALSE(f.valid());
  EXPECT_THROW((void)fill(e.b, *v, 1), ConflictError);
  v.reset();
  EXPECT_EQ(e.ctx.stats().live_allocations, 1U) << "memory freed while a forgotten submission uses it";
  EXPECT_EQ(e.ctx.stats().pending_submissions, 1U);
  g.open();
  settle();
  const RuntimeStats st = e.ctx.stats();
  EXPECT_EQ(st.live_allocations, 0U);
  EXPECT_EQ(st.active_leases, 0U);
  EXPECT_EQ(st.pending_submissions, 0U);
  e.ctx.trim();
  EXPECT_EQ(sim().live_allocations(), 0U);
  EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
}

}  // namespace
}  // namespace tandem::test
