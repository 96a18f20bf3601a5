// SPDX-License-Identifier: Apache-2.0
// Launch cost on one host thread: raw cuLaunchKernel against tracked
// launches of the same kernel with the same arguments on the same stream
// (one read view, one write view, the future dropped), for a SIMT and a
// Tile kernel. Host-timed loops: the GPU runs each 1-block kernel faster
// than the host submits it, so the figure is the submission cost.
//
//   BM_RawLaunch / BM_TrackedSimtLaunch / BM_CatalogSimtLaunch   SIMT copy
//   BM_RawTileLaunch / BM_TrackedTileLaunch / BM_CatalogTileLaunch  Tile copy
//   BM_RawLaunchEventRecord     raw launch + a pooled event record (tandem's
//                               per-submission driver work, without tandem)
//   BM_RawLaunchWhileQuerying/N raw launch while another thread queries an
//                               event every N µs (the retirement thread's
//                               driver contention)
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_env.hpp"
#include "prepared_launch.hpp"

namespace tandem_bench {

namespace {

// Launches per repetition: enough to amortise the loop, small enough for
// the whole suite to stay within gpu-check's time.
const std::int64_t kLaunches = scaled(20000);

void raw_loop(benchmark::State& st, KernelKind kind) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, kind);
    if (const int rc = k.raw(*d); rc != 0)
      throw std::runtime_error("cuLaunchKernel: CUresult " + std::to_string(rc));
    for (auto _ : st) k.raw(*d);
    e->drain();
  });
}

void tracked_loop(benchmark::State& st, KernelKind kind, bool catalog) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, kind);
    const LeakWatch leaks(*e);
    if (catalog) {
      for (auto _ : st) (void)k.catalog();
    } else {
      for (auto _ : st) (void)k.tracked();
    }
    leaks.report(st);
  });
}

void BM_RawLaunch(benchmark::State& st) { raw_loop(st, KernelKind::simt_copy); }
void BM_TrackedSimtLaunch(benchmark::State& st) { tracked_loop(st, KernelKind::simt_copy, false); }
void BM_CatalogSimtLaunch(benchmark::State& st) { tracked_loop(st, KernelKind::simt_copy, true); }
void BM_RawTileLaunch(benchmark::State& st) { raw_loop(st, KernelKind::tile_copy); }
void BM_TrackedTileLaunch(benchmark::State& st) { tracked_loop(st, KernelKind::tile_copy, false); }
void BM_CatalogTileLaunch(benchmark::State& st) { tracked_loop(st, KernelKind::tile_copy, true); }

void BM_RawLaunchEventRecord(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, KernelKind::simt_copy);
    tandem::driver::Backend& b = e->platform.backend();
    std::vector<tandem::driver::EventHandle> events(4096);  // a pool, like tandem's
    for (auto& ev : events) (void)b.event_create(e->ctx.native(), ev);
    std::size_t i = 0;
    for (auto _ : st) {
      k.raw(*d);
      d->event_record(events[i++ % events.size()].raw, k.native_stream());
    }
    e->drain();
    for (auto& ev : events) (void)b.event_destroy(e->ctx.native(), ev);
  });
}

void BM_RawLaunchWhileQuerying(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, KernelKind::simt_copy);
    tandem::driver::Backend& b = e->platform.backend();
    tandem::driver::EventHandle ev;
    (void)b.event_create(e->ctx.native(), ev);
    d->event_record(ev.raw, k.native_stream());
    std::atomic<bool> stop{false};
    const auto gap = std::chrono::microseconds(st.range(0));
    void* ctx = e->ctx.native().raw;
    std::thread querier([&] {
      d->ctx_set_current(ctx);
      while (!stop.load()) {
        d->event_query(ev.raw);
        const auto until = Clock::now() + gap;
        while (Clock::now() < until) {  // busy gap: the querier is a polling thread, not a sleeper
        }
      }
    });
    for (auto _ : st) k.raw(*d);
    stop = true;
    querier.join();
    e->drain();
    (void)b.event_destroy(e->ctx.native(), ev);
  });
}

}  // namespace

void register_launch_benchmarks() {
  for (auto [name, fn] :
       {std::pair{"BM_RawLaunch", &BM_RawLaunch}, std::pair{"BM_TrackedSimtLaunch", &BM_TrackedSimtLaunch},
        std::pair{"BM_CatalogSimtLaunch", &BM_CatalogSimtLaunch},
        std::pair{"BM_RawTileLaunch", &BM_RawTileLaunch},
        std::pair{"BM_TrackedTileLaunch", &BM_TrackedTileLaunch},
        std::pair{"BM_CatalogTileLaunch", &BM_CatalogTileLaunch},
        std::pair{"BM_RawLaunchEventRecord", &BM_RawLaunchEventRecord}}) {
    benchmark::RegisterBenchmark(name, fn)->Iterations(kLaunches)->UseRealTime();
  }
  benchmark::RegisterBenchmark("BM_RawLaunchWhileQuerying", BM_RawLaunchWhileQuerying)
      ->Arg(0)
      ->Arg(2)
      ->Arg(30)
      ->Iterations(kLaunches)
      ->UseRealTime();
}

}  // namespace tandem_bench
