// tandem/detail/small_vector.hpp — a vector with N elements stored inline.
//
// Leases per allocation and accesses per launch are almost always 0–4: inline
// storage keeps the hot path free of heap allocations. Only for trivially
// copyable T (pointers and plain records), which keeps it short.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
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
    data()[size_++] = v;
  }
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
    data()[i] = data()[size_ - 1];
    --size_;
  }
  void clear() noexcept { size_ = 0; }
  // Drops heap storage too (objects are recycled; keep them small).
  void reset() noexcept {
    release_heap();
    size_ = 0;
  }

  T* data() noexcept { return heap_ ? heap_ : reinterpret_cast<T*>(inline_); }
  const T* data() const noexcept { return heap_ ? heap_ : reinterpret_cast<const T*>(inline_); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size_; }
  // Bytes this vector owns beyond its own footprint.
  std::size_t heap_bytes() const noexcept { return heap_ ? capacity_ * sizeof(T) : 0; }

 private:
  void grow() { grow_to(capacity_ * 2); }
  void grow_to(std::size_t cap) {
    T* fresh = static_cast<T*>(::operator new(cap * sizeof(T)));
    std::memcpy(static_cast<void*>(fresh), data(), size_ * sizeof(T));
    release_heap();
    heap_ = fresh;
    capacity_ = cap;
  }
  void release_heap() noexcept {
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
    capacity_ = N;
  }

  T* heap_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace tandem::detail
