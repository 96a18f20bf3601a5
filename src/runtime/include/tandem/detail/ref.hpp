// SPDX-License-Identifier: Apache-2.0
// tandem/detail/ref.hpp — intrusive reference counting.
//
// The runtime's shared state objects (platform, context, stream, submission)
// are counted intrusively: one atomic per object, no control block, and the
// object decides what "last reference gone" means (retire, recycle, defer).
// Public handles hold Refs to types they only forward-declare, so counting
// goes through free functions found by argument-dependent lookup:
//   void ref_add(T*) noexcept;  void ref_release(T*) noexcept;
// declared beside each handle and defined where T is complete.
#pragma once

#include <utility>

namespace tandem::detail {

template <class T>
class Ref {
 public:
  Ref() noexcept = default;
  // Takes a new reference.
  explicit Ref(T* p) noexcept : p_(p) {
    if (p_) ref_add(p_);
  }
  // Adopts a reference the caller already owns.
  static Ref adopt(T* p) noexcept {
    Ref r;
    r.p_ = p;
    return r;
  }
  Ref(const Ref& o) noexcept : Ref(o.p_) {}
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() {
    if (p_) ref_release(p_);
  }
  // Gives up ownership without releasing (the caller now owns the reference).
  [[nodiscard]] T* leak() noexcept { return std::exchange(p_, nullptr); }
  void reset() noexcept { Ref().swap_with(*this); }

  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  friend bool operator==(const Ref& a, const Ref& b) noexcept { return a.p_ == b.p_; }

 private:
  void swap_with(Ref& o) noexcept { std::swap(p_, o.p_); }
  T* p_ = nullptr;
};

}  // namespace tandem::detail
