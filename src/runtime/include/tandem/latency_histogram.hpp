// SPDX-License-Identifier: Apache-2.0
// tandem/latency_histogram.hpp — a lock-free log-linear histogram of
// durations (submit cost, retirement latency).
//
// Every submission of a run may land here (threads included), so it must not
// grow with the run: 32 sub-buckets per power of two give percentiles
// within ~3 % in fixed memory, and recording is one relaxed atomic add.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace tandem {

class LatencyHistogram {
 public:
  void record(std::uint64_t ns) noexcept {
    buckets_[index(ns)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t m = max_.load(std::memory_order_relaxed);
    while (ns > m && !max_.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
    }
  }
  // record() for a histogram that one thread writes (others may only read
  // a snapshot): plain loads and stores, none of record()'s locked
  // read-modify-writes (two per sample on x86, three on a new maximum).
  void record_single_writer(std::uint64_t ns) noexcept {
    std::atomic<std::uint64_t>& b = buckets_[index(ns)];
    b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
  }
  // Adds another histogram's samples (a snapshot of them, if it is still
  // being written).
  void add(const LatencyHistogram& o) noexcept {
    for (std::size_t i = 0; i < kBuckets; ++i) {
      buckets_[i].fetch_add(o.buckets_[i].load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    count_.fetch_add(o.count(), std::memory_order_relaxed);
    std::uint64_t m = max_.load(std::memory_order_relaxed);
    const std::uint64_t om = o.max();
    while (om > m && !max_.compare_exchange_weak(m, om, std::memory_order_relaxed)) {
    }
  }
  [[nodiscard]] std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t max() const noexcept { return max_.load(std::memory_order_relaxed); }
  // Calls f(lo, hi, count) for each non-empty bucket [lo, hi), in order of
  // lo (a report draws the distribution from them).
  template <class F>
  void for_each_bucket(F&& f) const {
    for (std::size_t i = 0; i < kBuckets; ++i) {
      const std::uint64_t n = buckets_[i].load(std::memory_order_relaxed);
      if (n != 0) f(lower(i), lower(i) + width(i), n);
    }
  }
  // The value below which `q` (0..1) of the samples lie (a bucket's
  // midpoint; exact below 64 ns). 0 when empty.
  [[nodiscard]] std::uint64_t quantile(double q) const noexcept {
    const std::uint64_t n = count();
    if (n == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
      seen += buckets_[i].load(std::memory_order_relaxed);
      if (seen >= rank) return std::min(midpoint(i), max());
    }
    return max();
  }

 private:
  static constexpr int kSubBits = 5;                                  // 32 sub-buckets per power of two
  static constexpr std::size_t kLinear = std::size_t{2} << kSubBits;  // 0..63 exact
  static constexpr std::size_t kBuckets = kLinear + (64 - kSubBits - 1) * (std::size_t{1} << kSubBits);

  static std::size_t index(std::uint64_t v) noexcept {
    if (v < kLinear) return static_cast<std::size_t>(v);
    const int e = 63 - std::countl_zero(v);  // >= kSubBits + 1
    const std::uint64_t sub = (v >> (e - kSubBits)) & ((1U << kSubBits) - 1);
    return kLinear + static_cast<std::size_t>(e - kSubBits - 1) * (std::size_t{1} << kSubBits) + sub;
  }
  static std::uint64_t midpoint(std::size_t i) noexcept {
    if (i < kLinear) return i;
    return lower(i) + width(i) / 2;
  }
  static std::uint64_t lower(std::size_t i) noexcept {
    if (i < kLinear) return i;
    const std::size_t k = i - kLinear;
    const int e = static_cast<int>(k >> kSubBits) + kSubBits + 1;
    const std::uint64_t sub = k & ((1U << kSubBits) - 1);
    return (std::uint64_t{1} << e) + (sub << (e - kSubBits));
  }
  static std::uint64_t width(std::size_t i) noexcept {
    if (i < kLinear) return 1;
    const int e = static_cast<int>((i - kLinear) >> kSubBits) + kSubBits + 1;
    return std::uint64_t{1} << (e - kSubBits);
  }

  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> max_{0};
};

}  // namespace tandem
