// SPDX-License-Identifier: Apache-2.0
// Release of memory leased on several streams (issue 21; docs/runtime.md,
// "Several streams"): the two MultiStreamRelease modes in the same run,
// information only (scripts/bench_report.py: not judged), until an H200
// measurement settles the default.
//
//   BM_MultiStreamRelease/host_proven     a context of its own with the mode,
//   BM_MultiStreamRelease/release_stream  streams s0, s1, s2; each iteration:
//                          the buffer allocated on s0 is read on s1 and on
//                          s2 by a 20 us kernel (the catalog's spin, leasing
//                          it for reading), dropped while both run, and the
//                          same size allocated again on s0. On the GPU the
//                          buffer is 60 % of the free memory, so the new one
//                          can only have the dropped one's memory. On the
//                          host-only backend and the sim, whose devices back
//                          every byte with host memory they fill at each
//                          allocation, it is 1 MiB, which the memory does not
//                          force to be reused (counter memory_needed 0):
//                          there the run shows that both paths work; its
//                          times include the sim's own memory work (it
//                          fills each new block's host bytes and poisons
//                          each freed one, under its memory lock), so they
//                          say nothing about a device.
//
// Counters: iterations_per_s (the loop's wall time), p50/p99/max_reuse_us
// (the drop to the next allocation's return: how long until the dropped
// memory was reusable, or the allocation otherwise satisfied),
// pressure_retries_per_iteration, stream_ordered_releases and
// host_proven_releases (which path the releases took), buffer_mib,
// memory_needed, and leaked_allocations / quarantined_submissions after the
// context's work retired.
#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include "bench_env.hpp"
#include "tandem/launch.hpp"
#include "tandem/multi_stream_release.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

namespace {

namespace k = tandem::kernels;

const std::int64_t kLoops = scaled(30);
constexpr std::uint64_t kReadNs = 20'000;
constexpr double kFraction = 0.6;
constexpr std::uint64_t kHostBufferBytes = std::uint64_t{1} << 20;
constexpr std::uint64_t kAlign = std::uint64_t{1} << 20;

const k::KernelEntry& spin_entry() {
  const k::KernelEntry* spin = k::find(k::Model::simt, "spin", tandem::DType::u8);
  if (spin == nullptr) throw std::runtime_error("the catalog has no spin kernel");
  return *spin;
}

// A short kernel that leases `x` for reading on `s` (the spin touches no
// byte of it: a read lease is what a reader takes).
void read_on(const tandem::Stream& s, const tandem::View& x, const k::KernelEntry& spin) {
  auto p = x.buffer_param<std::uint8_t>();
  std::uint64_t ns = kReadNs;
  void* params[] = {&p, &ns};
  const tandem::ViewAccess acc[] = {{&x, tandem::Access::read}};
  const tandem::driver::LaunchDims one_block{{1, 1, 1}, {32, 1, 1}, 0};
  std::move(tandem::launch(s, *spin.symbol, one_block, params, acc)).forget();
}

// The buffer's size: most of the free memory on the GPU, so that two never
// fit at once; a fixed 1 MiB elsewhere (see the top of this file).
std::uint64_t buffer_bytes(const Env& e, const tandem::Context& ctx) {
  const std::uint64_t free_bytes = ctx.memory_info().free_bytes;
  if (e.platform.backend_name() != "cuda")
    return std::min(kHostBufferBytes, free_bytes / 4 / kAlign * kAlign);
  return static_cast<std::uint64_t>(static_cast<double>(free_bytes) * kFraction) / kAlign * kAlign;
}

void retire(const tandem::Context& ctx) {
  if (!ctx.wait_for_retirement(std::chrono::seconds(60))) {
    throw std::runtime_error("the loop's work did not retire within 60 s of its end");
  }
}

void report(benchmark::State& st, const tandem::RuntimeStats& before, const tandem::RuntimeStats& after,
            std::int64_t loops, double seconds) {
  st.counters["iterations_per_s"] = seconds > 0 ? static_cast<double>(loops) / seconds : 0.0;
  st.counters["pressure_retries_per_iteration"] =
      static_cast<double>(after.pressure_retries - before.pressure_retries) / static_cast<double>(loops);
  st.counters["stream_ordered_releases"] =
      static_cast<double>(after.stream_ordered_releases - before.stream_ordered_releases);
  st.counters["host_proven_releases"] =
      static_cast<double>(after.host_proven_releases - before.host_proven_releases);
  st.counters["leaked_allocations"] = static_cast<double>(after.live_allocations);
  st.counters["quarantined_submissions"] = static_cast<double>(after.quarantined_submissions);
}

void BM_MultiStreamRelease(benchmark::State& st, tandem::MultiStreamRelease mode) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    const k::KernelEntry& spin = spin_entry();
    e->drain();
    tandem::ContextOptions o;
    o.multi_stream_release = mode;
    const tandem::Context ctx = tandem::Context::create(e->platform.device(0), o);
    ctx.load_kernel(*spin.symbol);  // a lazy load would wait for running kernels
    std::optional<tandem::Stream> s0 = tandem::Stream::create(ctx);
    std::optional<tandem::Stream> s1 = tandem::Stream::create(ctx);
    std::optional<tandem::Stream> s2 = tandem::Stream::create(ctx);
    const std::uint64_t bytes = buffer_bytes(*e, ctx);
    const std::uint64_t free_before = ctx.memory_info().free_bytes;
    Samples reuse(static_cast<std::size_t>(st.max_iterations));
    std::optional<tandem::View> x = tandem::allocate(*s0, tandem::DType::u8, bytes);
    const tandem::RuntimeStats before = ctx.stats();
    std::int64_t loops = 0;
    const auto t0 = Clock::now();
    for (auto _ : st) {
      read_on(*s1, *x, spin);
      read_on(*s2, *x, spin);
      const auto dropped = Clock::now();
      x.reset();  // both reads still run (20 us): the release takes the mode's path
      x = tandem::allocate(*s0, tandem::DType::u8, bytes);
      reuse.add(std::chrono::duration<double, std::micro>(Clock::now() - dropped).count());
      ++loops;
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    x.reset();
    retire(ctx);
    const tandem::RuntimeStats after = ctx.stats();
    ctx.trim();  // the pool's cached memory back before the next benchmark asks what is free
    s0.reset();
    s1.reset();
    s2.reset();
    retire(ctx);
    reuse.report(st, "reuse_us");
    report(st, before, after, loops, seconds);
    st.counters["buffer_mib"] = static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 20);
    st.counters["memory_needed"] = 2 * bytes > free_before ? 1.0 : 0.0;
  });
}

}  // namespace

void register_release_benchmarks() {
  for (const tandem::MultiStreamRelease m : tandem::kAllMultiStreamReleases) {
    const std::string name = "BM_MultiStreamRelease/" + std::string(tandem::multi_stream_release_name(m));
    benchmark::RegisterBenchmark(name.c_str(), [m](benchmark::State& st) { BM_MultiStreamRelease(st, m); })
        ->Iterations(kLoops)
        ->UseRealTime();
  }
}

}  // namespace tandem_bench
