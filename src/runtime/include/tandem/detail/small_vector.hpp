// SPDX-License-Identifier: Apache-2.0
// tandem/detail/small_vector.hpp — a vector with N elements stored inline.
//
// Leases per allocation and accesses per launch are almost always 0–4: inline
// storage keeps the hot path free of heap allocations. Only for trivially
// copyable T (pointers and plain records), which keeps it short.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace tandem::detail {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  SmallVector() noexcept = default;
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  ~SmallVector() { release_heap(); }

  void push_back(const T& v) {
    if (size_ == capacity_) grow();
    data_[size_++] = v;
  }
  // Appends one element in room reserved before (reserve, reserve_one),
  // left for the caller to assign.
  T& emplace_reserved() noexcept { return data_[size_++]; }
  // Room for one more element, so that the next push_back cannot throw.
  void reserve_one() {
    if (size_ == capacity_) grow();
  }
  // Room for `n` elements in all, in one allocation at most.
  void reserve(std::size_t n) {
    if (n > capacity_) grow_to(n);
  }
  // Removes element i by moving the last one into its place (order not kept).
  void swap_remove(std::size_t i) noexcept {
    data_[i] = data_[size_ - 1];
    --size_;
  }
  void clear() noexcept { size_ = 0; }
  // Drops heap storage too (objects are recycled; keep them small).
  void reset() noexcept {
    release_heap();
    size_ = 0;
  }

  // One load, no branch: the launch path reads these vectors many times.
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size_; }
  // Bytes this vector owns beyond its own footprint.
  std::size_t heap_bytes() const noexcept { return on_heap() ? capacity_ * kSlotBytes : 0; }

 private:
  static_assert(N > 0 && N <= UINT32_MAX);
  // T is a pointer in SmallVector<Lease*>: its sizeof is the slot size meant.
  static constexpr std::size_t kSlotBytes = sizeof(T);  // NOLINT(bugprone-sizeof-expression)
  T* inline_data() noexcept { return reinterpret_cast<T*>(inline_); }
  bool on_heap() const noexcept { return data_ != reinterpret_cast<const T*>(inline_); }
  void grow() { grow_to(std::size_t{capacity_} * 2); }
  void grow_to(std::size_t cap) {
    if (cap > UINT32_MAX) throw std::length_error("SmallVector: more than 2^32-1 elements");
    T* fresh = static_cast<T*>(::operator new(cap* kSlotBytes));
    std::memcpy(static_cast<void*>(fresh), data_, size_ * kSlotBytes);
    release_heap();
    data_ = fresh;
    capacity_ = static_cast<std::uint32_t>(cap);
  }
  void release_heap() noexcept {
    if (on_heap()) ::operator delete(data_);
    data_ = inline_data();
    capacity_ = N;
  }

  // Points at inline_ or at the heap block: the vector is neither copied
  // nor moved, so the inline address never goes stale.
  T* data_ = inline_data();
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
  alignas(T) unsigned char inline_[N * kSlotBytes];
};

}  // namespace tandem::detail
