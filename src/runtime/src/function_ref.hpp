// SPDX-License-Identifier: Apache-2.0
// function_ref.hpp — a non-owning reference to a callable (no allocation,
// one indirect call): how the submit path takes "the driver call to make".
#pragma once

#include <type_traits>
#include <utility>

namespace tandem::detail {

template <class Sig>
class FunctionRef;

template <class R, class... A>
class FunctionRef<R(A...)> {
 public:
  // The requires-clause keeps copies and moves on the implicit members
  // (clang-tidy 14 reads only enable_if, hence the second NOLINT).
  // clang-format 14 has no stable layout for a constrained constructor.
  // clang-format off
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef>)
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor,bugprone-forwarding-reference-overload)
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, A... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...);
        }) {}
  // clang-format on
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

}  // namespace tandem::detail
