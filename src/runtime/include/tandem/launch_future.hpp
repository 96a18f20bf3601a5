// SPDX-License-Identifier: Apache-2.0
// tandem/launch_future.hpp — the caller's handle on a submission.
//
//   tandem::LaunchFuture f = tandem::launch(stream, kernel, dims, params, accesses);
//   f.wait();                // blocks until the runtime proved it complete
//   std::move(f).forget();   // or leak it on purpose: nothing changes
//
// Dropping or forgetting a future changes nothing about the submission: its
// leases are held until the runtime has proven it complete on the GPU.
#pragma once

#include <chrono>
#include <cstdint>

namespace tandem {

namespace detail {
struct Submission;
}

enum class SubmissionStatus : std::uint8_t {
  pending,      // not yet proven complete
  retired,      // proven complete; its leases are released
  quarantined,  // completion unknown: its leases and memory are retained forever
};

class LaunchFuture {
 public:
  LaunchFuture() noexcept = default;
  explicit LaunchFuture(detail::Submission* adopted) noexcept : s_(adopted) {}
  LaunchFuture(const LaunchFuture& o) noexcept;
  LaunchFuture& operator=(const LaunchFuture& o) noexcept;
  LaunchFuture(LaunchFuture&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  LaunchFuture& operator=(LaunchFuture&& o) noexcept;
  ~LaunchFuture();  // never waits

  [[nodiscard]] bool valid() const noexcept { return s_ != nullptr; }
  [[nodiscard]] std::uint64_t id() const noexcept;
  [[nodiscard]] SubmissionStatus status() const noexcept;  // lock-free
  [[nodiscard]] bool done() const noexcept { return status() != SubmissionStatus::pending; }
  // Blocks until retired or quarantined, or `timeout` (returns false).
  // Quarantined work never retires: wait() returns true and status() says so.
  bool wait(std::chrono::nanoseconds timeout = std::chrono::hours(24 * 365)) const;
  // Leaks the handle on purpose (no destructor runs). The submission retires
  // as usual; only the small submission record is never reclaimed.
  void forget() && noexcept { s_ = nullptr; }

 private:
  detail::Submission* s_ = nullptr;
};

}  // namespace tandem
