// SPDX-License-Identifier: Apache-2.0
// sim_shadow.hpp — the happens-before race check's memory of past accesses
// (private to src/driver/sim; Checker holds it under its lock).
//
// For every byte range touched and not yet freed, FastTrack-style: the last
// write's epoch and the epochs of the reads since it that are not ordered
// before one another (a read ordered after an earlier one replaces it: any
// write unordered with the earlier read is unordered with the later one).
// Ranges are disjoint segments keyed by their first address; touching part
// of one splits it, and neighbours left with the same history merge again.
// A free checks its whole block as a write and then forgets the block's
// segments, so the memory held is bounded by the live blocks touched.
//
// A conflict is two accesses to overlapping bytes, at least one writing (a
// free writes), where neither access's clock covers the other's epoch.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim_clock.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::driver::sim {

// One past access: when, and who, for the message.
struct PastAccess {
  Epoch epoch;
  std::shared_ptr<const std::string> who;  // "launch 'k' on stream #2"
  bool is_free = false;
  friend bool operator==(const PastAccess& a, const PastAccess& b) { return a.epoch == b.epoch; }
};

// A conflict found: the earlier, unordered side and the bytes they share.
struct Race {
  PastAccess earlier;
  bool earlier_writes = false;
  DevicePtr lo = 0;
  DevicePtr hi = 0;
};

class Shadow {
 public:
  // Checks [ptr, ptr + bytes) against the history and records this access.
  // `now` is the accessing operation's clock (it covers `me.epoch`).
  void access(const PastAccess& me, const VectorClock& now, DevicePtr ptr, std::uint64_t bytes, bool write,
              std::vector<Race>& races);
  // Checks a free of [base, base + bytes) as a write, then forgets the range.
  void free(const VectorClock& now, DevicePtr base, std::uint64_t bytes, std::vector<Race>& races);
  [[nodiscard]] std::size_t segments() const noexcept { return segments_.size(); }

 private:
  struct Segment {
    DevicePtr hi = 0;
    std::optional<PastAccess> write;
    std::vector<PastAccess> reads;
  };
  using Map = std::map<DevicePtr, Segment>;

  void split_at(DevicePtr at);
  void fill_gaps(DevicePtr lo, DevicePtr hi);
  void merge_around(DevicePtr lo, DevicePtr hi);
  static void check(const Segment& seg, DevicePtr lo, const VectorClock& now, bool write,
                    std::vector<Race>& races);

  Map segments_;
};

}  // namespace tandem::driver::sim
