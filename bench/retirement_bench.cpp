// Retirement: how long until the runtime proves work done, and what a drop
// costs the caller while work is in flight.
//
//   BM_RawRoundTrip      raw launch + event record, spin on the event until
//                        complete (the host sees the GPU done)
//   BM_TrackedRoundTrip  tracked launch, drop the written buffer at once,
//                        spin until retirement has freed its memory
//   BM_DropInFlight      dropping the last view of a buffer a running kernel
//                        uses: the calling thread's time (the free happens
//                        later, on the retirement thread)
//
// Each iteration is timed with the host steady clock; counters p50/p99/max.
#include <stdexcept>
#include <string>

#include "bench_env.hpp"
#include "prepared_launch.hpp"

namespace tandem_bench {

namespace {

const std::int64_t kRoundTrips = scaled(5000);
const std::int64_t kDrops = scaled(5000);

void BM_RawRoundTrip(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, KernelKind::simt_copy);
    tandem::driver::Backend& b = e->platform.backend();
    tandem::driver::EventHandle ev;
    (void)b.event_create(e->ctx.native(), ev);
    Samples us(static_cast<std::size_t>(st.max_iterations));
    for (auto _ : st) {
      const auto t0 = Clock::now();
      k.raw(*d);
      d->event_record(ev.raw, k.native_stream());
      while (d->event_query(ev.raw) == RawDriver::kNotReady) {
      }
      us.add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    us.report(st, "us");
    (void)b.event_destroy(e->ctx.native(), ev);
  });
}

void BM_TrackedRoundTrip(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    const PreparedLaunch k(*e, e->stream, KernelKind::simt_copy);  // its src is the read view
    const tandem::kernels::KernelEntry& copy = k.entry();
    tandem::View src = tandem::allocate(e->stream, tandem::DType::f32, 1);
    const LeakWatch leaks(*e);
    auto ps = src.buffer_param<float>();
    Samples us(static_cast<std::size_t>(st.max_iterations));
    for (auto _ : st) {
      st.PauseTiming();
      tandem::View dst = tandem::allocate(e->stream, tandem::DType::f32, 1);
      e->drain();  // its allocation has retired: only the launch below is pending
      auto pd = dst.buffer_param<float>();
      void* params[] = {&ps, &pd};
      const tandem::ViewAccess acc[] = {{&src, tandem::Access::read}, {&dst, tandem::Access::write}};
      const std::uint64_t frees = e->ctx.stats().frees_total;
      st.ResumeTiming();
      const auto t0 = Clock::now();
      (void)tandem::launch(e->stream, *copy.symbol, k.dims(), params, acc);
      { tandem::View gone = std::move(dst); }
      while (e->ctx.stats().frees_total == frees) {  // lock-free counter: the free has reached the driver
      }
      us.add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    us.report(st, "us");
    leaks.report(st);
  });
}

void BM_DropInFlight(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    const tandem::kernels::KernelEntry* spin =
        tandem::kernels::find(tandem::kernels::Model::simt, "spin", tandem::DType::u8);
    if (spin == nullptr) throw std::runtime_error("the catalog has no spin kernel");
    const tandem::driver::LaunchDims one_block{{1, 1, 1}, {32, 1, 1}, 0};
    const LeakWatch leaks(*e);
    Samples ns(static_cast<std::size_t>(st.max_iterations));
    std::int64_t in_flight = 0;
    for (auto _ : st) {
      st.PauseTiming();
      tandem::View buf = tandem::allocate(e->stream, tandem::DType::u8, 256);
      auto p = buf.buffer_param<std::uint8_t>();
      std::uint64_t spin_ns = 20'000;
      void* params[] = {&p, &spin_ns};
      const tandem::ViewAccess acc[] = {{&buf, tandem::Access::read_write}};
      const tandem::LaunchFuture f = tandem::launch(e->stream, *spin->symbol, one_block, params, acc);
      st.ResumeTiming();
      const auto t0 = Clock::now();
      { tandem::View gone = std::move(buf); }
      const auto t1 = Clock::now();
      in_flight += f.done() ? 0 : 1;  // the drop really happened with the kernel running
      ns.add(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    ns.report(st, "ns");
    st.counters["in_flight_fraction"] = static_cast<double>(in_flight) / static_cast<double>(st.iterations());
    leaks.report(st);
  });
}

}  // namespace

void register_retirement_benchmarks() {
  benchmark::RegisterBenchmark("BM_RawRoundTrip", BM_RawRoundTrip)->Iterations(kRoundTrips)->UseRealTime();
  benchmark::RegisterBenchmark("BM_TrackedRoundTrip", BM_TrackedRoundTrip)->Iterations(kRoundTrips)->UseRealTime();
  benchmark::RegisterBenchmark("BM_DropInFlight", BM_DropInFlight)->Iterations(kDrops)->UseRealTime();
}

}  // namespace tandem_bench
