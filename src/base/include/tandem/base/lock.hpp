// SPDX-License-Identifier: Apache-2.0
// tandem/base/lock.hpp — a scoped hold of a Mutex that can also wait on a
// condition variable.
//
// Waits are written as `while (!condition) lock.wait(cv);` in the function
// that holds the lock: the analysis treats a predicate lambda as a separate
// function that holds no lock, so it could not check guarded reads there.
#pragma once

#include <condition_variable>
#include <mutex>

#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"

namespace tandem::base {

class TANDEM_SCOPED_CAPABILITY Lock {
 public:
  explicit Lock(Mutex& m) TANDEM_ACQUIRE(m) : lock_(m.native()) {}
  ~Lock() TANDEM_RELEASE() {}
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

  // Releases the mutex while blocked, holds it again on return (the caller
  // re-checks its condition).
  void wait(std::condition_variable& cv) { cv.wait(lock_); }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace tandem::base
