// SPDX-License-Identifier: Apache-2.0
// A successful kernels::launch builds no strings and allocates nothing of
// its own (issue 22): over the same launches, the calling thread's heap
// allocations through kernels::launch are no more than through the
// runtime's own launch with the arguments packed once beforehand. A message
// built per call (a `who` of the kernel's name, a description) would be at
// least one allocation per launch more.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <optional>

#include "tandem/device.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"

namespace {

thread_local bool counting = false;
std::atomic<std::uint64_t> allocations{0};

}  // namespace

// Counting only: the allocation itself is the default one's (malloc/free),
// so new and delete stay matched.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (counting) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace tandem {
namespace {

namespace k = kernels;

constexpr int kLaunches = 2000;
constexpr int kBetweenWaits = 100;

// Retirement is waited for (not counted) every kBetweenWaits launches, so
// that neither side's queue grows past that: on a loaded machine a queue
// left to grow refilled the record pools of one side only, and the
// difference was the machine's, not the launch path's.
template <class F>
std::uint64_t allocations_of(const Context& ctx, F&& f) {
  allocations.store(0);
  for (int i = 0; i < kLaunches; ++i) {
    if (i % kBetweenWaits == 0 && !ctx.wait_for_retirement(std::chrono::seconds(30))) return UINT64_MAX;
    counting = true;
    f();
    counting = false;
  }
  return allocations.load();
}

TEST(KernelsLaunchAllocations, ASuccessfulCatalogLaunchAllocatesNoMoreThanTheRuntimesOwnLaunch) {
  const Platform p = Platform::sim();
  const Context ctx = Context::create(p.device(0));
  const Stream s = Stream::create(ctx);
  const View x = allocate(s, DType::f32, 256);
  const View y = allocate(s, DType::f32, 256);
  const k::KernelEntry* e = k::find(k::Model::simt, "axpy", DType::f32);
  ASSERT_NE(e, nullptr);
  const k::Arg args[] = {k::Arg::of(x), k::Arg::of(y), k::Arg::value(2.0)};

  // The runtime's launch with everything kernels::launch works out done once here.
  const k::ArgShape shapes[] = {k::shape_of(x), k::shape_of(y), k::ArgShape{}};
  driver::LaunchDims dims;
  ASSERT_EQ(k::launch_dims(*e, shapes, std::nullopt, std::nullopt, dims), "");
  const k::LaunchArg packed_args[] = {k::LaunchArg::view(x.device_ptr(), shapes[0]),
                                      k::LaunchArg::view(y.device_ptr(), shapes[1]),
                                      k::LaunchArg::value(2.0)};
  k::PackedParams packed;
  ASSERT_EQ(k::pack_params(*e, packed_args, packed), "");
  const ViewAccess accesses[] = {{&x, e->params[0].mode}, {&y, e->params[1].mode}};

  // Warm both paths (record pools, events, the module) before counting.
  for (int i = 0; i < 200; ++i) {
    (void)k::launch(s, *e, args);
    (void)launch(s, *e->symbol, dims, packed.pointers(), accesses);
  }
  ASSERT_TRUE(ctx.wait_for_retirement(std::chrono::seconds(30)));
  const std::uint64_t runtime =
      allocations_of(ctx, [&] { (void)launch(s, *e->symbol, dims, packed.pointers(), accesses); });
  ASSERT_TRUE(ctx.wait_for_retirement(std::chrono::seconds(30)));
  const std::uint64_t catalog = allocations_of(ctx, [&] { (void)k::launch(s, *e, args); });
  ASSERT_TRUE(ctx.wait_for_retirement(std::chrono::seconds(30)));
  ASSERT_NE(runtime, UINT64_MAX) << "retirement did not keep up within 30 s";
  // Pool refills may fall on either side: allow a few, never one per launch.
  EXPECT_LE(catalog, runtime + kLaunches / 20)
      << "kernels::launch: " << catalog << " allocations over " << kLaunches
      << " launches, the runtime's own launch " << runtime;
}

}  // namespace
}  // namespace tandem
