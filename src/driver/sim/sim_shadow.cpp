// SPDX-License-Identifier: Apache-2.0
#include "sim_shadow.hpp"

#include <algorithm>
#include <iterator>

namespace tandem::driver::sim {

namespace {

bool same_history(const std::optional<PastAccess>& a, const std::optional<PastAccess>& b) {
  return a.has_value() == b.has_value() && (!a || *a == *b);
}

// The same earlier access is reported once per operation, not per segment.
void add_race(std::vector<Race>& races, const PastAccess& earlier, bool earlier_writes, DevicePtr lo,
              DevicePtr hi) {
  for (Race& r : races) {
    if (r.earlier == earlier && r.hi == lo) {
      r.hi = hi;  // adjacent segments of one earlier access: one wider range
      return;
    }
    if (r.earlier == earlier) {
      return;
    }
  }
  races.push_back(Race{earlier, earlier_writes, lo, hi});
}

}  // namespace

void Shadow::split_at(DevicePtr at) {
  auto it = segments_.upper_bound(at);
  if (it == segments_.begin()) {
    return;
  }
  --it;
  if (it->first < at && at < it->second.hi) {
    Segment right = it->second;
    it->second.hi = at;
    segments_.emplace_hint(std::next(it), at, std::move(right));
  }
}

void Shadow::fill_gaps(DevicePtr lo, DevicePtr hi) {
  DevicePtr at = lo;
  auto it = segments_.lower_bound(lo);
  while (at < hi) {
    if (it == segments_.end() || it->first >= hi) {
      segments_.emplace_hint(it, at, Segment{hi, std::nullopt, {}});
      return;
    }
    if (it->first > at) {
      segments_.emplace_hint(it, at, Segment{it->first, std::nullopt, {}});
    }
    at = it->second.hi;
    ++it;
  }
}

void Shadow::merge_around(DevicePtr lo, DevicePtr hi) {
  auto it = segments_.lower_bound(lo);
  if (it != segments_.begin()) {
    --it;
  }
  while (it != segments_.end() && it->first <= hi) {
    auto next = std::next(it);
    if (next == segments_.end()) {
      return;
    }
    Segment& a = it->second;
    const Segment& b = next->second;
    if (a.hi == next->first && same_history(a.write, b.write) && a.reads == b.reads) {
      a.hi = b.hi;
      segments_.erase(next);
    } else {
      it = next;
    }
  }
}

void Shadow::check(const Segment& seg, DevicePtr lo, const VectorClock& now, bool write,
                   std::vector<Race>& races) {
  if (seg.write && !now.covers(seg.write->epoch)) {
    add_race(races, *seg.write, true, lo, seg.hi);
  }
  if (!write) {
    return;  // read after read never conflicts
  }
  for (const PastAccess& r : seg.reads) {
    if (!now.covers(r.epoch)) {
      add_race(races, r, false, lo, seg.hi);
    }
  }
}

void Shadow::access(const PastAccess& me, const VectorClock& now, DevicePtr ptr, std::uint64_t bytes,
                    bool write, std::vector<Race>& races) {
  if (bytes == 0) {
    return;
  }
  const DevicePtr lo = ptr;
  const DevicePtr hi = ptr + bytes;
  split_at(lo);
  split_at(hi);
  fill_gaps(lo, hi);
  for (auto it = segments_.lower_bound(lo); it != segments_.end() && it->first < hi; ++it) {
    Segment& seg = it->second;
    check(seg, it->first, now, write, races);
    if (write) {
      seg.write = me;
      seg.reads.clear();
    } else {
      std::erase_if(seg.reads, [&](const PastAccess& r) { return now.covers(r.epoch); });
      seg.reads.push_back(me);
    }
  }
  merge_around(lo, hi);
}

void Shadow::free(const VectorClock& now, DevicePtr base, std::uint64_t bytes, std::vector<Race>& races) {
  const DevicePtr hi = base + bytes;
  split_at(base);
  split_at(hi);
  auto first = segments_.lower_bound(base);
  auto last = first;
  for (; last != segments_.end() && last->first < hi; ++last) {
    check(last->second, last->first, now, true, races);
  }
  segments_.erase(first, last);
}

}  // namespace tandem::driver::sim
