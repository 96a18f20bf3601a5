// SPDX-License-Identifier: Apache-2.0
// tandem/base/guard.hpp — std::lock_guard, annotated: holds a Mutex or a
// SpinLock for its scope.
#pragma once

#include "tandem/base/thread_annotations.hpp"

namespace tandem::base {

template <class L>
class TANDEM_SCOPED_CAPABILITY Guard {
 public:
  explicit Guard(L& l) TANDEM_ACQUIRE(l) : l_(l) { l_.lock(); }
  ~Guard() TANDEM_RELEASE() { l_.unlock(); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  L& l_;
};

}  // namespace tandem::base
