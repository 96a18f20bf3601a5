// SPDX-License-Identifier: Apache-2.0
#include "tandem/launch_future.hpp"

#include "deadline.hpp"
#include "record_hook.hpp"
#include "retirement.hpp"
#include "submission.hpp"
#include "tandem/base/mutant.hpp"

namespace tandem {

LaunchFuture::LaunchFuture(const LaunchFuture& o) noexcept : s_(o.s_) {
  if (s_) s_->add_ref();
}

LaunchFuture& LaunchFuture::operator=(const LaunchFuture& o) noexcept {
  LaunchFuture copy(o);
  std::swap(s_, copy.s_);
  return *this;
}

LaunchFuture& LaunchFuture::operator=(LaunchFuture&& o) noexcept {
  LaunchFuture moved(std::move(o));
  std::swap(s_, moved.s_);
  return *this;
}

LaunchFuture::~LaunchFuture() {
  if (!s_) return;
  if (base::mutant(base::Mutant::forgotten_future_drops_leases) &&
      s_->state.load(std::memory_order_acquire) == detail::SubmissionState::pending) {
    detail::untrack_leases_now(*s_);
  }
  s_->release();
}

std::uint64_t LaunchFuture::id() const noexcept { return s_ ? s_->id : 0; }

SubmissionStatus LaunchFuture::status() const noexcept {
  if (!s_) return SubmissionStatus::retired;
  switch (s_->state.load(std::memory_order_acquire)) {
    case detail::SubmissionState::pending:
      return SubmissionStatus::pending;
    case detail::SubmissionState::retired:
      return SubmissionStatus::retired;
    case detail::SubmissionState::quarantined:
      return SubmissionStatus::quarantined;
  }
  return SubmissionStatus::pending;
}

bool LaunchFuture::wait(std::chrono::nanoseconds timeout) const {
  if (!s_) return true;
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_wait_submission(id());
  return detail::Retirement::instance().wait_submission(*s_, detail::deadline_after(timeout));
}

}  // namespace tandem
