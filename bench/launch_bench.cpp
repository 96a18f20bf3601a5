// Launch, retirement, drop, allocation and uniqueness costs: tandem against
// the raw CUDA driver, in one process (so ratios compare like with like).
// Raw figures call the driver's own cuLaunchKernel / cuMemAllocAsync with
// the same kernel, arguments and stream. Requires a CUDA device.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "tandem/context.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/launch.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using tandem::DType;
using tandem::View;

// The raw driver entry points, straight from libcuda.
struct Raw {
  using LaunchFn = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           void*, void**, void**);
  using EventRecordFn = int (*)(void*, void*);
  using EventQueryFn = int (*)(void*);
  using AllocFn = int (*)(unsigned long long*, std::size_t, void*);
  using FreeFn = int (*)(unsigned long long, void*);
  LaunchFn launch = nullptr;
  EventRecordFn event_record = nullptr;
  EventQueryFn event_query = nullptr;
  AllocFn alloc_async = nullptr;
  FreeFn free_async = nullptr;
  Raw() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    launch = reinterpret_cast<LaunchFn>(dlsym(lib, "cuLaunchKernel"));
    event_record = reinterpret_cast<EventRecordFn>(dlsym(lib, "cuEventRecord"));
    event_query = reinterpret_cast<EventQueryFn>(dlsym(lib, "cuEventQuery"));
    alloc_async = reinterpret_cast<AllocFn>(dlsym(lib, "cuMemAllocAsync"));
    free_async = reinterpret_cast<FreeFn>(dlsym(lib, "cuMemFreeAsync"));
  }
};

struct Env {
  tandem::Platform platform = tandem::Platform::cuda();
  tandem::Context ctx = tandem::Context::create(platform.device(0));
  tandem::Stream stream = tandem::Stream::create(ctx);
  Raw raw;
  const tandem::kernels::KernelEntry* copy =
      tandem::kernels::find(tandem::kernels::Model::simt, "copy", DType::f32, nullptr);
  const tandem::kernels::KernelEntry* spin =
      tandem::kernels::find(tandem::kernels::Model::simt, "spin", DType::u8, nullptr);
  static Env& get() {
    static Env e;
    return e;
  }
  void* function(const tandem::kernels::KernelEntry& k) {
    tandem::driver::FunctionHandle f;
    (void)platform.backend().kernel_function(ctx.native(), *k.symbol, f);
    return f.raw;
  }
  void drain() {
    stream.synchronize();
    (void)ctx.wait_for_retirement(std::chrono::seconds(30));
  }
};

constexpr tandem::driver::LaunchDims kOneBlock{{1, 1, 1}, {32, 1, 1}, 0};

// The launch every comparison uses: SIMT copy of one f32 element, one read
// view and one write view, <<<1, 32>>>, on the benchmark stream. `raw()`
// launches it straight through libcuda; `tracked()` through tandem.
struct CopyLaunch {
  Env& e = Env::get();
  View src = tandem::allocate(e.stream, DType::f32, 1);
  View dst = tandem::allocate(e.stream, DType::f32, 1);
  tandem::BufferParam<float> ps = src.buffer_param<float>();
  tandem::BufferParam<float> pd = dst.buffer_param<float>();
  void* params[2] = {&ps, &pd};
  void* function = e.function(*e.copy);
  void* stream = e.stream.native().raw;
  tandem::ViewAccess accesses[2] = {{&src, tandem::Access::read}, {&dst, tandem::Access::write}};

  CopyLaunch() { e.drain(); }
  CopyLaunch(const CopyLaunch&) = delete;
  CopyLaunch& operator=(const CopyLaunch&) = delete;
  ~CopyLaunch() { e.drain(); }
  void raw() { e.raw.launch(function, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr); }
  // False (and the benchmark skipped) when libcuda lacks the raw symbols.
  bool raw_available(benchmark::State& st) const {
    if (e.raw.launch && e.raw.event_record && e.raw.event_query) return true;
    st.SkipWithError("libcuda.so.1 does not export the raw driver entry points");
    return false;
  }
  tandem::LaunchFuture tracked() { return tandem::launch(e.stream, *e.copy->symbol, kOneBlock, params, accesses); }
};

// --- launch: raw cuLaunchKernel vs tracked (one read view, one write view,
// future dropped) — same kernel, same arguments, same stream.
void BM_RawLaunch(benchmark::State& st) {
  CopyLaunch k;
  if (!k.raw_available(st)) return;
  for (auto _ : st) k.raw();
}
BENCHMARK(BM_RawLaunch)->Iterations(20000)->Repetitions(7)->ReportAggregatesOnly()->UseRealTime();

void BM_TrackedSimtLaunch(benchmark::State& st) {
  CopyLaunch k;
  for (auto _ : st) (void)k.tracked();
}
BENCHMARK(BM_TrackedSimtLaunch)->Iterations(20000)->Repetitions(7)->ReportAggregatesOnly()->UseRealTime();

// --- isolating the launch cost: raw launch + pooled event record; raw launch
// while another thread queries an event in a loop (driver contention).
void BM_RawLaunchEventRecord(benchmark::State& st) {
  CopyLaunch k;
  if (!k.raw_available(st)) return;
  std::vector<tandem::driver::EventHandle> events(4096);
  for (auto& ev : events) (void)k.e.platform.backend().event_create(k.e.ctx.native(), ev);
  std::size_t i = 0;
  for (auto _ : st) {
    k.raw();
    k.e.raw.event_record(events[i++ % events.size()].raw, k.stream);
  }
  k.e.drain();
  for (auto& ev : events) (void)k.e.platform.backend().event_destroy(k.e.ctx.native(), ev);
}
BENCHMARK(BM_RawLaunchEventRecord)->Iterations(20000)->Repetitions(5)->ReportAggregatesOnly()->UseRealTime();

void BM_RawLaunchWhileQuerying(benchmark::State& st) {
  CopyLaunch k;
  if (!k.raw_available(st)) return;
  tandem::driver::EventHandle ev;
  (void)k.e.platform.backend().event_create(k.e.ctx.native(), ev);
  k.e.raw.event_record(ev.raw, k.stream);
  std::atomic<bool> stop{false};
  const auto gap = std::chrono::microseconds(st.range(0));
  std::thread querier([&] {
    while (!stop.load()) {
      k.e.raw.event_query(ev.raw);
      const auto until = Clock::now() + gap;
      while (Clock::now() < until) {
      }
    }
  });
  for (auto _ : st) k.raw();
  stop = true;
  querier.join();
  k.e.drain();
  (void)k.e.platform.backend().event_destroy(k.e.ctx.native(), ev);
}
BENCHMARK(BM_RawLaunchWhileQuerying)->Arg(0)->Arg(2)->Arg(30)->Iterations(20000)->Repetitions(3)->ReportAggregatesOnly()->UseRealTime();

// --- round trip: launch → completion seen by the host (raw: spin on the
// event) vs launch → drop the buffer → its memory freed by retirement.
void report_latencies(benchmark::State& st, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  st.counters["p50_us"] = us[us.size() / 2];
  st.counters["p99_us"] = us[us.size() * 99 / 100];
  st.counters["max_us"] = us.back();
}

void BM_RawRoundTrip(benchmark::State& st) {
  CopyLaunch k;
  if (!k.raw_available(st)) return;
  Env& e = k.e;
  tandem::driver::EventHandle ev;
  (void)e.platform.backend().event_create(e.ctx.native(), ev);
  std::vector<double> us;
  for (auto _ : st) {
    const auto t0 = Clock::now();
    k.raw();
    e.raw.event_record(ev.raw, k.stream);
    while (e.raw.event_query(ev.raw) != 0) {
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  report_latencies(st, us);
  (void)e.platform.backend().event_destroy(e.ctx.native(), ev);
}
BENCHMARK(BM_RawRoundTrip)->Iterations(5000)->UseRealTime();

void BM_TrackedRoundTrip(benchmark::State& st) {
  Env& e = Env::get();
  View src = tandem::allocate(e.stream, DType::f32, 1);
  auto ps = src.buffer_param<float>();
  e.drain();
  std::vector<double> us;
  for (auto _ : st) {
    st.PauseTiming();
    View dst = tandem::allocate(e.stream, DType::f32, 1);
    e.drain();
    auto pd = dst.buffer_param<float>();
    void* params[] = {&ps, &pd};
    const tandem::ViewAccess acc[] = {{&src, tandem::Access::read}, {&dst, tandem::Access::write}};
    const auto frees = e.ctx.stats().frees_total;
    st.ResumeTiming();
    const auto t0 = Clock::now();
    (void)tandem::launch(e.stream, *e.copy->symbol, kOneBlock, params, acc);
    { View gone = std::move(dst); }
    while (e.ctx.stats().frees_total == frees) {
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  report_latencies(st, us);
}
BENCHMARK(BM_TrackedRoundTrip)->Iterations(5000)->UseRealTime();

// --- drop with work in flight: the calling thread's cost.
void BM_DropInFlight(benchmark::State& st) {
  Env& e = Env::get();
  std::vector<double> ns;
  for (auto _ : st) {
    st.PauseTiming();
    View buf = tandem::allocate(e.stream, DType::u8, 256);
    auto p = buf.buffer_param<std::uint8_t>();
    std::uint64_t spin_ns = 20'000;
    void* params[] = {&p, &spin_ns};
    const tandem::ViewAccess acc[] = {{&buf, tandem::Access::read_write}};
    (void)tandem::launch(e.stream, *e.spin->symbol, kOneBlock, params, acc);
    st.ResumeTiming();
    const auto t0 = Clock::now();
    { View gone = std::move(buf); }
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  st.counters["p50_ns"] = ns[ns.size() / 2];
  st.counters["max_ns"] = ns.back();
  e.drain();
}
BENCHMARK(BM_DropInFlight)->Iterations(5000)->UseRealTime();

// --- allocation + free: raw stream-ordered pair vs tandem allocate + drop.
void BM_RawAllocFree(benchmark::State& st) {
  Env& e = Env::get();
  if (!e.raw.alloc_async || !e.raw.free_async) {
    st.SkipWithError("libcuda.so.1 does not export the raw driver entry points");
    return;
  }
  void* s = e.stream.native().raw;
  e.drain();
  for (auto _ : st) {
    unsigned long long p = 0;
    e.raw.alloc_async(&p, 1 << 20, s);
    e.raw.free_async(p, s);
  }
  e.drain();
}
BENCHMARK(BM_RawAllocFree)->Iterations(20000)->Repetitions(5)->ReportAggregatesOnly()->UseRealTime();

void BM_TrackedAllocFree(benchmark::State& st) {
  Env& e = Env::get();
  e.drain();
  for (auto _ : st) {
    View v = tandem::allocate(e.stream, DType::u8, 1 << 20);
    benchmark::DoNotOptimize(v);
  }
  e.drain();
}
BENCHMARK(BM_TrackedAllocFree)->Iterations(20000)->Repetitions(5)->ReportAggregatesOnly()->UseRealTime();

void BM_UniquenessCheck(benchmark::State& st) {
  Env& e = Env::get();
  View v = tandem::allocate(e.stream, DType::u8, 256);
  for (auto _ : st) benchmark::DoNotOptimize(v.is_unique());
}
BENCHMARK(BM_UniquenessCheck);

}  // namespace

BENCHMARK_MAIN();
