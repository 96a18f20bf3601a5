// SPDX-License-Identifier: Apache-2.0
#include "tandem/context.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

#include "context_state.hpp"
#include "deadline.hpp"
#include "queue_bound.hpp"
#include "record_hook.hpp"
#include "recording.hpp"
#include "retirement.hpp"
#include "tuning.hpp"

namespace tandem {

namespace {

constexpr std::uint32_t kDefaultMaxQueued = 256;

// TANDEM_MULTI_STREAM_RELEASE chooses for contexts whose options do not.
// Read at each Context::create rather than once: a bad value must be an
// error its caller sees, which the drop that uses the mode (noexcept, on
// any thread) could not report.
MultiStreamRelease resolve_multi_stream_release(const ContextOptions& options) {
  if (detail::host_proven_release_forced()) return MultiStreamRelease::host_proven;
  if (options.multi_stream_release) return *options.multi_stream_release;
  const char* v = std::getenv("TANDEM_MULTI_STREAM_RELEASE");
  if (v == nullptr) return MultiStreamRelease::host_proven;
  if (const std::optional<MultiStreamRelease> m = parse_multi_stream_release(v)) return *m;
  throw Error(ErrorCode::unsupported,
              std::string("TANDEM_MULTI_STREAM_RELEASE='") + v +
                  "': expected 'host_proven' or 'release_stream' (or unset: host_proven)");
}

// TANDEM_MAX_QUEUED chooses for contexts whose options do not (read at each
// Context::create, as above: a bad value is the caller's error).
std::uint32_t resolve_max_queued(const ContextOptions& options) {
  if (options.max_queued_per_stream)
    return std::min(*options.max_queued_per_stream, detail::kMaxQueuedPerStream);
  const char* v = std::getenv("TANDEM_MAX_QUEUED");
  if (v == nullptr) return kDefaultMaxQueued;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n > detail::kMaxQueuedPerStream) {
    throw Error(ErrorCode::unsupported, std::string("TANDEM_MAX_QUEUED='") + v +
                                            "': expected a whole number from 0 (no bound) to " +
                                            std::to_string(detail::kMaxQueuedPerStream) +
                                            " (or unset: " + std::to_string(kDefaultMaxQueued) + ")");
  }
  return static_cast<std::uint32_t>(n);
}

Context make(const Device& device, driver::ContextHandle borrowed, std::shared_ptr<void> keep_alive,
             const ContextOptions& options) {
  const MultiStreamRelease release = resolve_multi_stream_release(options);
  const std::uint32_t max_queued = resolve_max_queued(options);
  const bool records = !options.record_to.empty();
  if (records) detail::join_context_recording(options.record_to);  // may throw: nothing made yet
  detail::ContextState* state = nullptr;
  try {
    state = detail::ContextState::create(*device.platform().state(), device.ordinal(), borrowed,
                                         std::move(keep_alive), options.conflict_policy);
  } catch (...) {
    if (records) detail::leave_context_recording();
    throw;
  }
  state->records = records;  // its destruction leaves the recording
  Context c(detail::Ref<detail::ContextState>::adopt(state));
  // Before the context is shared: no submission can exist yet.
  if (options.measure_retirement_latency) c.state()->retire_latency = std::make_unique<LatencyHistogram>();
  c.state()->share_events = options.share_completion_events;
  c.state()->out_of_memory_wait = std::max(options.out_of_memory_wait, std::chrono::nanoseconds::zero());
  c.state()->multi_stream_release = release;
  c.state()->max_queued = max_queued;
  return c;
}

}  // namespace

Context Context::create(const Device& device, const ContextOptions& options) {
  return make(device, {}, {}, options);
}

Context Context::borrow(const Device& device, driver::ContextHandle handle, std::shared_ptr<void> keep_alive,
                        const ContextOptions& options) {
  if (!handle) throw Error(ErrorCode::invalid_handle, "borrowing a null context handle");
  int ordinal = -1;
  const driver::Result r = device.platform().backend().context_device(handle, ordinal);
  if (!r.ok() || ordinal != device.ordinal()) {
    throw Error(ErrorCode::device_mismatch, "borrowing a context of device " + std::to_string(ordinal) +
                                                " as a context of device " +
                                                std::to_string(device.ordinal()));
  }
  Context c = make(device, handle, std::move(keep_alive), options);
  if (Recorder* rec = detail::active_recorder()) [[unlikely]]
    rec->on_context_borrowed(c);
  return c;
}

Device Context::device() const {
  return Device(Platform(detail::Ref<detail::PlatformState>(s_->platform)), s_->ordinal);
}
std::uint64_t Context::id() const noexcept { return s_->id; }
bool Context::owned() const noexcept { return s_->owned; }
ConflictPolicy Context::conflict_policy() const noexcept { return s_->policy; }
MultiStreamRelease Context::multi_stream_release() const noexcept { return s_->multi_stream_release; }
std::uint32_t Context::max_queued_per_stream() const noexcept { return s_->max_queued; }
driver::ContextHandle Context::native() const noexcept { return s_->handle; }
RuntimeStats Context::stats() const {
  RuntimeStats s = s_->stats();
  if (Recorder* r = detail::active_recorder()) [[unlikely]]
    r->on_stats(*this, s);
  return s;
}

MemoryInfo Context::memory_info() const {
  MemoryInfo m;
  s_->check(s_->backend().mem_info(s_->handle, m.free_bytes, m.total_bytes), "reading device memory info");
  return m;
}

void Context::trim() const {
  driver::Backend& b = s_->backend();
  // Frees go onto the streams the memory was allocated on (or last used
  // on); the free stream waits for those that are not proven done yet.
  s_->flush_releases();
  s_->order_free_stream_after_untracked_work();
  s_->check(b.stream_synchronize(s_->handle, s_->free_stream), "waiting for the runtime's frees");
  // The pool may keep a block whose free the host has not seen complete on
  // the stream it was enqueued on ("completion not observed on the host",
  // cuMemPoolTrimTo): the free stream's wait above does not count. On the
  // H200, 64 frees on a user stream left 32 MiB unreturned without this.
  s_->synchronize_streams_that_freed();
  s_->check(b.pool_trim(s_->handle, s_->pool, 0), "trimming the memory pool");
  s_->release_idle_stream_resources();
}

const LatencyHistogram* Context::retire_latency() const noexcept { return s_->retire_latency.get(); }

void Context::reset_held_bytes_peak() const noexcept {
  s_->held_bytes_peak.store(0, std::memory_order_relaxed);
  s_->note_held_bytes(s_->held_bytes.load(std::memory_order_relaxed));
}

void Context::load_kernel(const driver::KernelSymbol& symbol) const { (void)s_->function(symbol); }

namespace {
std::string context_text(const detail::ContextState& c) {
  return "context " + std::to_string(c.id) + " (device " + std::to_string(c.ordinal) + ")";
}
}  // namespace

void Context::enable_peer_access(const Context& peer) const {
  detail::ContextState& a = *s_;
  detail::ContextState& b = *peer.s_;
  const std::string pair = context_text(a) + " and " + context_text(b);
  if (a.platform != b.platform) {
    throw Error(ErrorCode::device_mismatch,
                "peer access between " + pair + ": they belong to different platforms");
  }
  if (a.ordinal == b.ordinal) {
    throw Error(ErrorCode::device_mismatch, "peer access between " + pair + ": both are on device " +
                                                std::to_string(a.ordinal) +
                                                " (peer access is between two devices)");
  }
  if (a.has_peer(b.id)) return;
  driver::Backend& drv = a.backend();
  for (const auto& [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    bool can = false;
    const driver::Result r = drv.device_can_access_peer(from->ordinal, to->ordinal, can);
    if (!r.ok()) {
      a.fail(r, r.status == driver::Status::not_supported ? ErrorCode::unsupported : ErrorCode::driver,
             "asking whether device " + std::to_string(from->ordinal) + " can access device " +
                 std::to_string(to->ordinal) + " (peer access between " + pair + ")");
    }
    if (!can) {
      throw Error(ErrorCode::unsupported, "peer access between " + pair + ": the driver says device " +
                                              std::to_string(from->ordinal) + " cannot access device " +
                                              std::to_string(to->ordinal));
    }
  }
  for (const auto& [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    const std::string where = " (peer access between " + pair + ")";
    driver::Result r = drv.context_enable_peer_access(from->handle, to->handle);
    if (!r.ok()) {
      a.fail(r, r.status == driver::Status::not_supported ? ErrorCode::unsupported : ErrorCode::driver,
             "enabling " + context_text(*from) + " to access " + context_text(*to) + where);
    }
    // `to`'s pool lets `from`'s device in: copies on either side's streams
    // then reach both allocations.
    r = drv.pool_grant_access(to->handle, to->pool, from->ordinal);
    if (!r.ok()) {
      a.fail(r, r.status == driver::Status::not_supported ? ErrorCode::unsupported : ErrorCode::driver,
             "granting device " + std::to_string(from->ordinal) + " access to the memory pool of " +
                 context_text(*to) + where);
    }
  }
  a.add_peer(b.id);
  b.add_peer(a.id);
}

bool Context::peer_access_enabled(const Context& peer) const { return s_->has_peer(peer.s_->id); }

bool Context::wait_for_retirement(std::chrono::nanoseconds timeout) const {
  const bool settled =
      detail::Retirement::instance().wait_settled(s_.get(), nullptr, detail::deadline_after(timeout));
  detail::record_retirement_wait(settled, timeout);
  return settled;
}

}  // namespace tandem
