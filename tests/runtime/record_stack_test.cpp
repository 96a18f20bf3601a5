// SPDX-License-Identifier: Apache-2.0
// The stream's pool of submission records (src/runtime/src/stream_state.hpp):
// a deep queue's records come back for reuse instead of being freed, up to
// the pool's limit, and the newest returned is reused first, so a stream
// that once held many cycles through only as many as it uses now.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "stream_state.hpp"

namespace tandem::detail {
namespace {

TEST(RecordStack, GrowsRatherThanDropRecordsUpToItsLimit) {
  RecordStack stack;
  std::vector<std::unique_ptr<Submission>> records;
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < RecordStack::kMaxCapacity + 10; ++i) {
    records.push_back(std::make_unique<Submission>());
    if (stack.push(records.back().get())) ++kept;
  }
  // Past the initial capacity every record was kept; past the limit none.
  EXPECT_EQ(kept, RecordStack::kMaxCapacity);
  EXPECT_EQ(stack.size(), RecordStack::kMaxCapacity);
}

TEST(RecordStack, ReusesTheNewestReturnedFirstAcrossGrowth) {
  RecordStack stack;
  std::vector<std::unique_ptr<Submission>> records;
  const std::uint32_t n = std::min(3 * RecordStack::kInitialCapacity + 7, RecordStack::kMaxCapacity);
  for (std::uint32_t i = 0; i < n; ++i) {
    records.push_back(std::make_unique<Submission>());
    ASSERT_TRUE(stack.push(records.back().get()));
  }
  for (std::uint32_t i = n; i-- > 0;) ASSERT_EQ(stack.pop(), records[i].get()) << "at " << i;
  EXPECT_TRUE(stack.empty());
}

// A stream that held a deep queue once, then launches one at a time: the
// records it reuses are the few it just returned, not the idle thousands.
TEST(RecordStack, ASmallWorkingSetStaysSmallOnTopOfAnIdleDeepPool) {
  RecordStack stack;
  std::vector<std::unique_ptr<Submission>> idle;
  for (std::uint32_t i = 0; i < 4 * RecordStack::kInitialCapacity && i < RecordStack::kMaxCapacity; ++i) {
    idle.push_back(std::make_unique<Submission>());
    ASSERT_TRUE(stack.push(idle.back().get()));
  }
  std::vector<Submission*> seen;
  for (int round = 0; round < 100; ++round) {
    Submission* a = stack.pop();
    Submission* b = stack.pop();
    for (Submission* s : {a, b}) {
      if (std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
    }
    ASSERT_TRUE(stack.push(a));
    ASSERT_TRUE(stack.push(b));
  }
  EXPECT_EQ(seen.size(), 2u);
}

}  // namespace
}  // namespace tandem::detail
