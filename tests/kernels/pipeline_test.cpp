// SPDX-License-Identifier: Apache-2.0
// SIMT <-> Tile interop pipelines through the shared runtime, on the
// simulated device (spec/runtime.md §1, §3, §4, §5, §6; scenario-format.md
// §2 kernels): a buffer written by a SIMT kernel becomes a tensor for Tile
// kernels and a buffer again for SIMT kernels, without copies, on one stream
// and across two, with every handle dropped while the work is in flight.
//
// Work is held in flight deterministically by a test kernel blocked on a
// Gate at the head of the first stream (runtime_test_support.hpp); the first
// stream is also slowed down by a simulated device delay, so a missing
// cross-stream order makes the second stream overtake it: a wrong result and
// an unordered_conflict violation from the simulated device. Expected values
// are computed here (exact in f32), not by the host references.
#include <cstring>
#include <optional>
#include <vector>

#include "runtime/runtime_test_support.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"

namespace tandem::test {
namespace {

namespace k = tandem::kernels;

// Shapes that are not multiples of any tile (64x64, 32x32, 4096).
constexpr std::int64_t kM = 37;
constexpr std::int64_t kN = 53;
constexpr std::uint64_t kCount = static_cast<std::uint64_t>(kM * kN);
constexpr auto kDelay = std::chrono::microseconds(2000);

const k::KernelEntry& simt(const char* name, DType t = DType::f32) {
  const k::KernelEntry* e = k::find(k::Model::simt, name, t);
  if (e == nullptr) throw std::runtime_error(std::string("no SIMT kernel ") + name);
  return *e;
}

const k::KernelEntry& tile2(const char* name, DType t = DType::f32) {  // default rank-2 tile (64x64)
  const k::KernelEntry* e = k::find(k::Model::tile, name, t, nullptr, 2);
  if (e == nullptr) throw std::runtime_error(std::string("no rank-2 Tile kernel ") + name);
  return *e;
}

LaunchFuture iota(StreamRef s, const View& out, double start, double step) {
  const k::Arg a[] = {k::Arg::of(out), k::Arg::value(start), k::Arg::value(step)};
  return k::launch(s, simt("iota"), a);
}
LaunchFuture simt_add(StreamRef s, const View& x, const View& y, const View& out) {
  const k::Arg a[] = {k::Arg::of(x), k::Arg::of(y), k::Arg::of(out)};
  return k::launch(s, simt("add"), a);
}
LaunchFuture simt_scale(StreamRef s, const View& x, double factor) {
  const k::Arg a[] = {k::Arg::of(x), k::Arg::value(factor)};
  return k::launch(s, simt("scale"), a);
}
LaunchFuture checksum(StreamRef s, const View& x, const View& out) {
  const k::Arg a[] = {k::Arg::of(x), k::Arg::of(out)};
  return k::launch(s, simt("checksum", DType::u8), a);
}
LaunchFuture tile_scale(StreamRef s, const View& x, double factor) {
  const k::Arg a[] = {k::Arg::of(x), k::Arg::value(factor)};
  return k::launch(s, tile2("scale"), a);
}
LaunchFuture tile_transpose(StreamRef s, const View& src, const View& dst) {
  const k::Arg a[] = {k::Arg::of(src), k::Arg::of(dst)};
  return k::launch(s, tile2("transpose"), a);
}
LaunchFuture tile_copy(StreamRef s, const View& src, const View& dst) {
  const k::Arg a[] = {k::Arg::of(src), k::Arg::of(dst)};
  return k::launch(s, tile2("copy"), a);
}

std::vector<float> as_floats(const std::vector<std::byte>& raw) {
  std::vector<float> v(raw.size() / sizeof(float));
  std::memcpy(v.data(), raw.data(), v.size() * sizeof(float));
  return v;
}
std::uint32_t as_u32(const std::vector<std::byte>& raw) {
  std::uint32_t v = 0;
  if (raw.size() == sizeof v) std::memcpy(&v, raw.data(), sizeof v);
  return v;
}
std::vector<float> read_floats(StreamRef s, const View& v) { return as_floats(read_back(s, v, kPatience)); }

// The checksum kernel's rule: wrapping sum of the 32-bit words.
std::uint32_t word_sum(const std::vector<float>& v) {
  std::uint32_t s = 0;
  for (float f : v) {
    std::uint32_t w = 0;
    std::memcpy(&w, &f, sizeof w);
    s += w;
  }
  return s;
}

// iota(1, 0.5) -> tile scale x2 -> transpose -> + iota(-3, 0.25), flattened
// row-major from the [N, M] transpose: every value is exact in f32.
std::vector<float> expected_pipeline() {
  std::vector<float> out(kCount);
  for (std::int64_t c = 0; c < kN; ++c) {
    for (std::int64_t r = 0; r < kM; ++r) {
      const auto j = static_cast<std::size_t>(c * kM + r);
      const float x = 2.0F * (1.0F + 0.5F * static_cast<float>(r * kN + c));
      out[j] = x + (-3.0F + 0.25F * static_cast<float>(j));
    }
  }
  return out;
}

std::string first_mismatch(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return "first mismatch at " + std::to_string(i) + ": expected " + std::to_string(want[i]) + ", got " +
             std::to_string(got[i]);
    }
  }
  return "equal";
}

class Pipeline : public RuntimeFixture {
 protected:
  // A view that only the gate kernel uses, so blocking a stream takes no
  // lease on anything the pipeline touches.
  LaunchFuture block_stream(const Stream& s, Gate& g, std::optional<View>& blocker) {
    blocker.emplace(allocate(s, DType::u32, 1));
    return hold(s, *blocker, Access::read, &g);
  }

  void expect_everything_released(const Context& ctx) {
    ASSERT_TRUE(ctx.wait_for_retirement(kPatience));
    const RuntimeStats st = ctx.stats();
    EXPECT_EQ(st.live_allocations, 0U);
    EXPECT_EQ(st.active_leases, 0U);
    EXPECT_EQ(st.pending_submissions, 0U);
    EXPECT_EQ(st.quarantined_allocations, 0U);
    EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
  }
};

// §1 + §6: SIMT iota -> to_tensor [M, N] -> Tile scale -> Tile transpose into
// a second tensor -> into_buffer -> SIMT add -> SIMT checksum, all on one
// stream; every view, tensor, future and the stream itself is dropped before
// any of it runs; the downloads give the values computed here.
TEST_F(Pipeline, SimtTileSimtOnOneStreamGivesTheHostResultWithEveryHandleDroppedInFlight) {
  Context ctx = Context::create(device());
  std::optional<Stream> a(Stream::create(ctx));
  sim().set_stream_delay(a->native(), kDelay);
  Gate& g = gate();
  std::optional<Download> result, sum;
  {
    std::optional<View> blocker;
    LaunchFuture held = block_stream(*a, g, blocker);
    View x = allocate(*a, DType::f32, kCount);
    LaunchFuture f1 = iota(*a, x, 1.0, 0.5);
    const std::int64_t shape[] = {kM, kN};
    View t = std::move(x).to_tensor(shape);  // the producer is in flight
    LaunchFuture f2 = tile_scale(*a, t, 2.0);
    View tt_buf = allocate(*a, DType::f32, kCount);
    const std::int64_t tshape[] = {kN, kM};
    View tt = std::move(tt_buf).to_tensor(tshape);
    LaunchFuture f3 = tile_transpose(*a, t, tt);
    View b = std::move(tt).into_buffer();  // the transpose is in flight
    View y = allocate(*a, DType::f32, kCount);
    LaunchFuture f4 = iota(*a, y, -3.0, 0.25);
    View out = allocate(*a, DType::f32, kCount);
    LaunchFuture f5 = simt_add(*a, b, y, out);
    View words = allocate(*a, DType::u32, 1);
    LaunchFuture f6 = checksum(*a, out, words);
    result.emplace(download(*a, out));
    sum.emplace(download(*a, words));
    EXPECT_TRUE(g.wait_arrivals(1));
    EXPECT_FALSE(f1.done());
    a.reset();  // the stream too
  }             // every view, tensor and future goes here, with all of the work pending
  EXPECT_GT(ctx.stats().pending_submissions, 0U);
  EXPECT_GT(ctx.stats().live_allocations, 0U);
  g.open();
  const std::vector<float> want = expected_pipeline();
  const std::vector<float> got = as_floats(result->get(kPatience));
  EXPECT_EQ(got, want) << first_mismatch(got, want);
  EXPECT_EQ(as_u32(sum->get(kPatience)), word_sum(want));
  result.reset();
  sum.reset();
  expect_everything_released(ctx);
}

// §4 + §6: the same pipeline split over two streams. Stream A (slowed down
// by the simulated device, and held by the gate) produces the tensor; stream
// B transposes it (must wait for A's scale), converts, adds and checksums;
// then A scales the tensor again (must wait for B's transpose: a write after
// a read on another stream). Every handle, both streams included, is dropped
// while all of it is pending.
TEST_F(Pipeline, SimtTileSimtOnTwoStreamsIsOrderedAcrossStreamsWithEveryHandleDroppedInFlight) {
  Context ctx = Context::create(device());
  std::optional<Stream> a(Stream::create(ctx));
  std::optional<Stream> b(Stream::create(ctx));
  sim().set_stream_delay(a->native(), kDelay);
  Gate& g = gate();
  std::optional<Download> result, sum, rescaled;
  {
    std::optional<View> blocker;
    LaunchFuture held = block_stream(*a, g, blocker);
    View x = allocate(*a, DType::f32, kCount);
    LaunchFuture f1 = iota(*a, x, 1.0, 0.5);
    const std::int64_t shape[] = {kM, kN};
    View t = std::move(x).to_tensor(shape);
    LaunchFuture f2 = tile_scale(*a, t, 2.0);
    // Stream B.
    View tt_buf = allocate(*b, DType::f32, kCount);
    const std::int64_t tshape[] = {kN, kM};
    View tt = std::move(tt_buf).to_tensor(tshape);
    LaunchFuture f3 = tile_transpose(*b, t, tt);  // reads t: waits for A
    View bt = std::move(tt).into_buffer();
    View y = allocate(*b, DType::f32, kCount);
    LaunchFuture f4 = iota(*b, y, -3.0, 0.25);
    View out = allocate(*b, DType::f32, kCount);
    LaunchFuture f5 = simt_add(*b, bt, y, out);
    View words = allocate(*b, DType::u32, 1);
    LaunchFuture f6 = checksum(*b, out, words);
    result.emplace(download(*b, out));
    sum.emplace(download(*b, words));
    // Back on A: a write to t after B's read of it.
    LaunchFuture f7 = tile_scale(*a, t, 10.0);
    View t_flat = t.as_buffer();
    rescaled.emplace(download(*a, t_flat));
    EXPECT_TRUE(g.wait_arrivals(1));
    EXPECT_FALSE(f3.done()) << "B's transpose ran while A's producer was held";
    a.reset();
    b.reset();
  }
  EXPECT_GT(ctx.stats().pending_submissions, 0U);
  g.open();
  const std::vector<float> want = expected_pipeline();
  const std::vector<float> got = as_floats(result->get(kPatience));
  EXPECT_EQ(got, want) << first_mismatch(got, want);
  EXPECT_EQ(as_u32(sum->get(kPatience)), word_sum(want));
  std::vector<float> want_t(kCount);
  for (std::uint64_t i = 0; i < kCount; ++i)
    want_t[i] = 10.0F * (2.0F * (1.0F + 0.5F * static_cast<float>(i)));
  const std::vector<float> got_t = as_floats(rescaled->get(kPatience));
  EXPECT_EQ(got_t, want_t) << first_mismatch(got_t, want_t);
  result.reset();
  sum.reset();
  rescaled.reset();
  expect_everything_released(ctx);
}

// §5: tensor <-> buffer conversions succeed while the kernel producing the
// data is still in flight (its lease does not count against uniqueness), and
// that lease stays in force: later conflicting work on another stream waits
// for it (order) or is rejected (reject).
TEST_F(Pipeline, ConversionsSucceedWhileTheProducerIsInFlightAndItsLeaseStaysInForce) {
  for (const ConflictPolicy policy : {ConflictPolicy::order, ConflictPolicy::reject}) {
    SCOPED_TRACE(policy == ConflictPolicy::order ? "order policy" : "reject policy");
    Context ctx = Context::create(device(), ContextOptions{policy});
    Stream a = Stream::create(ctx);
    Stream b = Stream::create(ctx);
    sim().set_stream_delay(a.native(), kDelay);
    Gate& g = gate();
    std::optional<View> blocker;
    LaunchFuture held = block_stream(a, g, blocker);
    View x = allocate(a, DType::f32, kCount);
    LaunchFuture produce = iota(a, x, 1.0, 0.5);
    ASSERT_TRUE(g.wait_arrivals(1));
    ASSERT_FALSE(produce.done());
    EXPECT_TRUE(x.is_unique()) << "an in-flight lease must not count as a view";
    const std::uint64_t id = x.allocation_id();
    const std::int64_t shape[] = {kM, kN};
    View t = std::move(x).to_tensor(shape);
    EXPECT_FALSE(x.valid());
    EXPECT_EQ(t.allocation_id(), id);
    EXPECT_EQ(t.view_count(), 1U);
    LaunchFuture scale = tile_scale(a, t, 2.0);  // in flight behind the gate
    ASSERT_FALSE(scale.done());
    EXPECT_TRUE(t.is_unique());
    View buf = std::move(t).into_buffer();
    EXPECT_EQ(buf.allocation_id(), id);
    EXPECT_TRUE(buf.is_unique());
    // Stream B writes the buffer: it conflicts with A's in-flight scale.
    if (policy == ConflictPolicy::order) {
      LaunchFuture later = simt_scale(b, buf, 3.0);
      EXPECT_FALSE(later.wait(std::chrono::milliseconds(50))) << "B ran before A's in-flight Tile kernel";
      g.open();
      ASSERT_TRUE(later.wait(kPatience));
      // B's write ran after A's work on the device (the data below proves
      // it); A's records retire on their own stream's sweep, maybe a sweep
      // later than B's, so wait for them rather than assume they are done.
      EXPECT_TRUE(produce.wait(kPatience));
      EXPECT_TRUE(scale.wait(kPatience));
      std::vector<float> want(kCount);
      for (std::uint64_t i = 0; i < kCount; ++i)
        want[i] = 3.0F * (2.0F * (1.0F + 0.5F * static_cast<float>(i)));
      const std::vector<float> got = read_floats(b, buf);
      EXPECT_EQ(got, want) << first_mismatch(got, want);
    } else {
      EXPECT_TANDEM_ERROR(ErrorCode::conflict, simt_scale(b, buf, 3.0));
      g.open();
      ASSERT_TRUE(scale.wait(kPatience));
      ASSERT_TRUE(ctx.wait_for_retirement(kPatience));
      LaunchFuture later = simt_scale(b, buf, 3.0);  // the lease is gone now
      ASSERT_TRUE(later.wait(kPatience));
      std::vector<float> want(kCount);
      for (std::uint64_t i = 0; i < kCount; ++i)
        want[i] = 3.0F * (2.0F * (1.0F + 0.5F * static_cast<float>(i)));
      const std::vector<float> got = read_floats(b, buf);
      EXPECT_EQ(got, want) << first_mismatch(got, want);
    }
    blocker.reset();
    { View dropped = std::move(buf); }
    expect_everything_released(ctx);
  }
}

// §3: a strided tensor view (rows and columns cut) is a Tile kernel's input
// and output without a copy: copy and transpose read exactly the cut
// elements; a Tile scale through the view changes exactly them; and the
// results come back to SIMT through into_buffer and as_buffer.
TEST_F(Pipeline, StridedTensorViewIsATileKernelOperandWithoutACopy) {
  Context ctx = Context::create(device());
  std::optional<Stream> a(Stream::create(ctx));
  std::optional<Stream> b(Stream::create(ctx));
  sim().set_stream_delay(a->native(), kDelay);
  constexpr std::int64_t r0 = 1, r1 = kM - 2, c0 = 3, c1 = kN - 4;  // rows [1, 35), columns [3, 49)
  constexpr std::int64_t rows = r1 - r0, cols = c1 - c0;
  std::optional<Download> copied, transposed, whole;
  {
    View x = allocate(*a, DType::f32, kCount);
    (void)iota(*a, x, 0.0, 1.0);  // x[r, c] = r*N + c
    const std::int64_t shape[] = {kM, kN};
    View t = std::move(x).to_tensor(shape);
    const DimRange cut[] = {{r0, r1}, {c0, c1}};
    View sub = t.tensor_view(std::nullopt, cut);
    EXPECT_FALSE(sub.is_contiguous());
    EXPECT_EQ(sub.allocation_id(), t.allocation_id());
    EXPECT_EQ(sub.device_ptr(), t.device_ptr() + static_cast<std::uint64_t>((r0 * kN + c0) * 4));
    EXPECT_EQ(sub.strides()[0], kN);
    // Copy and transpose of the strided view on stream B (after A's iota).
    const std::int64_t sub_shape[] = {rows, cols};
    const std::int64_t sub_tshape[] = {cols, rows};
    View dst = allocate(*b, DType::f32, static_cast<std::uint64_t>(rows * cols)).to_tensor(sub_shape);
    View dst_t = allocate(*b, DType::f32, static_cast<std::uint64_t>(rows * cols)).to_tensor(sub_tshape);
    (void)tile_copy(*b, sub, dst);
    (void)tile_transpose(*b, sub, dst_t);
    View dst_buf = std::move(dst).into_buffer();
    View dst_t_buf = dst_t.as_buffer();
    copied.emplace(download(*b, dst_buf));
    transposed.emplace(download(*b, dst_t_buf));
    // Scale through the strided view on A (after B's reads), then the whole
    // tensor as a borrowed buffer.
    (void)tile_scale(*a, sub, -2.0);
    View flat = t.as_buffer();
    EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous, sub.as_buffer());
    whole.emplace(download(*a, flat));
    a.reset();
    b.reset();
  }
  std::vector<float> want_copy, want_t(static_cast<std::size_t>(rows * cols)), want_whole(kCount);
  for (std::int64_t r = r0; r < r1; ++r) {
    for (std::int64_t c = c0; c < c1; ++c) want_copy.push_back(static_cast<float>(r * kN + c));
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      want_t[static_cast<std::size_t>(c * rows + r)] = static_cast<float>((r + r0) * kN + (c + c0));
    }
  }
  for (std::int64_t r = 0; r < kM; ++r) {
    for (std::int64_t c = 0; c < kN; ++c) {
      const bool inside = r >= r0 && r < r1 && c >= c0 && c < c1;
      const auto v = static_cast<float>(r * kN + c);
      want_whole[static_cast<std::size_t>(r * kN + c)] = inside ? -2.0F * v : v;
    }
  }
  const std::vector<float> got_copy = as_floats(copied->get(kPatience));
  const std::vector<float> got_t = as_floats(transposed->get(kPatience));
  const std::vector<float> got_whole = as_floats(whole->get(kPatience));
  EXPECT_EQ(got_copy, want_copy) << first_mismatch(got_copy, want_copy);
  EXPECT_EQ(got_t, want_t) << first_mismatch(got_t, want_t);
  EXPECT_EQ(got_whole, want_whole) << "outside the cut must be unchanged; "
                                   << first_mismatch(got_whole, want_whole);
  copied.reset();
  transposed.reset();
  whole.reset();
  expect_everything_released(ctx);
}

// §3 + §5: an ownership transfer of an aliased allocation fails with
// `aliased` (to_tensor with a slice alive; into_buffer with a tensor view or
// a borrowed buffer alive), even while work is in flight, and leaves the
// source intact and usable by both models. Once the alias is gone the
// transfer succeeds. A non-contiguous tensor view cannot become a buffer,
// even when unique.
TEST_F(Pipeline, AliasedConversionFailsAndLeavesTheSourceUsable) {
  Context ctx = Context::create(device());
  std::optional<Stream> a(Stream::create(ctx));
  sim().set_stream_delay(a->native(), kDelay);
  Gate& g = gate();
  std::optional<View> blocker;
  LaunchFuture held = block_stream(*a, g, blocker);
  View x = allocate(*a, DType::f32, kCount);
  (void)iota(*a, x, 1.0, 0.5);
  const std::int64_t shape[] = {kM, kN};
  {
    View alias = x.slice(0, 4);
    EXPECT_FALSE(x.is_unique());
    const std::string msg = error_message_of([&] { (void)std::move(x).to_tensor(shape); });
    EXPECT_NE(msg.find(std::to_string(x.allocation_id())), std::string::npos) << msg;
    EXPECT_TANDEM_ERROR(ErrorCode::aliased, std::move(x).to_tensor(shape));
    ASSERT_TRUE(x.valid());
    EXPECT_FALSE(x.is_tensor());
    EXPECT_EQ(x.view_count(), 2U);
    EXPECT_EQ(x.element_count(), kCount);
    (void)simt_scale(*a, x, 2.0);  // still usable by SIMT
  }
  View t = std::move(x).to_tensor(shape);  // the alias is gone: succeeds (work still held)
  {
    const DimRange cut[] = {{0, kM}, {1, kN}};
    View sub = t.tensor_view(std::nullopt, cut);
    EXPECT_TANDEM_ERROR(ErrorCode::aliased, std::move(t).into_buffer());
    ASSERT_TRUE(t.valid());
    EXPECT_TRUE(t.is_tensor());
    (void)tile_scale(*a, t, 3.0);  // still usable by Tile
  }
  {
    View borrowed = t.as_buffer();
    EXPECT_TANDEM_ERROR(ErrorCode::aliased, std::move(t).into_buffer());
    ASSERT_TRUE(t.valid());
    (void)simt_scale(*a, borrowed, 0.5);  // the borrowed view works for SIMT
  }
  View back = std::move(t).into_buffer();
  EXPECT_TRUE(back.is_unique());
  {
    // A non-contiguous tensor view that is unique (its parent is gone)
    // still cannot become a buffer.
    View z = allocate(*a, DType::f32, kCount).to_tensor(shape);
    const DimRange cut[] = {{1, kM}, {0, kN - 1}};
    View sub = z.tensor_view(std::nullopt, cut);
    { View parent = std::move(z); }
    EXPECT_TRUE(sub.is_unique());
    EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous, std::move(sub).into_buffer());
    EXPECT_TRUE(sub.valid());
    EXPECT_TRUE(sub.is_tensor());
  }
  g.open();
  std::vector<float> want(kCount);
  for (std::uint64_t i = 0; i < kCount; ++i)
    want[i] = 0.5F * (3.0F * (2.0F * (1.0F + 0.5F * static_cast<float>(i))));
  const std::vector<float> got = read_floats(*a, back);
  EXPECT_EQ(got, want) << first_mismatch(got, want);
  blocker.reset();
  a.reset();
  { View dropped = std::move(back); }
  expect_everything_released(ctx);
}

}  // namespace
}  // namespace tandem::test
