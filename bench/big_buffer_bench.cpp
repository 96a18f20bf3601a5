// SPDX-License-Identifier: Apache-2.0
// Buffers too large for two to fit at once (issue 21): each dropped with
// work in flight, the next allocated at once.
//
//   BM_BigBufferLoop       one stream of a context of its own (default
//                          options): 10 x {allocate 60 % of the device's free
//                          memory; the catalog's SIMT spin for 1 ms on it;
//                          drop}, timed from before the first allocation to the
//                          stream drained after the tenth drop (setup, the
//                          free-memory query and the clean-up after are not
//                          timed). An allocation that fails fails the
//                          benchmark with "big-buffer loop failed at iteration
//                          N of 10 ...: <the error>" (scripts/bench_report.py
//                          judges that prefix as a miss).
//   BM_RawBigBufferLoop    the same with cuMemAllocFromPoolAsync /
//                          cuLaunchKernel / cuMemFreeAsync on a pool made like
//                          tandem's.
//
// Repetitions: the command line's (scripts/bench: 3).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "bench_env.hpp"
#include "paired.hpp"
#include "sustained_loop.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

namespace {

using namespace sustained;  // NOLINT(google-build-using-namespace): check_rc, raw_launch, BackendPool,
                            // RawStreams

constexpr int kBigIterations = 10;
constexpr double kBigFraction = 0.6;
constexpr std::uint64_t kSpinNs = 1'000'000;  // 1 ms
constexpr std::size_t kBigAlign = std::size_t{1} << 20;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const k::KernelEntry& spin_entry() {
  const k::KernelEntry* spin = k::find(k::Model::simt, "spin", tandem::DType::u8);
  if (spin == nullptr) throw std::runtime_error("the catalog has no spin kernel");
  return *spin;
}

std::size_t big_buffer_bytes(std::size_t free_bytes) {
  const auto bytes = static_cast<std::size_t>(static_cast<double>(free_bytes) * kBigFraction);
  return bytes / kBigAlign * kBigAlign;
}

[[noreturn]] void big_loop_failed(int iteration, std::size_t bytes, std::size_t free_bytes,
                                  const std::string& why) {
  // scripts/bench_report.py reads this prefix as the loop's miss.
  char sizes[96];
  std::snprintf(sizes, sizeof sizes, "%.2f GiB each, %.2f GiB free before the loop",
                static_cast<double>(bytes) / kGiB, static_cast<double>(free_bytes) / kGiB);
  throw std::runtime_error("big-buffer loop failed at iteration " + std::to_string(iteration) + " of " +
                           std::to_string(kBigIterations) + " (" + sizes + "): " + why);
}

void report_big(benchmark::State& st, double seconds, std::size_t bytes, std::size_t free_bytes) {
  st.counters["loop_s"] = seconds;
  st.counters["passed"] = 1;
  st.counters["iterations"] = kBigIterations;
  st.counters["buffer_gib"] = static_cast<double>(bytes) / kGiB;
  st.counters["free_gib"] = static_cast<double>(free_bytes) / kGiB;
}

void BM_BigBufferLoop(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    const k::KernelEntry& spin = spin_entry();
    settle(*e);
    for (auto _ : st) {
      const tandem::Context ctx = tandem::Context::create(e->platform.device(0));
      std::optional<tandem::Stream> stream = tandem::Stream::create(ctx);
      const tandem::Stream& s = *stream;
      ctx.load_kernel(*spin.symbol);
      const std::size_t free_bytes = ctx.memory_info().free_bytes;
      const std::size_t bytes = big_buffer_bytes(free_bytes);
      std::string error;
      int i = 0;
      const auto t0 = Clock::now();
      try {
        for (; i < kBigIterations; ++i) {
          const tandem::View buf = tandem::allocate(s, tandem::DType::u8, bytes);
          const k::Arg args[] = {k::Arg::of(buf), k::Arg::value(kSpinNs)};
          (void)k::launch(s, spin, args);
        }
        s.synchronize();
      } catch (const std::exception& ex) {
        error = ex.what();  // tandem::Error's text starts with its code (out_of_memory: ...)
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      // Untimed: everything retired and freed, and the pool's cached memory
      // given back, before the next repetition asks what is free (the
      // context itself goes only once its stream is destroyed, later).
      s.synchronize();
      const auto retire = [&] {
        if (!ctx.wait_for_retirement(std::chrono::seconds(60))) {
          throw std::runtime_error("the big-buffer loop's work did not retire within 60 s of its end");
        }
      };
      retire();
      const tandem::RuntimeStats stats = ctx.stats();
      ctx.trim();
      stream.reset();
      retire();  // the dropped stream destroyed
      if (!error.empty()) big_loop_failed(i + 1, bytes, free_bytes, error);
      st.SetIterationTime(seconds);
      report_big(st, seconds, bytes, free_bytes);
      st.counters["leaked_allocations"] = static_cast<double>(stats.live_allocations);
      st.counters["quarantined_submissions"] = static_cast<double>(stats.quarantined_submissions);
      st.counters["pressure_retries"] = static_cast<double>(stats.pressure_retries);
      st.counters["pressure_recoveries"] = static_cast<double>(stats.pressure_recoveries);
      st.counters["same_stream_reuses"] = static_cast<double>(stats.same_stream_reuses);
      st.counters["stream_ordered_releases"] = static_cast<double>(stats.stream_ordered_releases);
      st.counters["host_proven_releases"] = static_cast<double>(stats.host_proven_releases);
    }
  });
}

void BM_RawBigBufferLoop(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    const k::KernelEntry& spin = spin_entry();
    drv::Backend& b = e->platform.backend();
    const drv::ContextHandle ctx = e->ctx.native();
    void* fn = e->function(spin);
    settle(*e);
    for (auto _ : st) {
      const BackendPool pool(b, ctx);
      const RawStreams streams(b, ctx, 1);
      void* s = streams.raw(0);
      std::size_t free_bytes = 0, total = 0;
      if (const drv::Result r = b.mem_info(ctx, free_bytes, total); !r.ok())
        throw std::runtime_error(b.describe(r));
      const std::size_t bytes = big_buffer_bytes(free_bytes);
      const k::ArgShape shapes[] = {k::ArgShape::buffer(tandem::DType::u8, bytes), k::ArgShape{}};
      drv::LaunchDims dims;
      k::PackedParams params;
      const k::LaunchArg args[] = {k::LaunchArg::view(0, shapes[0]), k::LaunchArg::value(kSpinNs)};
      std::string why = k::launch_dims(spin, shapes, std::nullopt, std::nullopt, dims);
      if (why.empty()) why = k::pack_params(spin, args, params);
      if (!why.empty()) throw std::runtime_error("spin: " + why);
      void** pp = params.pointers();
      check_rc(d->ctx_set_current(ctx.raw), "cuCtxSetCurrent");
      std::string error;
      int i = 0;
      const auto t0 = Clock::now();
      try {
        for (; i < kBigIterations; ++i) {
          unsigned long long p = 0;
          check_rc(d->alloc_from_pool_async(&p, bytes, pool.raw(), s), "cuMemAllocFromPoolAsync");
          raw_launch(*d, fn, dims, pp, p, s);
          check_rc(d->free_async(p, s), "cuMemFreeAsync");
        }
        check_rc(d->stream_synchronize(s), "cuStreamSynchronize");
      } catch (const std::exception& ex) {
        error = ex.what();
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      if (!error.empty()) big_loop_failed(i + 1, bytes, free_bytes, error);
      st.SetIterationTime(seconds);
      report_big(st, seconds, bytes, free_bytes);
    }
  });
}

}  // namespace

void register_big_buffer_benchmarks() {
  benchmark::RegisterBenchmark("BM_BigBufferLoop", BM_BigBufferLoop)->Iterations(1)->UseManualTime();
  benchmark::RegisterBenchmark("BM_RawBigBufferLoop", BM_RawBigBufferLoop)->Iterations(1)->UseManualTime();
}

}  // namespace tandem_bench
