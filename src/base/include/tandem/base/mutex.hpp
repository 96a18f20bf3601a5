// SPDX-License-Identifier: Apache-2.0
// tandem/base/mutex.hpp — std::mutex that clang's thread-safety analysis can
// follow, for the cold paths (registries, condition variables, the sim's
// state). Hold it with Guard (guard.hpp) or, to wait on a condition
// variable, with Lock (lock.hpp).
#pragma once

#include <mutex>

#include "tandem/base/thread_annotations.hpp"

namespace tandem::base {

class TANDEM_CAPABILITY("mutex") Mutex {
 public:
  void lock() TANDEM_ACQUIRE() { mu_.lock(); }
  void unlock() TANDEM_RELEASE() { mu_.unlock(); }
  bool try_lock() TANDEM_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  std::mutex& native() { return mu_; }  // for std::condition_variable

 private:
  std::mutex mu_;
};

}  // namespace tandem::base
