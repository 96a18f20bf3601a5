// SPDX-License-Identifier: Apache-2.0
// Bandwidth of the Tile bandwidth kernels (kernels/README.md: copy and
// transpose reach >= 80 % of device-to-device copy bandwidth on 1 GiB f32
// tensors), measured against a raw driver device-to-device copy of the same
// bytes in the same process. Needs the cuda backend.
//
// Every figure: warm up, then per benchmark iteration N submissions on one
// stream between two stream synchronizations, timed with the host steady
// clock (manual time). Bytes count read + write (a 1 GiB copy moves 2 GiB).
// `ratio_vs_memcpy` divides by the driver memcpy bandwidth measured the
// same way in this run.
//
//   tandem_bench --benchmark_filter='Memcpy|Copy_|Transpose|SimtTileSimt'
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/view.hpp"

namespace tandem_bench {

namespace {

using tandem::DType;
using tandem::View;
namespace k = tandem::kernels;

constexpr std::int64_t kSide = 16384;                                           // 16384 x 16384 f32
constexpr std::uint64_t kElements = static_cast<std::uint64_t>(kSide) * kSide;  // 2^28
constexpr std::uint64_t kBytes = kElements * sizeof(float);                     // 1 GiB
constexpr int kBatch = 10;       // submissions between two synchronizations
constexpr int kIterations = 20;  // timed batches per benchmark
constexpr int kWarmup = 3;

const k::KernelEntry& entry(k::Model m, const char* name, int rank = 0) {
  const k::KernelEntry* e = k::find(m, name, DType::f32, nullptr, rank);
  if (e == nullptr) throw std::runtime_error(std::string("no f32 kernel ") + name);
  return *e;
}

// Two 1 GiB tensors (and their other forms) on the shared stream, made at
// the first bandwidth benchmark and kept until the end of the run.
struct Bandwidth {
  Env& env;
  tandem::Platform& platform = env.platform;
  tandem::Context& ctx = env.ctx;
  tandem::Stream& stream = env.stream;
  View src;   // tensor [kSide, kSide]
  View dst;   // tensor [kSide, kSide]
  View src1;  // the same memory as a rank-1 tensor [2^28]
  View dst1;
  View src_buf;  // the same memory as borrowed buffers (tandem::copy)
  View dst_buf;
  std::optional<double> memcpy_bps;

  explicit Bandwidth(Env& e) : env(e) {
    View s = tandem::allocate(stream, DType::f32, kElements);
    View d = tandem::allocate(stream, DType::f32, kElements);
    {
      const k::Arg a[] = {k::Arg::of(s), k::Arg::value(0.0), k::Arg::value(1.0)};
      (void)k::launch(stream, entry(k::Model::simt, "iota"), a);
      const k::Arg b[] = {k::Arg::of(d), k::Arg::value(-1.0)};
      (void)k::launch(stream, entry(k::Model::simt, "fill"), b);
    }
    const std::int64_t shape2[] = {kSide, kSide};
    const std::int64_t shape1[] = {static_cast<std::int64_t>(kElements)};
    src = std::move(s).to_tensor(shape2);
    dst = std::move(d).to_tensor(shape2);
    src1 = src.tensor_view(std::span<const std::int64_t>(shape1), std::nullopt);
    dst1 = dst.tensor_view(std::span<const std::int64_t>(shape1), std::nullopt);
    src_buf = src.as_buffer();
    dst_buf = dst.as_buffer();
    stream.synchronize();
  }

  // The state, or null after SkipWithError (no device, the sim, no memory).
  static Bandwidth* get(benchmark::State& st) {
    static std::unique_ptr<Bandwidth> b;
    static std::string failure;
    if (b) return b.get();
    Env* e = Env::get(st);
    if (e == nullptr) return nullptr;
    if (e->is_sim()) failure = "the bandwidth figures need the cuda backend";
    if (failure.empty()) {
      try {
        b = std::make_unique<Bandwidth>(*e);
        at_teardown([] { b.reset(); });
        return b.get();
      } catch (const std::exception& ex) {
        failure = std::string("1 GiB bandwidth tensors: ") + ex.what();
      }
    }
    st.SkipWithError(failure.c_str());
    return nullptr;
  }

  void raw_memcpy() {
    const tandem::driver::Result r = platform.backend().memcpy_async(
        ctx.native(), dst.device_ptr(), src.device_ptr(), kBytes, stream.native());
    if (!r.ok()) throw std::runtime_error("memcpy_async: " + platform.backend().describe(r));
  }
};

// Seconds for kBatch submissions of `submit` between two synchronizations.
template <class F>
double time_batch(Bandwidth& e, F&& submit) {
  e.stream.synchronize();
  const auto t0 = Clock::now();
  for (int i = 0; i < kBatch; ++i) submit();
  e.stream.synchronize();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs the benchmark loop; returns bytes/s (total bytes / total time).
template <class F>
double run_batches(benchmark::State& st, Bandwidth& e, double bytes_per_submission, F&& submit) {
  for (int i = 0; i < kWarmup; ++i) submit();
  e.stream.synchronize();
  double total = 0.0;
  for (auto _ : st) {
    const double s = time_batch(e, submit);
    st.SetIterationTime(s);
    total += s;
  }
  const double bytes = bytes_per_submission * kBatch * static_cast<double>(st.iterations());
  st.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  const double bps = total > 0 ? bytes / total : 0.0;
  st.counters["GBps"] = benchmark::Counter(bps / 1e9);
  st.counters["ms_per_op"] =
      benchmark::Counter(total * 1e3 / (kBatch * static_cast<double>(st.iterations())));
  return bps;
}

// The driver's device-to-device copy bandwidth, measured once per process
// by the same method (the denominator of every ratio).
double memcpy_bandwidth(Bandwidth& e) {
  if (!e.memcpy_bps) {
    for (int i = 0; i < kWarmup; ++i) e.raw_memcpy();
    double total = 0.0;
    for (int i = 0; i < kIterations; ++i) total += time_batch(e, [&] { e.raw_memcpy(); });
    e.memcpy_bps = 2.0 * static_cast<double>(kBytes) * kBatch * kIterations / total;
  }
  return *e.memcpy_bps;
}

void report_ratio(benchmark::State& st, Bandwidth& e, double bps) {
  st.counters["ratio_vs_memcpy"] = benchmark::Counter(bps / memcpy_bandwidth(e));
}

// --- baselines ------------------------------------------------------------------------

void BM_DriverMemcpy_1GiB(benchmark::State& st) {
  Bandwidth* b = Bandwidth::get(st);
  if (b == nullptr) return;
  guarded(st, [&] {
    Bandwidth& e = *b;
    const double bps = run_batches(st, e, 2.0 * kBytes, [&] { e.raw_memcpy(); });
    if (!e.memcpy_bps) e.memcpy_bps = bps;
    report_ratio(st, e, bps);
  });
}

// tandem::copy: the same driver copy as a tracked submission (leases, events).
void BM_TandemCopy_1GiB(benchmark::State& st) {
  Bandwidth* b = Bandwidth::get(st);
  if (b == nullptr) return;
  guarded(st, [&] {
    Bandwidth& e = *b;
    const double bps =
        run_batches(st, e, 2.0 * kBytes, [&] { (void)tandem::copy(e.stream, e.src_buf, e.dst_buf); });
    report_ratio(st, e, bps);
  });
}

// --- Tile bandwidth kernels -------------------------------------------------------------

void BM_TileCopy_Rank1_4096_1GiB(benchmark::State& st) {
  Bandwidth* b = Bandwidth::get(st);
  if (b == nullptr) return;
  guarded(st, [&] {
    Bandwidth& e = *b;
    const k::KernelEntry& copy = entry(k::Model::tile, "copy", 1);
    st.SetLabel(std::string(copy.entry_point()));
    const k::Arg a[] = {k::Arg::of(e.src1), k::Arg::of(e.dst1)};
    const double bps = run_batches(st, e, 2.0 * kBytes, [&] { (void)k::launch(e.stream, copy, a); });
    report_ratio(st, e, bps);
  });
}

void BM_TileCopy_Rank2_64x64_1GiB(benchmark::State& st) {
  Bandwidth* b = Bandwidth::get(st);
  if (b == nullptr) return;
  guarded(st, [&] {
    Bandwidth& e = *b;
    const k::KernelEntry& copy = entry(k::Model::tile, "copy", 2);
    st.SetLabel(std::string(copy.entry_point()));
    const k::Arg a[] = {k::Arg::of(e.src), k::Arg::of(e.dst)};
    const double bps = run_batches(st, e, 2.0 * kBytes, [&] { (void)k::launch(e.stream, copy, a); });
    report_ratio(st, e, bps);
  });
}

void BM_TileTranspose_64x64_1GiB(benchmark::State& st) {
  Bandwidth* b = Bandwidth::get(st);
  if (b == nullptr) return;
  guarded(st, [&] {
    Bandwidth& e = *b;
    const k::KernelEntry& transpose = entry(k::Model::tile, "transpose", 2);
    st.SetLabel(std::string(transpose.entry_point()));
    const k::Arg a[] = {k::Arg::of(e.src), k::Arg::of(e.dst)};
    const double bps = run_batches(st, e, 2.0 * kBytes, [&] { (void)k::launch(e.stream, transpose, a); });
    report_ratio(st, e, bps);
  });
}

// --- SIMT -> Tile -> SIMT round trip (for information) ------------------------------------
// One op: SIMT fill of a 1 GiB buffer, to_tensor [16384, 16384] + Tile scale,
// into_buffer + SIMT add into a second buffer. The conversions happen while
// the previous op's kernels are still in flight (uniqueness ignores leases).
// Bytes: fill 1 GiB written, scale 1 + 1, add 2 read + 1 written = 6 GiB.
void BM_SimtTileSimtRoundTrip_1GiB(benchmark::State& st) {
  Bandwidth* b = Bandwidth::get(st);
  if (b == nullptr) return;
  guarded(st, [&] {
    Bandwidth& e = *b;
    const k::KernelEntry& fill = entry(k::Model::simt, "fill");
    const k::KernelEntry& add = entry(k::Model::simt, "add");
    const k::KernelEntry& scale = entry(k::Model::tile, "scale", 2);
    std::optional<View> buf(tandem::allocate(e.stream, DType::f32, kElements));
    View other = tandem::allocate(e.stream, DType::f32, kElements);
    View out = tandem::allocate(e.stream, DType::f32, kElements);
    {
      const k::Arg a[] = {k::Arg::of(other), k::Arg::value(1.0)};
      (void)k::launch(e.stream, fill, a);
    }
    const std::int64_t shape[] = {kSide, kSide};
    auto op = [&] {
      const k::Arg f[] = {k::Arg::of(*buf), k::Arg::value(3.0)};
      (void)k::launch(e.stream, fill, f);
      View t = std::move(*buf).to_tensor(shape);
      const k::Arg s[] = {k::Arg::of(t), k::Arg::value(0.5)};
      (void)k::launch(e.stream, scale, s);
      buf.emplace(std::move(t).into_buffer());
      const k::Arg a[] = {k::Arg::of(*buf), k::Arg::of(other), k::Arg::of(out)};
      (void)k::launch(e.stream, add, a);
    };
    const double bps = run_batches(st, e, 6.0 * kBytes, op);
    report_ratio(st, e, bps);
    // out = 3 * 0.5 + 1 everywhere: spot-check the first and last elements.
    const View first = out.slice(0, 1), last = out.slice(kElements - 1, 1);
    for (const View* v : {&first, &last}) {
      const std::vector<std::byte> raw = tandem::read_back(e.stream, *v);
      float x = 0;
      std::memcpy(&x, raw.data(), sizeof x);
      if (x != 2.5F) st.SkipWithError("round trip result is wrong (expected 2.5)");
    }
  });
}

}  // namespace

void register_bandwidth_benchmarks() {
  benchmark::RegisterBenchmark("BM_DriverMemcpy_1GiB", BM_DriverMemcpy_1GiB)
      ->UseManualTime()
      ->Iterations(kIterations)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TandemCopy_1GiB", BM_TandemCopy_1GiB)
      ->UseManualTime()
      ->Iterations(kIterations)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TileCopy_Rank1_4096_1GiB", BM_TileCopy_Rank1_4096_1GiB)
      ->UseManualTime()
      ->Iterations(kIterations)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TileCopy_Rank2_64x64_1GiB", BM_TileCopy_Rank2_64x64_1GiB)
      ->UseManualTime()
      ->Iterations(kIterations)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TileTranspose_64x64_1GiB", BM_TileTranspose_64x64_1GiB)
      ->UseManualTime()
      ->Iterations(kIterations)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SimtTileSimtRoundTrip_1GiB", BM_SimtTileSimtRoundTrip_1GiB)
      ->UseManualTime()
      ->Iterations(kIterations)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace tandem_bench
