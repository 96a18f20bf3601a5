// SPDX-License-Identifier: Apache-2.0
// The base layer's names: one spelling each, parsed back to the same value.
#include <gtest/gtest.h>

#include "tandem/base/access_mode.hpp"
#include "tandem/base/backend_kind.hpp"
#include "tandem/base/conflict_policy.hpp"
#include "tandem/base/dtype.hpp"

namespace tandem {
namespace {

TEST(BackendKind, EveryNameParsesBackToItsKind) {
  for (BackendKind k : kAllBackendKinds) EXPECT_EQ(parse_backend_kind(backend_kind_name(k)), k);
  EXPECT_EQ(backend_kind_name(BackendKind::automatic), "auto");
  EXPECT_EQ(backend_kind_name(BackendKind::cuda), "cuda");
  EXPECT_EQ(backend_kind_name(BackendKind::sim), "sim");
}

TEST(BackendKind, OnlyTheExactNamesParse) {
  for (const char* text : {"", "automatic", "Auto", "CUDA", "sim ", "gpu"}) {
    EXPECT_EQ(parse_backend_kind(text), std::nullopt) << text;
  }
}

TEST(ConflictPolicy, EveryNameParsesBackToItsPolicy) {
  for (ConflictPolicy p : kAllConflictPolicies) EXPECT_EQ(parse_conflict_policy(conflict_policy_name(p)), p);
  EXPECT_EQ(conflict_policy_name(ConflictPolicy::order), "order");
  EXPECT_EQ(conflict_policy_name(ConflictPolicy::reject), "reject");
  EXPECT_EQ(parse_conflict_policy("ordered"), std::nullopt);
  EXPECT_EQ(parse_conflict_policy(""), std::nullopt);
}

TEST(AccessMode, AtomicReadsAndWritesAndIsLeasedAsAWrite) {
  EXPECT_TRUE(reads(AccessMode::atomic));
  EXPECT_TRUE(writes(AccessMode::atomic));
  EXPECT_EQ(lease_mode_of(AccessMode::atomic), AccessMode::write);
  for (AccessMode m : {AccessMode::read, AccessMode::write, AccessMode::read_write}) {
    EXPECT_EQ(lease_mode_of(m), m);
  }
}

TEST(AccessMode, ReadWriteIsBothBitsAndOnlyWritingModesWrite) {
  EXPECT_TRUE(reads(AccessMode::read) && !writes(AccessMode::read));
  EXPECT_TRUE(!reads(AccessMode::write) && writes(AccessMode::write));
  EXPECT_TRUE(reads(AccessMode::read_write) && writes(AccessMode::read_write));
  // The driver's declared accesses have always used these values.
  EXPECT_EQ(static_cast<int>(AccessMode::read), 1);
  EXPECT_EQ(static_cast<int>(AccessMode::write), 2);
  EXPECT_EQ(static_cast<int>(AccessMode::read_write), 3);
}

TEST(AccessMode, NamesAreTheOnesErrorMessagesUse) {
  EXPECT_EQ(access_mode_name(AccessMode::read), "read");
  EXPECT_EQ(access_mode_name(AccessMode::write), "write");
  EXPECT_EQ(access_mode_name(AccessMode::read_write), "read-write");
  EXPECT_EQ(access_mode_name(AccessMode::atomic), "atomic");
}

TEST(DType, EveryNameParsesBackToItsType) {
  for (DType t : kAllDTypes) EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  EXPECT_EQ(dtype_name(DType::boolean), "bool");
  EXPECT_EQ(dtype_from_name("boolean"), std::nullopt);
  static_assert(dtype_size(DType::f64) == 8 && dtype_size(DType::bf16) == 2 &&
                dtype_size(DType::fp4_e2m1x2) == 1);
}

}  // namespace
}  // namespace tandem
