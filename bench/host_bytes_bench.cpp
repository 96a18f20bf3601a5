// SPDX-License-Identifier: Apache-2.0
// tandem's own host heap per live allocation and per in-flight submission,
// measured through the allocator (heap_count.hpp), on the host-only backend
// (host_only_backend.hpp) with every driver call's allocations excluded.
//
//   BM_HostBytesPerAllocation   N live allocations of a 256-byte buffer,
//                               each held by one view: tandem's heap growth
//                               over N, the stream drained and retirement
//                               idle (counter bytes_per_allocation)
//   BM_HostBytesPerSubmission   N kernel launches in flight, each with two
//                               view arguments (a read and a write lease on
//                               buffers of their own), futures dropped, all
//                               held behind a `spin` that keeps the stream
//                               busy: tandem's heap growth over N while they
//                               are in flight (counter bytes_per_submission)
//
// Each runs on a platform, context (default ContextOptions) and stream of
// its own (the stream with no bound on the device's queue), made before
// the window, so that nothing the suite did before counts; a few
// allocations (64, dropped) or launches (one of each kernel) first,
// uncounted, take the first-use costs (the kernels' modules). The vectors
// that hold the views are reserved before the window: what is counted is
// tandem's alone. Counters beside the figure: blocks_per_*,
// requested_bytes_per_* (sizes asked, before malloc's rounding),
// other_thread_bytes_per_* (the part made on threads other than the
// measuring one: tandem's retirement), driver_bytes_per_* (made inside
// driver calls: excluded from the figure, shown), untagged_freed_bytes
// (blocks made before the window and freed in it, taken off the figure),
// and the label lists tandem's live blocks per unit by size.
//
// Only under TANDEM_BENCH_BACKEND=host (scripts/bench's host-only pass): on
// the GPU the driver's own threads allocate too, and their blocks would be
// counted as tandem's. Elsewhere the benchmark reports no figure and says
// so in its label (the judged rows are then absent, not failed).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench_env.hpp"
#include "heap_count.hpp"
#include "host_only_backend.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/launch.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

namespace {

namespace k = tandem::kernels;

const std::int64_t kAllocations = std::max<std::int64_t>(scaled(100'000), 1000);
const std::int64_t kSubmissions = std::max<std::int64_t>(scaled(10'000), 1000);
constexpr std::size_t kBufferBytes = 256;
constexpr std::chrono::milliseconds kHold{1500};
constexpr tandem::driver::LaunchDims kOneBlock{{1, 1, 1}, {32, 1, 1}, 0};

// Why there is no figure here, or empty when there is one.
std::string not_measured_here() {
  const char* b = std::getenv("TANDEM_BENCH_BACKEND");
  if (b == nullptr || std::string_view(b) != "host") {
    return "not measured: only with TANDEM_BENCH_BACKEND=host (scripts/bench's host-only pass); on a device "
           "the "
           "driver's own threads would be counted as tandem's";
  }
  std::string why;
  return heap::available(why) ? std::string() : "not measured: " + why;
}

// A platform of its own on the host-only backend, every driver call under
// heap::Scope(Kind::driver).
struct Own {
  tandem::Platform platform =
      tandem::Platform::with_backend(heap::make_driver_scoped_backend(make_host_only_backend()));
  tandem::Context ctx = tandem::Context::create(platform.device(0));
  tandem::Stream stream = unbounded(tandem::Stream::create(ctx));

  // BM_HostBytesPerSubmission holds 10,000 submissions behind one spin, past
  // the default bound on the device's queue (256); the bound's state is
  // part of the stream's record, allocated or not alike.
  static tandem::Stream unbounded(tandem::Stream s) {
    s.set_max_queued(0);
    return s;
  }

  void drain() const {
    stream.synchronize();
    if (!ctx.wait_for_retirement(std::chrono::seconds(60))) {
      throw std::runtime_error("the benchmark's context did not retire within 60 s");
    }
  }
};

const k::KernelEntry& entry(const char* name, tandem::DType t) {
  const k::KernelEntry* e = k::find(k::Model::simt, name, t);
  if (e == nullptr) throw std::runtime_error(std::string("the catalog has no ") + name + " kernel");
  return *e;
}

void launch_spin(const tandem::Stream& s, const tandem::View& bytes, std::uint64_t ns) {
  static const k::KernelEntry& spin = entry("spin", tandem::DType::u8);
  auto p = bytes.buffer_param<std::uint8_t>();
  void* params[] = {&p, &ns};
  const tandem::ViewAccess acc[] = {{&bytes, tandem::Access::read_write}};
  (void)tandem::launch(s, *spin.symbol, kOneBlock, params, acc);
}

void launch_copy(const tandem::Stream& s, const tandem::View& src, const tandem::View& dst) {
  static const k::KernelEntry& copy = entry("copy", tandem::DType::f32);
  auto ps = src.buffer_param<float>();
  auto pd = dst.buffer_param<float>();
  void* params[] = {&ps, &pd};
  const tandem::ViewAccess acc[] = {{&src, tandem::Access::read}, {&dst, tandem::Access::write}};
  (void)tandem::launch(s, *copy.symbol, kOneBlock, params, acc);
}

tandem::View small_buffer(const tandem::Stream& s) {
  return tandem::allocate(s, tandem::DType::f32, kBufferBytes / sizeof(float));
}

// Counters <unit>-scaled from what the window added, and the label: the
// largest shares of tandem's live blocks by size.
void report(benchmark::State& st, const heap::Counts& c, std::int64_t n, const char* unit) {
  const auto per = [n](std::int64_t x) { return static_cast<double>(x) / static_cast<double>(n); };
  const std::string u(unit);
  st.counters["bytes_per_" + u] = per(c.tandem_bytes());
  st.counters["blocks_per_" + u] = per(c.tandem_blocks());
  st.counters["requested_bytes_per_" + u] =
      per(c.requested[heap::tandem_main] + c.requested[heap::tandem_other]);
  st.counters["other_thread_bytes_per_" + u] = per(c.bytes[heap::tandem_other]);
  st.counters["driver_bytes_per_" + u] = per(c.bytes[heap::driver]);
  st.counters["bench_bytes"] = static_cast<double>(c.bytes[heap::bench]);
  st.counters["untagged_freed_bytes"] =
      static_cast<double>(c.untagged_bytes[heap::tandem_main] + c.untagged_bytes[heap::tandem_other]);
  st.counters["units"] = static_cast<double>(n);
  std::vector<std::pair<std::int64_t, std::size_t>> by_bytes;  // {live bytes, requested size}
  for (std::size_t size = 0; size < c.tandem_by_size.size(); ++size) {
    const std::int64_t blocks = c.tandem_by_size[size];
    if (blocks != 0) by_bytes.emplace_back(blocks * heap::chunk_bytes(size), size);
  }
  std::sort(by_bytes.begin(), by_bytes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string label = std::string("tandem's live blocks per ") + unit + " (requested size, glibc chunk):";
  for (std::size_t i = 0; i < by_bytes.size() && i < 5; ++i) {
    const std::size_t size = by_bytes[i].second;
    const double blocks = per(c.tandem_by_size[size]);
    char part[96];
    if (size > heap::Counts::kMaxSized) {
      std::snprintf(part, sizeof part, " %.3f x >%zu B;", blocks, heap::Counts::kMaxSized);
    } else {
      std::snprintf(part, sizeof part, " %.3f x %zu B (%lld B);", blocks, size,
                    static_cast<long long>(heap::chunk_bytes(size)));
    }
    label += part;
  }
  st.SetLabel(label);
}

void BM_HostBytesPerAllocation(benchmark::State& st) {
  for (auto _ : st) st.SetIterationTime(0.0);  // counters only (see BM_TrackerFootprint)
  if (const std::string why = not_measured_here(); !why.empty()) {
    st.SetLabel(why);
    return;
  }
  guarded(st, [&] {
    Own own;
    std::vector<tandem::View> views;
    views.reserve(static_cast<std::size_t>(kAllocations));
    for (int i = 0; i < 64; ++i) views.push_back(small_buffer(own.stream));  // first-use costs
    views.clear();
    own.drain();
    heap::Counts c;
    {
      heap::Window w;
      for (std::int64_t i = 0; i < kAllocations; ++i) views.push_back(small_buffer(own.stream));
      own.drain();
      c = w.close();
    }
    const std::uint64_t live = own.ctx.stats().live_allocations;
    if (live < static_cast<std::uint64_t>(kAllocations)) {
      throw std::runtime_error("only " + std::to_string(live) + " allocations live at the end of the window");
    }
    report(st, c, kAllocations, "allocation");
    views.clear();
    own.drain();
  });
}

void BM_HostBytesPerSubmission(benchmark::State& st) {
  for (auto _ : st) st.SetIterationTime(0.0);
  if (const std::string why = not_measured_here(); !why.empty()) {
    st.SetLabel(why);
    return;
  }
  guarded(st, [&] {
    Own own;
    const tandem::View held = tandem::allocate(own.stream, tandem::DType::u8, 256);
    std::vector<tandem::View> bufs;
    bufs.reserve(2 * static_cast<std::size_t>(kSubmissions));
    for (std::int64_t i = 0; i < 2 * kSubmissions; ++i) bufs.push_back(small_buffer(own.stream));
    own.drain();
    // First-use costs (the kernels' modules, the stream's first launch): one
    // launch of each. Their two records go back to the stream's pool and are
    // reused inside the window uncounted: 2 of N, shown as blocks_per_submission
    // just under 1.
    launch_copy(own.stream, bufs[0], bufs[1]);
    launch_spin(own.stream, held, 0);
    own.drain();
    // The stream busy for kHold: every launch behind the spin stays in flight.
    const auto t0 = Clock::now();
    launch_spin(own.stream, held, static_cast<std::uint64_t>(std::chrono::nanoseconds(kHold).count()));
    heap::Counts c;
    {
      heap::Window w;
      for (std::int64_t j = 0; j < kSubmissions; ++j) {
        launch_copy(own.stream, bufs[2 * static_cast<std::size_t>(j)],
                    bufs[2 * static_cast<std::size_t>(j) + 1]);
      }
      c = w.close();
    }
    const auto armed = Clock::now() - t0;
    const std::uint64_t pending = own.ctx.stats().pending_submissions;
    if (armed >= kHold || pending < static_cast<std::uint64_t>(kSubmissions)) {
      throw std::runtime_error(
          "the submissions did not stay in flight (" + std::to_string(pending) + " of " +
          std::to_string(kSubmissions) + " pending after " +
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(armed).count()) + " ms of a " +
          std::to_string(kHold.count()) + " ms hold)");
    }
    report(st, c, kSubmissions, "submission");
    st.counters["leases_per_submission"] = 2;
    own.drain();  // waits out the hold
  });
}

}  // namespace

void register_host_bytes_benchmarks() {
  for (auto [name, fn] : {std::pair{"BM_HostBytesPerAllocation", &BM_HostBytesPerAllocation},
                          std::pair{"BM_HostBytesPerSubmission", &BM_HostBytesPerSubmission}}) {
    benchmark::RegisterBenchmark(name, fn)->Iterations(1)->Repetitions(1)->UseManualTime();
  }
}

}  // namespace tandem_bench
