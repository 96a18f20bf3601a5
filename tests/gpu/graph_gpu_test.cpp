// SPDX-License-Identifier: Apache-2.0
// Graphs on the device (spec/runtime.md §8): captured SIMT and Tile work
// replays as submissions; the graph keeps its allocations alive and
// non-unique; a graph dropped with a replay in flight is destroyed after it.
// Run under compute-sanitizer memcheck too.
#include <cstring>
#include <optional>
#include <vector>

#include "gpu_fixture.hpp"
#include "tandem/graph.hpp"
#include "tandem/kernels/launch.hpp"

namespace {

using namespace std::chrono_literals;
using tandem::DType;
using tandem::View;
namespace k = tandem::kernels;

using GpuGraphs = GpuTest;

TEST_F(GpuGraphs, CapturedSimtAndTileWorkRunsOncePerReplay) {
  tandem::Stream s = tandem::Stream::create(ctx());
  View x = tandem::allocate(s, DType::f32, 64 * 64);
  const k::Arg fill_args[] = {k::Arg::of(x), k::Arg::value(1.0)};
  (void)k::launch(s, catalog_entry(k::Model::simt, "fill", DType::f32), fill_args);
  const std::int64_t shape[] = {64, 64};
  View t = std::move(x).to_tensor(shape);
  tandem::Graph g = tandem::Graph::capture(s, [&] {
    const k::Arg scale_args[] = {k::Arg::of(t), k::Arg::value(2.0)};
    (void)k::launch(s, catalog_entry(k::Model::tile, "scale", DType::f32, 2), scale_args);
  });
  EXPECT_FALSE(t.is_unique()) << "the graph may touch the tensor again";
  EXPECT_EQ(read_f32(s, t), std::vector<float>(64 * 64, 1.0F)) << "capture runs nothing";
  for (int i = 0; i < 3; ++i) (void)g.replay(s);
  EXPECT_EQ(read_f32(s, t), std::vector<float>(64 * 64, 8.0F));
}

TEST_F(GpuGraphs, DroppedGraphWithAReplayInFlightOutlivesIt) {
  tandem::Stream s = tandem::Stream::create(ctx());
  const auto before = ctx().stats();
  {
    View x = tandem::allocate(s, DType::u32, 1 << 20);
    std::optional<tandem::Graph> g = tandem::Graph::capture(s, [&] {
      const k::Arg spin_args[] = {k::Arg::of(x), k::Arg::value(std::uint64_t{5'000'000})};
      (void)k::launch(s, catalog_entry(k::Model::simt, "spin", DType::u32), spin_args);
      const k::Arg fill_args[] = {k::Arg::of(x), k::Arg::value(7.0)};
      (void)k::launch(s, catalog_entry(k::Model::simt, "fill", DType::u32), fill_args);
    });
    std::move(g->replay(s)).forget();
  }  // graph and buffer dropped while the replay runs
  ASSERT_TRUE(ctx().wait_for_retirement(10s));
  const auto after = ctx().stats();
  EXPECT_EQ(after.live_allocations, before.live_allocations) << "released once the replay retired";
  EXPECT_EQ(after.active_leases, 0u);
}

}  // namespace
