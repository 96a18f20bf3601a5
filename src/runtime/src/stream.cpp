// SPDX-License-Identifier: Apache-2.0
#include "tandem/stream.hpp"

#include <algorithm>

#include "context_state.hpp"
#include "queue_bound.hpp"
#include "record_hook.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"

namespace tandem {

std::uint64_t StreamRef::id() const noexcept { return s_->id; }
driver::StreamHandle StreamRef::native() const noexcept { return s_->handle; }

Stream Stream::create(const Context& ctx) {
  detail::ContextState& c = *ctx.state();
  driver::StreamHandle h;
  c.check(c.backend().stream_create(c.handle, h), "creating a stream in context " + std::to_string(c.id));
  Stream s(detail::Ref<detail::StreamState>::adopt(detail::StreamState::create(c, h, true)));
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_stream_created(s);
  return s;
}

Stream Stream::borrow(const Context& ctx, driver::StreamHandle handle) {
  if (!handle) throw Error(ErrorCode::invalid_handle, "borrowing a null stream handle");
  Stream s(detail::Ref<detail::StreamState>::adopt(detail::StreamState::create(*ctx.state(), handle, false)));
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_stream_borrowed(s);
  return s;
}

std::uint64_t Stream::id() const noexcept { return s_->id; }
bool Stream::owned() const noexcept { return s_->owned; }
driver::StreamHandle Stream::native() const noexcept { return s_->handle; }
Context Stream::context() const { return Context(detail::Ref<detail::ContextState>(s_->ctx)); }

void Stream::isolate_next_submission() const {
  detail::StreamState& s = *s_;
  bool queued = false;
  {
    const detail::NotifyRetirementIfQueued notify{queued, s.retirement};
    base::Guard g(s.mu);
    if (s.capture) return;  // captured work is not a submission
    if (const detail::Submission* t = s.tail.load(std::memory_order_relaxed); t && t->covered) {
      (void)s.queue_marker(queued);
    }
    s.isolate_next = true;
  }
}

void Stream::set_max_queued(std::uint32_t cap) const {
  detail::StreamState& s = *s_;
  base::Guard g(s.mu);
  s.set_queue_cap_locked(std::min(cap, detail::kMaxQueuedPerStream));
}

std::uint32_t Stream::max_queued() const noexcept { return s_->queue_cap.load(std::memory_order_relaxed); }

void Stream::synchronize() const {
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_wait_stream(*this);
  s_->ctx->check(s_->ctx->backend().stream_synchronize(s_->ctx->handle, s_->handle),
                 "synchronizing stream " + std::to_string(s_->id));
}

}  // namespace tandem
