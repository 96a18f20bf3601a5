// SPDX-License-Identifier: Apache-2.0
// spec/runtime.md §3 — views: empty buffers, slices, split_at, peel, atomic
// relabel, tensor <-> buffer ownership transfers, borrowed and sub-views.
#include <optional>

#include "runtime/runtime_test_support.hpp"

namespace tandem::test {
namespace {

class Views : public RuntimeFixture {};

TEST_F(Views, EmptyBufferMakesNoDriverAllocationOrFree) {
  Env e = env();
  settle();
  e.ctx.trim();
  const std::uint64_t sim_live = sim().live_allocations();
  const RuntimeStats before = e.ctx.stats();
  sim().fail_nth_alloc(1);  // the next driver allocation call fails
  {
    View empty = allocate(e.a, DType::f32, 0);
    EXPECT_TRUE(empty.valid());
    EXPECT_EQ(empty.element_count(), 0U);
    EXPECT_EQ(empty.extent_bytes(), 0U);
    EXPECT_EQ(empty.view_count(), 1U);
    EXPECT_TRUE(empty.is_unique());
    EXPECT_EQ(sim().live_allocations(), sim_live);
    // Work on it touches nothing and takes no lease.
    LaunchFuture f = fill(e.a, empty, 1);
    EXPECT_TRUE(f.wait(kPatience));
    View also_empty = allocate(e.b, DType::u8, 0);
    EXPECT_NE(also_empty.allocation_id(), empty.allocation_id());
  }
  settle();
  const RuntimeStats after = e.ctx.stats();
  EXPECT_EQ(after.allocations_total, before.allocations_total);
  EXPECT_EQ(after.frees_total, before.frees_total);
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  EXPECT_EQ(after.active_leases, 0U);
  // The armed failure is still armed: no driver allocation was made.
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_memory, allocate(e.a, DType::f32, 4));
  sim().fail_nth_alloc(0);
  e.ctx.trim();
  EXPECT_EQ(sim().live_allocations(), sim_live);
}

TEST_F(Views, AnAdoptedEmptyBufferHoldsNoMemoryButItsOwnerIsStillRunOnce) {
  Env e = env();
  settle();
  const RuntimeStats before = e.ctx.stats();
  int released = 0;
  {
    View empty = adopt(e.ctx, 0, DType::f32, 0, [&released] { ++released; });
    EXPECT_EQ(empty.extent_bytes(), 0U);
    const RuntimeStats held = e.ctx.stats();
    EXPECT_EQ(held.live_allocations, before.live_allocations) << "an empty view holds no device memory";
    EXPECT_EQ(held.live_bytes, before.live_bytes);
    EXPECT_EQ(held.allocations_total, before.allocations_total);
    EXPECT_EQ(held.foreign_owners_unreleased, before.foreign_owners_unreleased + 1)
        << "its owner is still somebody's object, released only when the view goes";
    View sub = empty.slice(0, 0);
    EXPECT_EQ(sub.allocation_id(), empty.allocation_id());
  }
  EXPECT_EQ(released, 1);
  const RuntimeStats after = e.ctx.stats();
  EXPECT_EQ(after.foreign_owners_unreleased, before.foreign_owners_unreleased);
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  EXPECT_EQ(after.frees_total, before.frees_total) << "nothing was freed that was never counted as made";
}

TEST_F(Views, SliceIsACountedViewOfTheSameAllocation) {
  Env e = env();
  View buf = allocate(e.a, DType::u32, 16);
  (void)upload_u32(e.a, buf, iota_u32(16));
  View s = buf.slice(4, 8);
  EXPECT_EQ(s.allocation_id(), buf.allocation_id());
  EXPECT_EQ(s.element_count(), 8U);
  EXPECT_EQ(s.byte_offset(), 16U);
  EXPECT_EQ(s.device_ptr(), buf.device_ptr() + 16);
  EXPECT_EQ(buf.view_count(), 2U);
  View ss = s.slice(2, 2);  // a slice of a slice
  EXPECT_EQ(ss.byte_offset(), 24U);
  EXPECT_EQ(buf.view_count(), 3U);
  EXPECT_EQ(read_u32(e.a, ss), (std::vector<std::uint32_t>{6, 7}));
  View whole = buf.slice(0, 16);
  View none = buf.slice(16, 0);  // an empty slice at the end is in range
  EXPECT_EQ(none.element_count(), 0U);
  EXPECT_EQ(buf.view_count(), 5U);
}

TEST_F(Views, OutOfRangeSliceIsAnErrorNeverAClamp) {
  Env e = env();
  View buf = allocate(e.a, DType::u32, 16);
  const std::string id = std::to_string(buf.allocation_id());
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.slice(10, 7));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.slice(17, 0));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.slice(0, 17));
  // Overflow: offset + len wraps around, offset * element size wraps around.
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.slice(~std::uint64_t{0}, 2));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.slice(8, ~std::uint64_t{0} - 4));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.slice(std::uint64_t{1} << 62, 1));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.peel(16));
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, buf.peel(~std::uint64_t{0}));
  const std::string msg = error_message_of([&] { (void)buf.slice(10, 7); });
  EXPECT_NE(msg.find("allocation " + id), std::string::npos) << msg;
  // Nothing was created and the source is intact.
  EXPECT_EQ(buf.view_count(), 1U);
  EXPECT_TRUE(buf.is_unique());
  View s = buf.slice(8, 8);
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, s.slice(1, 8));  // relative to the slice, not the allocation
}

TEST_F(Views, SplitAtConsumesOneViewAndYieldsTwoDisjointViews) {
  Env e = env(ConflictPolicy::reject);
  View buf = allocate(e.a, DType::u32, 16);
  settle();
  const std::uint64_t id = buf.allocation_id();
  EXPECT_EQ(buf.view_count(), 1U);
  // Out of range: error, source intact.
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, std::move(buf).split_at(17));
  ASSERT_TRUE(buf.valid());
  auto [lo, hi] = std::move(buf).split_at(6);
  EXPECT_FALSE(buf.valid()) << "split_at must consume its source";
  EXPECT_EQ(lo.view_count(), 2U);
  EXPECT_EQ(lo.allocation_id(), id);
  EXPECT_EQ(hi.allocation_id(), id);
  EXPECT_EQ(lo.element_count(), 6U);
  EXPECT_EQ(hi.element_count(), 10U);
  EXPECT_EQ(lo.byte_offset() + lo.extent_bytes(), hi.byte_offset());
  EXPECT_FALSE(lo.is_unique());
  // Disjoint: both halves written on two streams at once, no conflict.
  Gate& g = gate();
  LaunchFuture fl = fill(e.a, lo, 1, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  LaunchFuture fh = fill(e.b, hi, 2);
  EXPECT_TRUE(fh.wait(kPatience));
  g.open();
  EXPECT_TRUE(fl.wait(kPatience));
  EXPECT_EQ(read_u32(e.a, lo), std::vector<std::uint32_t>(6, 1));
  EXPECT_EQ(read_u32(e.a, hi), std::vector<std::uint32_t>(10, 2));
  // Degenerate splits.
  auto [none, all] = std::move(hi).split_at(0);
  EXPECT_EQ(none.element_count(), 0U);
  EXPECT_EQ(all.element_count(), 10U);
}

TEST_F(Views, PeelIsAOneElementCountedView) {
  Env e = env();
  View buf = allocate(e.a, DType::u32, 8);
  (void)upload_u32(e.a, buf, iota_u32(8, 100));
  View p = buf.peel(5);
  EXPECT_EQ(p.element_count(), 1U);
  EXPECT_EQ(p.allocation_id(), buf.allocation_id());
  EXPECT_EQ(p.byte_offset(), 20U);
  EXPECT_EQ(p.extent_bytes(), 4U);
  EXPECT_EQ(buf.view_count(), 2U);
  EXPECT_FALSE(p.is_atomic());
  EXPECT_EQ(read_u32(e.a, p), std::vector<std::uint32_t>{105});
}

// The upstream bug (eec8776ff): a peeled buffer was tracked as written, so
// two read-only launches on two streams could not run at once.
TEST_F(Views, PeeledViewsKeepSharedReadPermission) {
  for (ConflictPolicy policy : {ConflictPolicy::reject, ConflictPolicy::order}) {
    SCOPED_TRACE(policy == ConflictPolicy::reject ? "reject" : "order");
    Env e = env(policy);
    View buf = allocate(e.a, DType::u32, 8);
    settle();
    View p1 = buf.peel(3);
    View p2 = buf.peel(3);
    Rendezvous r;
    // Reject would throw on a false conflict; order would serialize the two
    // kernels, and the rendezvous would never see both at once.
    LaunchFuture f1 = meet(e.a, p1, Access::read, r);
    LaunchFuture f2 = meet(e.b, p2, Access::read, r);
    EXPECT_TRUE(f1.wait(kPatience));
    EXPECT_TRUE(f2.wait(kPatience));
    EXPECT_EQ(r.met(), 2) << "the two reads of a peeled element did not run at the same time";
  }
}

TEST_F(Views, EmptyViewsKeepSharedReadPermission) {
  for (ConflictPolicy policy : {ConflictPolicy::reject, ConflictPolicy::order}) {
    SCOPED_TRACE(policy == ConflictPolicy::reject ? "reject" : "order");
    Env e = env(policy);
    View empty = allocate(e.a, DType::u32, 0);
    View buf = allocate(e.a, DType::u32, 8);
    settle();
    View empty_slice = buf.slice(8, 0);
    {
      Rendezvous r;
      LaunchFuture f1 = meet(e.a, empty, Access::read, r);
      LaunchFuture f2 = meet(e.b, empty, Access::read, r);
      EXPECT_TRUE(f1.wait(kPatience));
      EXPECT_TRUE(f2.wait(kPatience));
      EXPECT_EQ(r.met(), 2) << "two reads of an empty buffer did not run at once";
    }
    {
      Rendezvous r;
      LaunchFuture f1 = meet(e.a, empty_slice, Access::read, r);
      LaunchFuture f2 = meet(e.b, empty_slice, Access::read, r);
      EXPECT_TRUE(f1.wait(kPatience));
      EXPECT_TRUE(f2.wait(kPatience));
      EXPECT_EQ(r.met(), 2) << "two reads of an empty slice did not run at once";
    }
    {
      // Even relabelled atomic, an empty view has no bytes to conflict on.
      View empty_atomic = empty.atomic();
      Rendezvous r;
      LaunchFuture f1 = meet(e.a, empty_atomic, Access::read, r);
      LaunchFuture f2 = meet(e.b, empty, Access::read, r);
      EXPECT_TRUE(f1.wait(kPatience));
      EXPECT_TRUE(f2.wait(kPatience));
      EXPECT_EQ(r.met(), 2);
    }
  }
}

TEST_F(Views, ReadThroughAnAtomicViewIsTrackedAsAWrite) {
  EXPECT_EQ(lease_mode(Access::read, true), driver::AccessMode::write);
  EXPECT_EQ(lease_mode(Access::read_write, true), driver::AccessMode::write);
  EXPECT_EQ(lease_mode(Access::atomic, false), driver::AccessMode::write);
  EXPECT_EQ(lease_mode(Access::read, false), driver::AccessMode::read);

  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 16);
  settle();
  View ax = x.atomic();
  EXPECT_TRUE(ax.is_atomic());
  EXPECT_FALSE(x.is_atomic());
  EXPECT_EQ(ax.allocation_id(), x.allocation_id());
  EXPECT_EQ(ax.device_ptr(), x.device_ptr());
  EXPECT_EQ(x.view_count(), 2U);

  Gate& g = gate();
  LaunchFuture held = hold(e.a, ax, Access::read, &g);  // "const" in the kernel signature
  ASSERT_TRUE(g.wait_arrivals(1));
  try {
    (void)hold(e.b, x, Access::read, nullptr);
    ADD_FAILURE() << "a read through an atomic view was not tracked as a write";
  } catch (const ConflictError& c) {
    EXPECT_EQ(c.held.mode, driver::AccessMode::write);
    EXPECT_EQ(c.held.submission_id, held.id());
    EXPECT_EQ(c.requested.mode, driver::AccessMode::read);
  }
  g.open();
  ASSERT_TRUE(held.wait(kPatience));

  // Access::atomic through a plain view is a write too.
  Gate& g2 = gate();
  LaunchFuture held2 = hold(e.a, x, Access::atomic, &g2);
  ASSERT_TRUE(g2.wait_arrivals(1));
  EXPECT_THROW((void)hold(e.b, x, Access::read, nullptr), ConflictError);
  g2.open();
  ASSERT_TRUE(held2.wait(kPatience));
}

TEST_F(Views, SlicesAndPeelsOfANonAtomicBufferAreNotAtomic) {
  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 16);
  settle();
  View ax = x.atomic();  // an atomic relabel exists alongside
  View s = x.slice(0, 8);
  View p = x.peel(2);
  EXPECT_FALSE(s.is_atomic());
  EXPECT_FALSE(p.is_atomic());
  EXPECT_FALSE(x.share().is_atomic());
  // ... while what derives from the atomic view stays atomic.
  EXPECT_TRUE(ax.slice(0, 4).is_atomic());
  Rendezvous r;
  LaunchFuture f1 = meet(e.a, s, Access::read, r);
  LaunchFuture f2 = meet(e.b, p, Access::read, r);
  EXPECT_TRUE(f1.wait(kPatience));
  EXPECT_TRUE(f2.wait(kPatience));
  EXPECT_EQ(r.met(), 2) << "reads of a slice and a peel of a non-atomic buffer did not run at once";
}

TEST_F(Views, ToTensorMovesTheViewKeepingIdPointerAndViewCount) {
  Env e = env();
  View b = allocate(e.a, DType::f32, 24);
  const std::uint64_t id = b.allocation_id();
  const driver::DevicePtr ptr = b.device_ptr();
  const std::int64_t shape[] = {2, 3, 4};
  View t = std::move(b).to_tensor(shape);
  EXPECT_FALSE(b.valid());
  EXPECT_TRUE(t.is_tensor());
  EXPECT_EQ(t.allocation_id(), id);
  EXPECT_EQ(t.device_ptr(), ptr);
  EXPECT_EQ(t.view_count(), 1U);
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(std::vector<std::int64_t>(t.shape().begin(), t.shape().end()),
            (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(std::vector<std::int64_t>(t.strides().begin(), t.strides().end()),
            (std::vector<std::int64_t>{12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.element_count(), 24U);
  const TensorParam<float, 3> tp = t.tensor_param<float, 3>();
  EXPECT_EQ(reinterpret_cast<driver::DevicePtr>(tp.data), ptr);
  EXPECT_EQ(tp.size(), 24);

  View back = std::move(t).into_buffer();
  EXPECT_FALSE(t.valid());
  EXPECT_FALSE(back.is_tensor());
  EXPECT_EQ(back.allocation_id(), id);
  EXPECT_EQ(back.device_ptr(), ptr);
  EXPECT_EQ(back.element_count(), 24U);
  EXPECT_EQ(back.view_count(), 1U);

  // A shape that does not hold the elements: error, source intact.
  const std::int64_t bad[] = {5, 5};
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, std::move(back).to_tensor(bad));
  EXPECT_TRUE(back.valid());
  EXPECT_FALSE(back.is_tensor());
}

TEST_F(Views, ToTensorAndIntoBufferOfAnAliasedAllocationFailAndLeaveTheSourceUsable) {
  Env e = env();
  View b = allocate(e.a, DType::u32, 16);
  View s = b.slice(0, 4);
  const std::int64_t shape[] = {4, 4};
  const std::string msg = error_message_of([&] { (void)std::move(b).to_tensor(shape); });
  EXPECT_NE(msg.find("aliased"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allocation " + std::to_string(s.allocation_id())), std::string::npos) << msg;
  ASSERT_TRUE(b.valid()) << "a failed ownership transfer consumed its source";
  EXPECT_FALSE(b.is_tensor());
  EXPECT_EQ(b.view_count(), 2U);
  (void)fill(e.a, b, 3);
  EXPECT_EQ(read_u32(e.a, b), std::vector<std::uint32_t>(16, 3));

  s = View();
  View t = std::move(b).to_tensor(shape);
  View borrowed = t.as_buffer();
  EXPECT_TANDEM_ERROR(ErrorCode::aliased, std::move(t).into_buffer());
  ASSERT_TRUE(t.valid());
  EXPECT_TRUE(t.is_tensor());
  EXPECT_EQ(read_u32(e.a, t), std::vector<std::uint32_t>(16, 3));
  borrowed = View();
  View again = std::move(t).into_buffer();
  EXPECT_TRUE(again.is_unique());
}

TEST_F(Views, IntoBufferOfANonContiguousTensorFails) {
  Env e = env();
  View b = allocate(e.a, DType::u32, 16);
  const std::int64_t shape[] = {4, 4};
  View t = std::move(b).to_tensor(shape);
  const DimRange cols[] = {{0, 4}, {1, 3}};
  View sub = t.tensor_view(std::nullopt, std::span<const DimRange>(cols));
  t = View();  // the strided view is now the only view: unique, but not contiguous
  ASSERT_TRUE(sub.is_unique());
  ASSERT_FALSE(sub.is_contiguous());
  const std::string msg = error_message_of([&] { (void)std::move(sub).into_buffer(); });
  EXPECT_NE(msg.find("non_contiguous"), std::string::npos) << msg;
  EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous, std::move(sub).into_buffer());
  EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous, sub.as_buffer());
  ASSERT_TRUE(sub.valid());
  EXPECT_TRUE(sub.is_tensor());
}

TEST_F(Views, AsBufferIsABorrowedViewCountedWhileItLives) {
  Env e = env();
  View b = allocate(e.a, DType::u32, 12);
  (void)upload_u32(e.a, b, iota_u32(12));
  const std::int64_t shape[] = {3, 4};
  View t = std::move(b).to_tensor(shape);
  EXPECT_TRUE(t.is_unique());
  {
    View borrowed = t.as_buffer();
    EXPECT_FALSE(borrowed.is_tensor());
    EXPECT_EQ(borrowed.allocation_id(), t.allocation_id());
    EXPECT_EQ(borrowed.device_ptr(), t.device_ptr());
    EXPECT_EQ(borrowed.element_count(), 12U);
    EXPECT_EQ(t.view_count(), 2U);
    EXPECT_FALSE(t.is_unique());
    EXPECT_EQ(read_u32(e.a, borrowed), iota_u32(12));
  }
  EXPECT_EQ(t.view_count(), 1U);
  EXPECT_TRUE(t.is_unique());
  EXPECT_TANDEM_ERROR(ErrorCode::unsupported, View(allocate(e.a, DType::u32, 4)).as_buffer());
}

TEST_F(Views, TensorSubViewWithRangesIsACountedStridedView) {
  Env e = env();
  View b = allocate(e.a, DType::u32, 16);
  (void)upload_u32(e.a, b, iota_u32(16));
  const std::int64_t shape[] = {4, 4};
  View t = std::move(b).to_tensor(shape);
  const DimRange inner[] = {{1, 3}, {1, 3}};
  View sub = t.tensor_view(std::nullopt, std::span<const DimRange>(inner));
  EXPECT_EQ(t.view_count(), 2U);
  EXPECT_EQ(sub.allocation_id(), t.allocation_id());
  EXPECT_TRUE(sub.is_tensor());
  EXPECT_FALSE(sub.is_contiguous());
  EXPECT_EQ(std::vector<std::int64_t>(sub.shape().begin(), sub.shape().end()),
            (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(sub.byte_offset(), 5U * 4);
  EXPECT_EQ(sub.extent_bytes(), 6U * 4);  // elements 5..10
  EXPECT_EQ(read_u32(e.a, sub), (std::vector<std::uint32_t>{5, 6, 9, 10}));

  // A reshape is another counted view; a range outside the shape is an error.
  const std::int64_t flat[] = {2, 8};
  View reshaped = t.tensor_view(std::span<const std::int64_t>(flat), std::nullopt);
  EXPECT_EQ(t.view_count(), 3U);
  EXPECT_TRUE(reshaped.is_contiguous());
  const DimRange row[] = {{1, 2}, {0, 8}};
  View row1 = reshaped.tensor_view(std::nullopt, std::span<const DimRange>(row));
  EXPECT_EQ(read_u32(e.a, row1), iota_u32(8, 8));
  const DimRange outside[] = {{0, 5}, {0, 4}};
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range,
                      t.tensor_view(std::nullopt, std::span<const DimRange>(outside)));
  EXPECT_TANDEM_ERROR(ErrorCode::non_contiguous,
                      sub.tensor_view(std::span<const std::int64_t>(flat), std::nullopt));
  EXPECT_EQ(t.view_count(), 4U);
}

}  // namespace
}  // namespace tandem::test
