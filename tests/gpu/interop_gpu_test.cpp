// SPDX-License-Identifier: Apache-2.0
// SIMT → Tile → SIMT on the device through the one runtime (spec/runtime.md
// §1, §3): a buffer written by a SIMT kernel becomes a tensor for a Tile
// kernel and back without a copy, on one stream and on two, with every
// handle dropped before the work completes. Run under compute-sanitizer
// memcheck and racecheck too.
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "gpu_fixture.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/testing/sim.hpp"

namespace {

using namespace std::chrono_literals;
using tandem::DType;
using tandem::View;
namespace k = tandem::kernels;

// iota on `first`, then (rows x cols) tensor scaled by 3 and transposed on
// `second`, back to a buffer, then SIMT add of the transposed values to
// themselves on `first`. Expected: out[j*rows + i] = 2 * 3 * (i*cols + j).
std::vector<float> pipeline(const tandem::Context& ctx, const tandem::Stream& first,
                            const tandem::Stream& second, std::int64_t rows, std::int64_t cols) {
  const std::uint64_t n = static_cast<std::uint64_t>(rows * cols);
  std::optional<View> result;
  {
    View a = tandem::allocate(first, DType::f32, n);
    View t_out = tandem::allocate(first, DType::f32, n);
    const k::Arg iota_args[] = {k::Arg::of(a), k::Arg::value(0.0), k::Arg::value(1.0)};
    std::move(k::launch(first, catalog_entry(k::Model::simt, "iota", DType::f32), iota_args)).forget();
    // Ownership transfers while the iota is still in flight: in-flight
    // leases do not count against uniqueness.
    const std::int64_t shape[] = {rows, cols};
    const std::int64_t tshape[] = {cols, rows};
    View ta = std::move(a).to_tensor(shape);
    View tb = std::move(t_out).to_tensor(tshape);
    const k::Arg scale_args[] = {k::Arg::of(ta), k::Arg::value(3.0)};
    std::move(k::launch(second, catalog_entry(k::Model::tile, "scale", DType::f32, 2), scale_args)).forget();
    const k::Arg tr_args[] = {k::Arg::of(ta), k::Arg::of(tb)};
    std::move(k::launch(second, catalog_entry(k::Model::tile, "transpose", DType::f32, 2), tr_args)).forget();
    View b = std::move(tb).into_buffer();
    View out = tandem::allocate(first, DType::f32, n);
    const k::Arg add_args[] = {k::Arg::of(b), k::Arg::of(b), k::Arg::of(out)};
    std::move(k::launch(first, catalog_entry(k::Model::simt, "add", DType::f32), add_args)).forget();
    result.emplace(out.share());
  }  // every input handle dropped while work may still run
  std::vector<float> got = read_f32(first, *result);
  result.reset();
  EXPECT_TRUE(ctx.wait_for_retirement(10s));
  return got;
}

void expect_pipeline_result(const std::vector<float>& got, std::int64_t rows, std::int64_t cols) {
  ASSERT_EQ(got.size(), static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const float want = 6.0F * static_cast<float>(i * cols + j);
      const float have = got[static_cast<std::size_t>(j * rows + i)];
      ASSERT_EQ(have, want) << "element (" << j << ", " << i << ") of the transposed result";
    }
  }
}

using GpuInterop = GpuTest;

TEST_F(GpuInterop, SimtTileSimtPipelineOnOneStreamMatchesTheHostReference) {
  tandem::Stream s = tandem::Stream::create(ctx());
  expect_pipeline_result(pipeline(ctx(), s, s, 300, 517), 300, 517);
  EXPECT_EQ(ctx().stats().live_allocations, 0u);
}

TEST_F(GpuInterop, SimtTileSimtPipelineOnTwoStreamsIsOrderedAndMatches) {
  tandem::Stream a = tandem::Stream::create(ctx());
  tandem::Stream b = tandem::Stream::create(ctx());
  expect_pipeline_result(pipeline(ctx(), a, b, 1000, 1000), 1000, 1000);
  EXPECT_EQ(ctx().stats().live_allocations, 0u);
}

// The same pipeline on the simulated device (runs everywhere, including CI):
// the sim's unordered-conflict detector must see nothing.
TEST(SimInterop, SimtTileSimtPipelineOnTwoStreamsIsOrderedOnTheSimulatedDevice) {
  tandem::Platform p = tandem::Platform::sim();
  tandem::Context ctx = tandem::Context::create(p.device(0));
  tandem::Stream a = tandem::Stream::create(ctx);
  tandem::Stream b = tandem::Stream::create(ctx);
  tandem::testing::sim_backend(p)->set_stream_delay(a.native(), std::chrono::microseconds(200));
  expect_pipeline_result(pipeline(ctx, a, b, 33, 65), 33, 65);
  EXPECT_EQ(tandem::testing::sim_backend(p)->violation_count(), 0u);
  EXPECT_EQ(ctx.stats().live_allocations, 0u);
}

}  // namespace
