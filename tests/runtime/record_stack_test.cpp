// The stream's pool of submission records (src/runtime/src/stream_state.hpp):
// a deep queue's records come back for reuse instead of being freed, up to
// the pool's limit, and the oldest returned is reused first.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "stream_state.hpp"

namespace tandem::detail {
namespace {

TEST(RecordRing, GrowsRatherThanDropRecordsUpToItsLimit) {
  RecordRing ring;
  std::vector<std::unique_ptr<Submission>> records;
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < RecordRing::kMaxCapacity + 10; ++i) {
    records.push_back(std::make_unique<Submission>());
    if (ring.push(records.back().get())) ++kept;
  }
  // Past the initial capacity every record was kept; past the limit none.
  EXPECT_EQ(kept, RecordRing::kMaxCapacity);
  EXPECT_EQ(ring.size(), RecordRing::kMaxCapacity);
}

TEST(RecordRing, ReusesTheOldestReturnedFirstAcrossGrowth) {
  RecordRing ring;
  std::vector<std::unique_ptr<Submission>> records;
  const std::uint32_t n = std::min(3 * RecordRing::kInitialCapacity + 7, RecordRing::kMaxCapacity);
  // Wrap the ring before it grows: growth must keep the order.
  for (std::uint32_t i = 0; i < RecordRing::kInitialCapacity / 2; ++i) {
    records.push_back(std::make_unique<Submission>());
    ASSERT_TRUE(ring.push(records.back().get()));
    ASSERT_EQ(ring.pop(), records.back().get());
  }
  records.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    records.push_back(std::make_unique<Submission>());
    ASSERT_TRUE(ring.push(records.back().get()));
  }
  for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(ring.pop(), records[i].get()) << "at " << i;
  EXPECT_TRUE(ring.empty());
}

}  // namespace
}  // namespace tandem::detail
