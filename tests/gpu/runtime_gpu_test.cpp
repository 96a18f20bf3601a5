// SPDX-License-Identifier: Apache-2.0
// GPU behaviour of the runtime core on a real device (issue: runtime core).
// Every test prints what it measured ("[measure] ...") for the closing note.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernel_params.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/multi_stream_release.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using tandem::Access;
using tandem::DType;
using tandem::View;
using tandem::ViewAccess;

const tandem::driver::KernelSymbol& simt(const char* name, DType dtype) {
  const tandem::kernels::KernelEntry* e =
      tandem::kernels::find(tandem::kernels::Model::simt, name, dtype, nullptr);
  if (!e) throw std::runtime_error(std::string("no SIMT kernel ") + name);
  return *e->symbol;
}

tandem::driver::LaunchDims one_block() { return {{1, 1, 1}, {32, 1, 1}, 0}; }
tandem::driver::LaunchDims cover(std::uint64_t n) {
  return {{static_cast<std::uint32_t>(std::min<std::uint64_t>((n + 255) / 256, 1024)), 1, 1}, {256, 1, 1}, 0};
}

// spin(x: read-write, ns): holds `x` in flight on the device for `ns`.
tandem::LaunchFuture spin(const tandem::Stream& s, const View& x, std::uint64_t ns) {
  // spin takes its view as raw bytes (BufferParam<uint8_t>, len in bytes).
  tandem::BufferParam<std::uint8_t> p{reinterpret_cast<std::uint8_t*>(x.device_ptr()), x.extent_bytes()};
  void* params[] = {&p, &ns};
  const ViewAccess acc[] = {{&x, Access::read_write}};
  return tandem::launch(s, simt("spin", DType::u32), one_block(), params, acc);
}

tandem::LaunchFuture fill(const tandem::Stream& s, const View& out, std::uint32_t value) {
  auto p = out.buffer_param<std::uint32_t>();
  void* params[] = {&p, &value};
  const ViewAccess acc[] = {{&out, Access::write}};
  return tandem::launch(s, simt("fill", DType::u32), cover(out.element_count()), params, acc);
}

std::vector<std::uint32_t> read_u32(const tandem::Stream& s, const View& v) {
  const std::vector<std::byte> bytes = tandem::read_back(s, v);
  std::vector<std::uint32_t> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// A raw driver event recorded on a stream: tells whether the device has
// finished everything before it, independently of the runtime.
class Marker {
 public:
  Marker(tandem::Platform& p, const tandem::Context& c, const tandem::Stream& s)
      : b_(p.backend()), ctx_(c.native()) {
    EXPECT_TRUE(b_.event_create(ctx_, e_).ok());
    EXPECT_TRUE(b_.event_record(ctx_, e_, s.native()).ok());
  }
  ~Marker() { (void)b_.event_destroy(ctx_, e_); }
  bool done() const { return b_.event_query(ctx_, e_).ok(); }

 private:
  tandem::driver::Backend& b_;
  tandem::driver::ContextHandle ctx_;
  tandem::driver::EventHandle e_;
};

// Tools like compute-sanitizer serialize launches (a launch returns only
// once its kernel is done), so "still in flight" is checked against the
// device, never assumed from a kernel's duration.
using GpuRuntime = GpuTest;

// runtime.md §2/§6: a forgotten launch future changes nothing — the buffer
// lives until the kernel is proven complete. Run under compute-sanitizer
// memcheck: a free before the kernel finished would be an invalid access.
TEST_F(GpuRuntime, ForgottenFutureKeepsBufferAliveUntilKernelCompletes) {
  tandem::Stream s = tandem::Stream::create(ctx());
  const auto before = ctx().stats();
  std::optional<Marker> after_fill;
  {
    View buf = tandem::allocate(s, DType::u32, 1 << 18);
    std::move(spin(s, buf, 20'000'000)).forget();  // 20 ms
    std::move(fill(s, buf, 7)).forget();           // writes after the spin
    after_fill.emplace(platform(), ctx(), s);
  }  // every handle is gone while the kernels are in flight
  const auto live = ctx().stats().live_allocations;
  if (!after_fill->done()) {
    EXPECT_EQ(live, before.live_allocations + 1) << "freed while in flight";
  }
  ASSERT_TRUE(ctx().wait_for_retirement(10s));
  const auto after = ctx().stats();
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  EXPECT_EQ(after.active_leases, 0u);
  EXPECT_EQ(after.quarantined_allocations, 0u);
}

// runtime.md §6: after 64 cycles of 1 MiB buffers, once retirement is waited
// for and the pool trimmed, free memory returns within 8 MiB of baseline.
TEST_F(GpuRuntime, FreeMemoryReturnsToBaselineAfter64Cycles) {
  tandem::Stream s = tandem::Stream::create(ctx());
  ctx().trim();
  const std::size_t baseline = ctx().memory_info().free_bytes;
  for (int i = 0; i < 64; ++i) {
    View buf = tandem::allocate(s, DType::u32, (1 << 20) / 4);
    std::move(fill(s, buf, static_cast<std::uint32_t>(i))).forget();
  }
  ASSERT_TRUE(ctx().wait_for_retirement(10s));
  ctx().trim();
  const std::size_t final_free = ctx().memory_info().free_bytes;
  const long long delta = static_cast<long long>(baseline) - static_cast<long long>(final_free);
  std::printf("[measure] vram baseline_free=%zu final_free=%zu delta=%lld bytes\n", baseline, final_free,
              delta);
  RecordProperty("vram_delta_bytes", std::to_string(delta));
  EXPECT_LE(std::llabs(delta), 8LL << 20);
  EXPECT_EQ(ctx().stats().live_allocations, 0u);
}

// runtime.md §6: dropping a buffer while a 10 ms kernel uses it returns at
// once (< 100 µs) and the memory is freed only after the kernel.
TEST_F(GpuRuntime, DropWhileKernelRunsReturnsAtOnceAndFreesAfterKernel) {
  tandem::Stream s = tandem::Stream::create(ctx());
  auto& b = platform().backend();
  tandem::driver::EventHandle done;
  ASSERT_TRUE(b.event_create(ctx().native(), done).ok());
  const auto frees_before = ctx().stats().frees_total;
  View buf = tandem::allocate(s, DType::u32, 1 << 20);
  (void)fill(s, buf, 1);
  ASSERT_TRUE(ctx().wait_for_retirement(10s));
  const auto launched = Clock::now();
  std::move(spin(s, buf, 10'000'000)).forget();
  ASSERT_TRUE(b.event_record(ctx().native(), done, s.native()).ok());  // after the spin
  const auto t0 = Clock::now();
  { View dropped = std::move(buf); }
  const auto drop_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  EXPECT_LT(drop_ns, 100'000) << "the dropping thread must not wait for the GPU";
  // Watch for the free; when it happens the kernel must already be done.
  bool freed = false;
  bool kernel_done_at_free = false;
  while (Clock::now() - launched < 10s) {
    if (ctx().stats().frees_total > frees_before) {
      freed = true;
      kernel_done_at_free = b.event_query(ctx().native(), done).ok();
      break;
    }
  }
  const auto freed_after =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - launched).count();
  std::printf("[measure] drop with 10 ms kernel in flight: drop %lld ns, freed %lld us after launch\n",
              static_cast<long long>(drop_ns), static_cast<long long>(freed_after));
  EXPECT_TRUE(freed);
  EXPECT_TRUE(kernel_done_at_free) << "memory freed before the kernel completed";
  EXPECT_GE(freed_after, 10'000);
  (void)b.event_destroy(ctx().native(), done);
}

// runtime.md §6: a stream dropped with work pending still retires it.
TEST_F(GpuRuntime, DroppedStreamWithPendingWorkStillRetiresIt) {
  const auto before = ctx().stats();
  std::optional<Marker> after_work;
  {
    tandem::Stream s = tandem::Stream::create(ctx());
    View buf = tandem::allocate(s, DType::u32, 1 << 16);
    std::move(spin(s, buf, 5'000'000)).forget();
    std::move(fill(s, buf, 3)).forget();
    after_work.emplace(platform(), ctx(), s);
  }
  const auto pending = ctx().stats().pending_submissions;
  if (!after_work->done()) {
    EXPECT_GE(pending, before.pending_submissions + 1);
  }
  ASSERT_TRUE(ctx().wait_for_retirement(10s));
  const auto after = ctx().stats();
  EXPECT_EQ(after.pending_submissions, 0u);
  EXPECT_EQ(after.active_leases, 0u);
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  EXPECT_EQ(after.retired_submissions, before.retired_submissions + 2);
}

// runtime.md §4 (order): a write on stream B to bytes a spinning kernel on
// stream A still uses runs after it, without a host block.
TEST_F(GpuRuntime, OrderPolicyRunsConflictingWriteAfterEarlierWork) {
  tandem::Stream a = tandem::Stream::create(ctx());
  tandem::Stream b = tandem::Stream::create(ctx());
  View buf = tandem::allocate(a, DType::u32, 1 << 20);
  std::move(spin(a, buf, 5'000'000)).forget();
  std::move(fill(a, buf, 1)).forget();
  std::move(fill(b, buf, 2)).forget();  // ordered after both
  const std::vector<std::uint32_t> got = read_u32(b, buf);
  EXPECT_EQ(std::count(got.begin(), got.end(), 2u), static_cast<long>(got.size()));
}

// runtime.md §4 (reject): while the spin holds its lease, a conflicting
// write on another stream is rejected; after retirement it is accepted.
TEST_F(GpuRuntime, RejectPolicyRejectsWhileLeaseHeldAcceptsAfter) {
  tandem::Context reject = tandem::Context::create(platform().device(0), {tandem::ConflictPolicy::reject});
  tandem::Stream a = tandem::Stream::create(reject);
  tandem::Stream b = tandem::Stream::create(reject);
  View buf = tandem::allocate(a, DType::u32, 1 << 10);
  tandem::LaunchFuture f = spin(a, buf, 20'000'000);
  const Marker spun(platform(), reject, a);
  bool rejected = false;
  try {
    (void)fill(b, buf, 9);
  } catch (const tandem::ConflictError& e) {
    rejected = true;
    EXPECT_NE(std::string(e.what()).find("allocation " + std::to_string(buf.allocation_id())),
              std::string::npos);
  }
  // Accepted only if the spin had already finished on the device (and so
  // could have retired): never while it still runs.
  if (!rejected) {
    EXPECT_TRUE(spun.done()) << "a conflicting write was accepted while the lease was held";
  }
  ASSERT_TRUE(f.wait(10s));
  EXPECT_NO_THROW((void)fill(b, buf, 9));
  ASSERT_TRUE(reject.wait_for_retirement(10s));
}

// Context::load_kernel / kernels::load_catalog: kernels loaded beforehand
// launch while another kernel runs, without waiting for it. (CUDA loads
// modules and kernels lazily, and a lazy load waits for the kernels running
// on the device: a first launch during a long kernel would block until it
// ends, and everything observed after it would be after the kernel.)
TEST_F(GpuRuntime, LaunchOfALoadedKernelDoesNotWaitForRunningKernels) {
  namespace k = tandem::kernels;
  k::load_catalog(ctx());
  tandem::Stream a = tandem::Stream::create(ctx());
  tandem::Stream b = tandem::Stream::create(ctx());
  View held = tandem::allocate(a, DType::u32, 1024);
  View other = tandem::allocate(b, DType::f32, 64 * 64);
  tandem::LaunchFuture spinning = spin(a, held, 500'000'000);  // 0.5 s
  const Marker spun(platform(), ctx(), a);
  if (spun.done()) GTEST_SKIP() << "launches are serialized here (a tool?): nothing runs concurrently";
  // Neither kernel's module (simt_basic, tile_elementwise) was used before
  // in this context; spin's is simt_reduce.
  const k::Arg fill_args[] = {k::Arg::of(other), k::Arg::value(1.0)};
  std::move(k::launch(b, catalog_entry(k::Model::simt, "fill", DType::f32), fill_args)).forget();
  const std::int64_t shape[] = {64, 64};
  View t = std::move(other).to_tensor(shape);
  const k::Arg scale_args[] = {k::Arg::of(t), k::Arg::value(2.0)};
  std::move(k::launch(b, catalog_entry(k::Model::tile, "scale", DType::f32, 2), scale_args)).forget();
  const bool running_after_launches = !spun.done();
  EXPECT_TRUE(running_after_launches) << "a launch of a loaded kernel waited for the running spin";
  EXPECT_EQ(spinning.status(), tandem::SubmissionStatus::pending);
  std::printf("[measure] launches during a 0.5 s spin returned while it ran: %s\n",
              running_after_launches ? "yes" : "no");
  const std::vector<float> got = read_f32(b, t);
  EXPECT_EQ(std::count(got.begin(), got.end(), 2.0f), static_cast<long>(got.size()));
  ASSERT_TRUE(spinning.wait(10s));
}

// --- memory leased on several streams: the release stream (docs/runtime.md) ---

tandem::Context release_stream_context(tandem::Platform& p) {
  tandem::ContextOptions o;
  o.multi_stream_release = tandem::MultiStreamRelease::release_stream;
  return tandem::Context::create(p.device(0), o);
}

// A kernel that leases `x` for reading and holds it for `ns` (spin touches
// no byte of it).
void read_spin(const tandem::Stream& s, const View& x, std::uint64_t ns) {
  tandem::BufferParam<std::uint8_t> p{reinterpret_cast<std::uint8_t*>(x.device_ptr()), x.extent_bytes()};
  void* params[] = {&p, &ns};
  const ViewAccess acc[] = {{&x, Access::read}};
  std::move(tandem::launch(s, simt("spin", DType::u32), one_block(), params, acc)).forget();
}

// runtime.md §6, docs/runtime.md "Several streams": a buffer two streams
// still read when it is dropped is freed on the context's release stream
// behind both reads. The next allocation of its size, filled at once, may
// take its memory only after both: the checksums read the old contents.
// Under compute-sanitizer memcheck, an early free is also an invalid read.
TEST_F(GpuRuntime, ReleaseStreamKeepsABufferReadOnTwoStreamsUntilBothReadersRead) {
  namespace k = tandem::kernels;
  tandem::Context c = release_stream_context(platform());
  k::load_catalog(c);
  tandem::Stream s0 = tandem::Stream::create(c), s1 = tandem::Stream::create(c),
                 s2 = tandem::Stream::create(c);
  constexpr std::uint64_t n = 1 << 20;
  std::optional<View> buf = tandem::allocate(s0, DType::u32, n);
  std::move(fill(s0, *buf, 1)).forget();
  View acc1 = tandem::allocate(s1, DType::u32, 1), acc2 = tandem::allocate(s2, DType::u32, 1);
  View hold1 = tandem::allocate(s1, DType::u32, 1), hold2 = tandem::allocate(s2, DType::u32, 1);
  ASSERT_TRUE(c.wait_for_retirement(10s));
  const auto before = c.stats();
  const k::KernelEntry& checksum = catalog_entry(k::Model::simt, "checksum", DType::u32);
  // Each read waits behind a spin on its stream, so both are still queued at the drop.
  std::move(spin(s1, hold1, 20'000'000)).forget();
  std::move(spin(s2, hold2, 40'000'000)).forget();
  const k::Arg sum1[] = {k::Arg::of(*buf), k::Arg::of(acc1)};
  const k::Arg sum2[] = {k::Arg::of(*buf), k::Arg::of(acc2)};
  std::move(k::launch(s1, checksum, sum1)).forget();
  std::move(k::launch(s2, checksum, sum2)).forget();
  const Marker read2(platform(), c, s2);
  const auto t0 = Clock::now();
  buf.reset();
  const auto drop_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  const bool in_flight = !read2.done();
  View next = tandem::allocate(s0, DType::u32, n);  // enqueues the free on the release stream
  std::move(fill(s0, next, 7)).forget();
  EXPECT_EQ(read_u32(s0, acc1), std::vector<std::uint32_t>{static_cast<std::uint32_t>(n)});
  EXPECT_EQ(read_u32(s0, acc2), std::vector<std::uint32_t>{static_cast<std::uint32_t>(n)})
      << "the second reader read memory the next allocation had already written";
  const std::vector<std::uint32_t> got = read_u32(s0, next);
  EXPECT_EQ(std::count(got.begin(), got.end(), 7u), static_cast<long>(n));
  ASSERT_TRUE(c.wait_for_retirement(10s));
  const auto after = c.stats();
  if (in_flight) {
    EXPECT_EQ(after.stream_ordered_releases, before.stream_ordered_releases + 1);
    EXPECT_EQ(after.host_proven_releases, before.host_proven_releases);
  }
  EXPECT_LT(drop_ns, 100'000) << "the dropping thread must not wait for the GPU";
  std::printf("[measure] release stream: drop %lld ns with two readers in flight (%s)\n",
              static_cast<long long>(drop_ns), in_flight ? "yes" : "no: launches serialized?");
}

// Issue 21's loop with the buffer read on two streams: 5 x {60 % of the free
// memory, read on s1 and s2 by 1 ms kernels, dropped}: each allocation can
// only have the dropped buffer's memory, released on the release stream.
TEST_F(GpuRuntime, ReleaseStreamLetsTheNextAllocationReuseMemoryReadOnTwoStreams) {
  tandem::Context c = release_stream_context(platform());
  c.load_kernel(simt("spin", DType::u32));
  std::optional<tandem::Stream> s0 = tandem::Stream::create(c), s1 = tandem::Stream::create(c),
                                s2 = tandem::Stream::create(c);
  c.trim();
  const std::size_t baseline = c.memory_info().free_bytes;
  const std::uint64_t count = static_cast<std::uint64_t>(static_cast<double>(baseline) * 0.6) / 4;
  const auto before = c.stats();
  const auto t0 = Clock::now();
  for (int i = 0; i < 5; ++i) {
    View x = tandem::allocate(*s0, DType::u32, count);
    read_spin(*s1, x, 1'000'000);
    read_spin(*s2, x, 1'000'000);
  }  // each buffer dropped with both reads queued
  s0->synchronize();
  const double loop_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  ASSERT_TRUE(c.wait_for_retirement(30s));
  const auto after = c.stats();
  EXPECT_EQ(after.live_allocations, 0u);
  EXPECT_EQ(after.quarantined_allocations, 0u);
  EXPECT_EQ(after.host_proven_releases, before.host_proven_releases) << "a release waited for host proof";
  std::printf(
      "[measure] release stream loop: 5 x %.1f GiB read on two streams, %.1f ms; stream-ordered "
      "releases %llu, pressure retries %llu\n",
      static_cast<double>(count * 4) / (1 << 30), loop_ms,
      static_cast<unsigned long long>(after.stream_ordered_releases - before.stream_ordered_releases),
      static_cast<unsigned long long>(after.pressure_retries - before.pressure_retries));
  c.trim();
  const long long delta =
      static_cast<long long>(baseline) - static_cast<long long>(c.memory_info().free_bytes);
  EXPECT_LE(std::llabs(delta), 8LL << 20) << "free memory did not return to its baseline";
  s0.reset();
  s1.reset();
  s2.reset();
  ASSERT_TRUE(platform().wait_for_retirement(30s));
}

}  // namespace
