// SPDX-License-Identifier: Apache-2.0
#include "sim_clock.hpp"

#include <algorithm>

#include "sim_text.hpp"

namespace tandem::driver::sim {

namespace {

auto find(auto& ticks, std::uint64_t stream) {
  return std::lower_bound(ticks.begin(), ticks.end(), stream,
                          [](const auto& entry, std::uint64_t s) { return entry.first < s; });
}

}  // namespace

std::uint64_t VectorClock::at(std::uint64_t stream) const noexcept {
  const auto it = find(ticks_, stream);
  return it != ticks_.end() && it->first == stream ? it->second : 0;
}

Epoch VectorClock::tick(std::uint64_t stream) {
  auto it = find(ticks_, stream);
  if (it == ticks_.end() || it->first != stream) {
    it = ticks_.insert(it, {stream, 0});
  }
  return Epoch{stream, ++it->second};
}

bool VectorClock::join(const VectorClock& other) {
  if (covers_all(other)) {
    return false;
  }
  // One linear merge of the two sorted lists.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
  merged.reserve(ticks_.size() + other.ticks_.size());
  auto a = ticks_.begin();
  auto b = other.ticks_.begin();
  while (a != ticks_.end() || b != other.ticks_.end()) {
    if (b == other.ticks_.end() || (a != ticks_.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == ticks_.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, std::max(a->second, b->second));
      ++a;
      ++b;
    }
  }
  ticks_ = std::move(merged);
  return true;
}

bool VectorClock::covers_all(const VectorClock& other) const noexcept {
  auto a = ticks_.begin();
  for (const auto& [stream, tick] : other.ticks_) {
    while (a != ticks_.end() && a->first < stream) {
      ++a;
    }
    if (a == ticks_.end() || a->first != stream || a->second < tick) {
      return false;
    }
  }
  return true;
}

ClockSnapshot HostClock::snapshot() const {
  base::Lock lock(mu_);
  return now_;
}

void HostClock::join(const VectorClock& seen) {
  base::Lock lock(mu_);
  if (now_->covers_all(seen)) {
    return;  // nothing new (a retirement thread polling a completed event)
  }
  auto next = std::make_shared<VectorClock>(*now_);
  next->join(seen);
  now_ = std::move(next);
}

VectorClock HostClock::tick(Epoch& epoch) {
  base::Lock lock(mu_);
  auto next = std::make_shared<VectorClock>(*now_);
  epoch = next->tick(kHostStream);
  now_ = next;
  return *next;
}

}  // namespace tandem::driver::sim
