// SPDX-License-Identifier: Apache-2.0
// A context's spare allocation records (src/runtime/src/allocation_bin.hpp):
// a record's block given back is the next one taken, newest first, and the
// bin keeps no more than its capacity. Off under AddressSanitizer (each
// record must be seen freed there) and with TANDEM_ALLOCATION_BIN=0: then
// every block is new and every given block is freed.
#include "allocation_bin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tuning.hpp"

namespace tandem::detail {
namespace {

using Bin = AllocationBin<144>;

TEST(AllocationBin, ABlockGivenBackIsTheNextOneTaken) {
  if (!allocation_bin_on()) GTEST_SKIP() << "the bin is off (AddressSanitizer or TANDEM_ALLOCATION_BIN=0)";
  Bin bin;
  void* a = bin.take();
  void* b = bin.take();
  ASSERT_NE(a, b);
  bin.give(a);
  bin.give(b);
  EXPECT_EQ(bin.take(), b) << "the newest given is not reused first";
  EXPECT_EQ(bin.take(), a);
  bin.give(a);
  bin.give(b);
}  // the bin frees the blocks it keeps when it goes

TEST(AllocationBin, KeepsAtMostItsCapacityAndFreesTheRest) {
  if (!allocation_bin_on()) GTEST_SKIP() << "the bin is off (AddressSanitizer or TANDEM_ALLOCATION_BIN=0)";
  Bin bin;
  std::vector<void*> blocks;
  for (std::uint32_t i = 0; i < Bin::kCapacity + 5; ++i) blocks.push_back(bin.take());
  for (void* b : blocks) bin.give(b);
  // The first kCapacity given are kept; the 5 after were freed.
  std::vector<void*> kept(blocks.begin(), blocks.begin() + Bin::kCapacity);
  std::sort(kept.begin(), kept.end());
  std::vector<void*> taken;
  for (std::uint32_t i = 0; i < Bin::kCapacity; ++i) taken.push_back(bin.take());
  std::sort(taken.begin(), taken.end());
  EXPECT_EQ(taken, kept);
  for (void* b : taken) bin.give(b);
}

}  // namespace
}  // namespace tandem::detail
