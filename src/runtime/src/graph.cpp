// SPDX-License-Identifier: Apache-2.0
#include "tandem/graph.hpp"

#include <string>

#include "context_state.hpp"
#include "graph_state.hpp"
#include "ids.hpp"
#include "record_hook.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "tandem/errors.hpp"

namespace tandem {

namespace detail {

void CaptureBuild::record(const AccessRequest* a, std::uint32_t n, std::shared_ptr<void> host) {
  for (std::uint32_t i = 0; i < n; ++i) {
    accesses.push_back(a[i]);
    bool known = false;
    for (const AllocationState* r : referenced) known = known || r == a[i].alloc;
    if (!known) {
      a[i].alloc->add_graph();
      referenced.push_back(a[i].alloc);
    }
  }
  if (host) keep_alive.push_back(std::move(host));
}

void CaptureBuild::release() noexcept {
  for (AllocationState* a : referenced) a->drop_graph();
  referenced.clear();
  accesses.clear();
  keep_alive.clear();
}

GraphState::GraphState(ContextState& c, driver::GraphHandle h, CaptureBuild&& b)
    : id(next_id(IdKind::graph)), ctx(&c), handle(h), build(std::move(b)) {
  c.add_ref();
}

GraphState::~GraphState() {
  // No replay is in flight (each holds this object), so the driver graph is
  // idle; the references may be the last users of their allocations.
  if (!Retirement::process_is_exiting()) (void)ctx->backend().graph_destroy(ctx->handle, handle);
  build.release();
  ctx->release();
}

GraphHandles::~GraphHandles() {
  if (Recorder* r = active_recorder()) [[unlikely]]
    r->on_graph_dropped(state->id);
}

}  // namespace detail

Graph::Graph(std::shared_ptr<detail::GraphState> s)
    : h_(s ? std::make_shared<detail::GraphHandles>(std::move(s)) : nullptr) {}

detail::GraphState* Graph::state() const noexcept { return h_ ? h_->state.get() : nullptr; }

namespace {

detail::StreamState& capturing_stream(StreamRef stream, const char* what) {
  if (!stream.state())
    throw Error(ErrorCode::invalid_handle, std::string(what) + " on an empty stream handle");
  return *stream.state();
}

}  // namespace

void Graph::begin_capture(StreamRef stream) {
  detail::StreamState& s = capturing_stream(stream, "graph capture");
  bool queued = false;
  const detail::NotifyRetirementIfQueued notify{queued};
  {
    base::Guard g(s.mu);
    if (s.capture) {
      throw Error(ErrorCode::unsupported, "stream " + std::to_string(s.id) + " is already capturing a graph");
    }
    // While it captures, nothing can be enqueued on the stream for real: an
    // allocation not yet followed by a submission gets its marker now, for
    // other streams to wait on.
    if (s.has_uncovered_work()) (void)s.queue_marker(queued);
    s.ctx->check(s.ctx->backend().capture_begin(s.ctx->handle, s.handle),
                 "beginning graph capture on stream " + std::to_string(s.id));
    s.capture = std::make_unique<detail::CaptureBuild>();
    s.capturing.store(true, std::memory_order_release);
  }
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_capture_begun(stream);
}

Graph Graph::end_capture(StreamRef stream) {
  detail::StreamState& s = capturing_stream(stream, "graph capture");
  std::unique_ptr<detail::CaptureBuild> build;
  driver::GraphHandle handle;
  driver::Result r;
  {
    base::Guard g(s.mu);
    if (!s.capture)
      throw Error(ErrorCode::invalid_handle, "stream " + std::to_string(s.id) + " is not capturing");
    r = s.ctx->backend().capture_end(s.ctx->handle, s.handle, handle);
    build = std::move(s.capture);
    s.capturing.store(false, std::memory_order_release);
  }
  Recorder* recorder = detail::active_recorder();
  if (!r.ok()) {
    build->release();
    if (recorder != nullptr) [[unlikely]]
      recorder->on_capture_abandoned(stream);
    s.ctx->fail(r, ErrorCode::driver, "ending graph capture on stream " + std::to_string(s.id));
  }
  // Once, so that every replay submits them as they are (no copy to sort).
  detail::sort_accesses(build->accesses.data(), static_cast<std::uint32_t>(build->accesses.size()));
  Graph g(std::make_shared<detail::GraphState>(*s.ctx, handle, std::move(*build)));
  if (recorder != nullptr) [[unlikely]]
    recorder->on_capture_ended(stream, g);
  return g;
}

void Graph::abandon_capture(StreamRef stream) noexcept {
  detail::StreamState& s = *stream.state();
  std::unique_ptr<detail::CaptureBuild> build;
  {
    base::Guard g(s.mu);
    driver::GraphHandle handle;
    if (s.ctx->backend().capture_end(s.ctx->handle, s.handle, handle).ok() && handle) {
      (void)s.ctx->backend().graph_destroy(s.ctx->handle, handle);
    }
    build = std::move(s.capture);
    s.capturing.store(false, std::memory_order_release);
  }
  if (build) build->release();
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_capture_abandoned(stream);
}

LaunchFuture Graph::replay(StreamRef stream) const {
  Recorder* r = detail::active_recorder();
  if (r == nullptr) [[likely]]
    return replay_unrecorded(stream);
  try {
    LaunchFuture f = replay_unrecorded(stream);
    r->on_graph_replayed(*this, stream, f.id());
    return f;
  } catch (const Error& e) {
    if (h_ && stream.state()) r->on_graph_replay_failed(*this, stream, e.code());
    throw;
  }
}

LaunchFuture Graph::replay_unrecorded(StreamRef stream) const {
  if (!h_) throw Error(ErrorCode::invalid_handle, "replay of an empty graph handle");
  detail::GraphState* const g = h_->state.get();
  detail::StreamState& s = capturing_stream(stream, "graph replay");
  if (s.ctx != g->ctx) {
    throw Error(ErrorCode::device_mismatch, "graph " + std::to_string(g->id) + " of context " +
                                                std::to_string(g->ctx->id) + " replayed on stream " +
                                                std::to_string(s.id) + " of context " +
                                                std::to_string(s.ctx->id));
  }
  std::vector<detail::AccessRequest>& accesses = g->build.accesses;  // sorted at end_capture, never written
  driver::Backend& b = s.ctx->backend();
  const driver::GraphHandle h = g->handle;
  auto enqueue = [&](driver::StreamHandle stream_handle) {
    return b.graph_launch(s.ctx->handle, h, stream_handle);
  };
  detail::SubmitSpec spec{detail::SubmissionKind::graph_replay,
                          accesses.data(),
                          static_cast<std::uint32_t>(accesses.size()),
                          enqueue,
                          "graph replay",
                          h_->state,  // the replay keeps the graph (and its references) alive
                          true,
                          true};
  return LaunchFuture(detail::submit(s, spec));
}

std::uint64_t Graph::id() const noexcept { return h_ ? h_->state->id : 0; }
std::size_t Graph::allocation_count() const noexcept { return h_ ? h_->state->build.referenced.size() : 0; }

}  // namespace tandem
