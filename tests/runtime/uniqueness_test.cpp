// SPDX-License-Identifier: Apache-2.0
// spec/runtime.md §5 — uniqueness: view count only (leases of in-flight work
// do not count), ownership transfer while completion is pending keeps the
// lease in force, element-type changes require uniqueness, bool validation.
#include <optional>

#include "runtime/runtime_test_support.hpp"

namespace tandem::test {
namespace {

class Uniqueness : public RuntimeFixture {};

TEST_F(Uniqueness, InFlightLeaseDoesNotCountAsView) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 64);
  EXPECT_TRUE(x.is_unique()) << "the allocation's own (birth) ordering lease counted as a view";
  Gate& g = gate();
  LaunchFuture w = fill(e.a, x, 1, {.gate = &g});
  LaunchFuture r = hold(e.a, x, Access::read, nullptr);
  ASSERT_TRUE(g.wait_arrivals(1));
  EXPECT_GE(e.ctx.stats().active_leases, 2U);
  const std::uint64_t checks = e.ctx.stats().uniqueness_checks;
  EXPECT_TRUE(x.is_unique()) << "leases of in-flight work made the buffer look aliased";
  EXPECT_EQ(x.view_count(), 1U);
  EXPECT_EQ(e.ctx.stats().uniqueness_checks, checks + 1);
  g.open();
  ASSERT_TRUE(r.wait(kPatience));
  EXPECT_TRUE(x.is_unique());
}

TEST_F(Uniqueness, ConversionWhileCompletionIsPendingKeepsTheLeaseInForce) {
  Env e = env(ConflictPolicy::reject);
  View x = allocate(e.a, DType::u32, 16);
  settle();
  Gate& g = gate();
  LaunchFuture w = fill(e.a, x, 8, {.gate = &g});
  ASSERT_TRUE(g.wait_arrivals(1));
  const std::int64_t shape[] = {4, 4};
  View t = std::move(x).to_tensor(shape);  // succeeds while the write is pending
  EXPECT_TRUE(t.is_tensor());
  EXPECT_EQ(w.status(), SubmissionStatus::pending);
  // The pending write's lease still protects the bytes under the new handle.
  EXPECT_THROW((void)hold(e.b, t, Access::read, nullptr), ConflictError);
  View back = std::move(t).into_buffer();  // and back again, still pending
  EXPECT_THROW((void)hold(e.b, back, Access::read, nullptr), ConflictError);
  EXPECT_EQ(e.ctx.stats().active_leases, 1U);
  g.open();
  ASSERT_TRUE(w.wait(kPatience));
  LaunchFuture r = hold(e.b, back, Access::read, nullptr);
  EXPECT_TRUE(r.wait(kPatience));
  EXPECT_EQ(read_u32(e.b, back), std::vector<std::uint32_t>(16, 8));

  // Under the order policy the conflicting work waits for the lease instead.
  Env o = env(ConflictPolicy::order);
  View y = allocate(o.a, DType::u32, 16);
  settle();
  Gate& g2 = gate();
  Journal j;
  LaunchFuture wy = fill(o.a, y, 1, {.gate = &g2, .journal = &j, .tag = 1});
  ASSERT_TRUE(g2.wait_arrivals(1));
  View ty = std::move(y).to_tensor(shape);
  LaunchFuture later = fill(o.b, ty, 2, {.journal = &j, .tag = 2});
  g2.open();
  ASSERT_TRUE(later.wait(kPatience));
  ASSERT_TRUE(wy.wait(kPatience));
  EXPECT_EQ(j.tags(), (std::vector<std::uint32_t>{1, 2}));
}

TEST_F(Uniqueness, EveryOtherViewMakesItNonUnique) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 16);
  ASSERT_TRUE(x.is_unique());
  {
    View s = x.slice(0, 4);
    EXPECT_FALSE(x.is_unique());
    EXPECT_FALSE(s.is_unique());
  }
  EXPECT_TRUE(x.is_unique());
  {
    View p = x.peel(3);
    EXPECT_FALSE(x.is_unique());
  }
  {
    View sh = x.share();
    EXPECT_FALSE(x.is_unique());
  }
  {
    View a = x.atomic();
    EXPECT_FALSE(x.is_unique());
  }
  {
    View empty_slice = x.slice(16, 0);  // even an empty slice is a view
    EXPECT_FALSE(x.is_unique());
  }
  EXPECT_TRUE(x.is_unique());
  EXPECT_EQ(x.view_count(), 1U);
  // Moving a view moves its count.
  View moved = std::move(x);
  EXPECT_TRUE(moved.is_unique());
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x.is_unique());
}

TEST_F(Uniqueness, ReinterpretRequiresUniqueness) {
  Env e = env();
  View x = allocate(e.a, DType::u32, 8);
  (void)upload_u32(e.a, x, iota_u32(8, 0x01020300));
  {
    View alias = x.slice(0, 1);
    const std::string msg = error_message_of([&] { (void)std::move(x).reinterpret(DType::u8); });
    EXPECT_NE(msg.find("aliased"), std::string::npos) << msg;
    EXPECT_NE(msg.find("allocation " + std::to_string(alias.allocation_id())), std::string::npos) << msg;
    ASSERT_TRUE(x.valid());
    EXPECT_EQ(x.dtype(), DType::u32);
    EXPECT_EQ(x.element_count(), 8U);
  }
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_dtype, std::move(x).reinterpret(DType::boolean));
  View b = std::move(x).reinterpret(DType::u8);
  EXPECT_FALSE(x.valid());
  EXPECT_EQ(b.dtype(), DType::u8);
  EXPECT_EQ(b.element_count(), 32U);
  EXPECT_EQ(b.view_count(), 1U);
  // 32 bytes are 4 u64s; 3 bytes are not a whole u32.
  View w = std::move(b).reinterpret(DType::u64);
  EXPECT_EQ(w.element_count(), 4U);
  View odd = allocate(e.a, DType::u8, 3);
  EXPECT_TANDEM_ERROR(ErrorCode::out_of_range, std::move(odd).reinterpret(DType::u32));
  EXPECT_TRUE(odd.valid());
}

TEST_F(Uniqueness, BoolConversionValidatesBytesAndRequiresU8OrI8) {
  Env e = env();
  auto bytes_view = [&](std::vector<std::uint8_t> bytes, DType dtype = DType::u8) {
    View v = allocate(e.a, dtype, bytes.size());
    (void)upload(e.a, v, std::as_bytes(std::span<const std::uint8_t>(bytes)));
    return v;
  };
  View ok = bytes_view({0, 1, 1, 0, 1});
  const std::uint64_t id = ok.allocation_id();
  View b = std::move(ok).to_bool_checked(e.a);
  EXPECT_EQ(b.dtype(), DType::boolean);
  EXPECT_EQ(b.allocation_id(), id);
  EXPECT_EQ(b.element_count(), 5U);
  EXPECT_FALSE(ok.valid());

  View bad = bytes_view({0, 1, 2, 1, 0});
  const std::string msg = error_message_of([&] { (void)std::move(bad).to_bool_checked(e.a); });
  EXPECT_NE(msg.find("invalid_dtype"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte 2 "), std::string::npos) << "the first bad index is not named: " << msg;
  EXPECT_NE(msg.find("allocation " + std::to_string(bad.allocation_id())), std::string::npos) << msg;
  ASSERT_TRUE(bad.valid());
  EXPECT_EQ(bad.dtype(), DType::u8);

  View signed_ok = bytes_view({1, 0}, DType::i8);
  EXPECT_EQ(std::move(signed_ok).to_bool_checked(e.a).dtype(), DType::boolean);
  View minus_one = bytes_view({0, 0xFF}, DType::i8);
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_dtype, std::move(minus_one).to_bool_checked(e.a));

  View words = allocate(e.a, DType::u32, 2);
  (void)memset_bytes(e.a, words, 0);
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_dtype, std::move(words).to_bool_checked(e.a));
  View floats = allocate(e.a, DType::f32, 2);
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_dtype, std::move(floats).to_bool_checked(e.a));

  View shared = bytes_view({0, 1});
  View alias = shared.peel(0);
  EXPECT_TANDEM_ERROR(ErrorCode::aliased, std::move(shared).to_bool_checked(e.a));
  EXPECT_TRUE(shared.valid());
  alias = View();
  EXPECT_EQ(std::move(shared).to_bool_checked(e.a).dtype(), DType::boolean);
}

}  // namespace
}  // namespace tandem::test
