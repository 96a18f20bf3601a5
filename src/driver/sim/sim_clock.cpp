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
  bool grew = false;
  for (const auto& [stream, tick] : other.ticks_) {
    auto it = find(ticks_, stream);
    if (it == ticks_.end() || it->first != stream) {
      ticks_.insert(it, {stream, tick});
      grew = true;
    } else if (it->second < tick) {
      it->second = tick;
      grew = true;
    }
  }
  return grew;
}

bool VectorClock::covers_all(const VectorClock& other) const noexcept {
  return std::all_of(other.ticks_.begin(), other.ticks_.end(),
                     [&](const auto& entry) { return entry.second <= at(entry.first); });
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
