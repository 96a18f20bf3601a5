// SPDX-License-Identifier: Apache-2.0
#include "sustained_loop.hpp"

#include <cstring>
#include <optional>
#include <stdexcept>

namespace tandem_bench::sustained {

void check_rc(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + ": CUresult " + std::to_string(rc));
}

SustainedKernels::SustainedKernels() {
  fill = k::find(k::Model::simt, "fill", tandem::DType::f32);
  scale = k::find(k::Model::tile, "scale", tandem::DType::f32, nullptr, 2);
  if (fill == nullptr || scale == nullptr)
    throw std::runtime_error("the catalog has no f32 fill or rank-2 Tile scale");
  const k::ArgShape fill_shapes[] = {k::ArgShape::buffer(tandem::DType::f32, kElements), k::ArgShape{}};
  const k::ArgShape scale_shapes[] = {k::ArgShape::tensor(tandem::DType::f32, kShape), k::ArgShape{}};
  prepare(*fill, fill_shapes, kFillValue, fill_dims, fill_params);
  prepare(*scale, scale_shapes, kScaleBy, scale_dims, scale_params);
}

void SustainedKernels::prepare(const k::KernelEntry& e, std::span<const k::ArgShape> shapes, double value,
                               drv::LaunchDims& dims, k::PackedParams& packed) {
  std::string why = k::check_args(e, shapes);
  if (why.empty()) why = k::launch_dims(e, shapes, std::nullopt, std::nullopt, dims);
  const k::LaunchArg args[] = {k::LaunchArg::view(0, shapes[0]), k::LaunchArg::value(value)};
  if (why.empty()) why = k::pack_params(e, args, packed);
  if (!why.empty()) throw std::runtime_error(std::string(e.name) + ": " + why);
}

const SustainedKernels& sustained_kernels() {
  static const SustainedKernels kk;
  return kk;
}

void raw_launch(const RawDriver& d, void* fn, const drv::LaunchDims& g, void** params, unsigned long long p,
                void* stream) {
  std::memcpy(params[0], &p, sizeof p);
  check_rc(d.launch(fn, g.grid.x, g.grid.y, g.grid.z, g.block.x, g.block.y, g.block.z, g.shared_bytes, stream,
                    params, nullptr),
           "cuLaunchKernel");
}

void check_contents(const std::vector<float>& v, const char* which) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != kExpected) {
      throw std::runtime_error(std::string(which) + " loop's kernels left " + std::to_string(v[i]) +
                               " at element " + std::to_string(i) + ", expected " +
                               std::to_string(kExpected));
    }
  }
}

BackendPool::BackendPool(drv::Backend& b, drv::ContextHandle ctx) : b_(b), ctx_(ctx) {
  if (const drv::Result r = b.pool_create(ctx, pool_); !r.ok()) throw std::runtime_error(b.describe(r));
}

BackendPool::~BackendPool() {
  (void)b_.pool_trim(ctx_, pool_, 0);
  (void)b_.pool_destroy(ctx_, pool_);
}

RawStreams::RawStreams(drv::Backend& b, drv::ContextHandle ctx, int n) : b_(b), ctx_(ctx) {
  for (int i = 0; i < n; ++i) {
    drv::StreamHandle s;
    if (const drv::Result r = b.stream_create(ctx, s); !r.ok()) throw std::runtime_error(b.describe(r));
    s_.push_back(s);
  }
}

RawStreams::~RawStreams() {
  for (const drv::StreamHandle& s : s_) {
    (void)b_.stream_synchronize(ctx_, s);
    (void)b_.stream_destroy(ctx_, s);
  }
}

bool split_on() {
  static const bool on = env_flag("TANDEM_BENCH_SUSTAINED_SPLIT");
  return on;
}

void report_split(benchmark::State& st, const StepSplit& s, const char* prefix) {
  if (s.iterations == 0) return;
  for (std::size_t i = 0; i < kSteps; ++i) {
    st.counters[std::string(prefix) + "split_" + kStepNames[i] + "_ns"] =
        static_cast<double>(s.ns[i]) / static_cast<double>(s.iterations);
  }
}

void LoopTotals::add(const TogetherRun& r) {
  seconds_ += r.seconds;
  const std::int64_t total = iterations();
  slice_rates_.push_back(r.seconds > 0 ? static_cast<double>(total - counted_) / r.seconds : 0.0);
  counted_ = total;
  if (error_.empty()) error_ = r.error;
}

LoopRun LoopTotals::result() const {
  LoopRun out;
  for (const StepSplit& x : splits_) out.split += x;
  out.seconds = seconds_;
  out.slice_rates = slice_rates_;
  out.error = error_;
  const auto [few, most] = std::minmax_element(done_.begin(), done_.end());
  out.iterations_per_s = seconds_ > 0 ? static_cast<double>(iterations()) / seconds_ : 0.0;
  out.lane_balance = *most > 0 ? static_cast<double>(*few) / static_cast<double>(*most) : 0.0;
  return out;
}

std::int64_t LoopTotals::iterations() const {
  std::int64_t total = 0;
  for (const std::int64_t n : done_) total += n;
  return total;
}

void register_per_threads(const char* name, void (*fn)(benchmark::State&)) {
  benchmark::RegisterBenchmark(name, fn)
      ->RangeMultiplier(2)
      ->Range(1, kMaxLanes)
      ->Iterations(1)
      ->Repetitions(kSustainedRepetitions)
      ->UseManualTime();
}

}  // namespace tandem_bench::sustained
