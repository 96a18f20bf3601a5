#include "stream_state.hpp"

#include "context_state.hpp"
#include "graph_state.hpp"
#include "ids.hpp"
#include "retirement.hpp"

namespace tandem::detail {

namespace {
// Recycled submission records kept per stream; beyond this they are freed.
constexpr std::uint32_t kMaxFreeSubmissions = 1024;
}  // namespace

StreamState::StreamState(std::uint64_t id_, ContextState& ctx_, driver::StreamHandle handle_,
                         bool owned_)
    : id(id_), ctx(&ctx_), handle(handle_), owned(owned_) {
  ctx_.add_ref();
}

StreamState* StreamState::create(ContextState& ctx, driver::StreamHandle handle, bool owned) {
  auto* s = new StreamState(next_id(IdKind::stream), ctx, handle, owned);
  ctx.add_stream(s);
  s->add_ref();  // the caller's; the first one belongs to retirement
  Retirement::instance().add_stream(s);
  return s;
}

void StreamState::release() noexcept {
  const std::uint32_t before = refs.fetch_sub(1, std::memory_order_acq_rel);
  if (before == 2) Retirement::instance().notify_released();  // only retirement's is left
}

void StreamState::destroy() noexcept {
  ContextState& c = *ctx;
  driver::Backend& b = c.backend();
  {
    Guard g(mu);
    for (driver::EventHandle e : free_events) (void)b.event_destroy(c.handle, e);
    free_events.clear();
    while (free_submissions) delete std::exchange(free_submissions, free_submissions->next);
  }
  // cuStreamDestroy does not wait for the device; nothing is pending anyway.
  if (owned) (void)b.stream_destroy(c.handle, handle);
  c.remove_stream(this);
  delete this;
  c.release();
}

driver::EventHandle StreamState::take_event() {
  if (!free_events.empty()) {
    driver::EventHandle e = free_events.back();
    free_events.pop_back();
    return e;
  }
  driver::EventHandle e;
  ctx->check(ctx->backend().event_create(ctx->handle, e),
             "creating a completion event for stream " + std::to_string(id));
  return e;
}

Submission* StreamState::take_submission() {
  if (free_submissions) {
    --free_submission_count;
    Submission* s = std::exchange(free_submissions, free_submissions->next);
    s->next = nullptr;
    return s;
  }
  return new Submission();
}

void StreamState::recycle(Submission* s) noexcept {
  if (s->event) free_events.push_back(s->event);
  if (free_submission_count >= kMaxFreeSubmissions) {
    delete s;
    return;
  }
  s->event = {};
  s->leases.clear();
  s->keep_alive.reset();
  s->state.store(SubmissionState::pending, std::memory_order_relaxed);
  s->next = free_submissions;
  free_submissions = s;
  ++free_submission_count;
}

void ref_add(StreamState* p) noexcept { p->add_ref(); }
void ref_release(StreamState* p) noexcept { p->release(); }

}  // namespace tandem::detail
