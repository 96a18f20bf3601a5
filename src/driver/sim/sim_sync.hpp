// sim_sync.hpp — locking for the simulated device (private to src/driver/sim).
//
// A std::mutex that clang's thread-safety analysis (-Wthread-safety) can
// follow, and a scoped lock that can also wait on a condition variable.
// Waits are written as `while (!condition) lock.wait(cv);` in the function
// that holds the lock: the analysis treats a predicate lambda as a separate
// function that holds no lock, so it could not check guarded reads there.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define SIM_TSA(x) __attribute__((x))
#else
#define SIM_TSA(x)
#endif

#define SIM_CAPABILITY(x) SIM_TSA(capability(x))
#define SIM_SCOPED_CAPABILITY SIM_TSA(scoped_lockable)
#define SIM_GUARDED_BY(x) SIM_TSA(guarded_by(x))
#define SIM_ACQUIRE(...) SIM_TSA(acquire_capability(__VA_ARGS__))
#define SIM_RELEASE(...) SIM_TSA(release_capability(__VA_ARGS__))
#define SIM_REQUIRES(...) SIM_TSA(requires_capability(__VA_ARGS__))
#define SIM_EXCLUDES(...) SIM_TSA(locks_excluded(__VA_ARGS__))

namespace tandem::driver::sim {

class SIM_CAPABILITY("mutex") Mutex {
 public:
  void lock() SIM_ACQUIRE() { m_.lock(); }
  void unlock() SIM_RELEASE() { m_.unlock(); }

 private:
  friend class Lock;
  std::mutex m_;
};

class SIM_SCOPED_CAPABILITY Lock {
 public:
  explicit Lock(Mutex& m) SIM_ACQUIRE(m) : lock_(m.m_) {}
  ~Lock() SIM_RELEASE() {}
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

  // Releases the mutex while blocked, holds it again on return (the caller
  // re-checks its condition).
  void wait(std::condition_variable& cv) { cv.wait(lock_); }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace tandem::driver::sim
