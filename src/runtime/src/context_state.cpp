// SPDX-License-Identifier: Apache-2.0
#include "context_state.hpp"

#include <algorithm>
#include <exception>
#include <new>
#include <string>

#include "ids.hpp"
#include "recording.hpp"
#include "retire_profile.hpp"
#include "retirement.hpp"
#include "stream_state.hpp"
#include "submission.hpp"
#include "tandem/base/mutant.hpp"
#include "tuning.hpp"

namespace tandem::detail {

namespace {
// TANDEM_POOL_RESERVE_MIB=N (a measuring knob, off by default): grow a new
// context's pool by N MiB before its first allocation, so that the pool's
// first growth (s48's profiles: 17-82 ms allocations on the churn's
// submitting threads) happens at creation, not under the first
// submissions. With the release threshold at its maximum the pool keeps
// what the free hands back.
void reserve_pool(ContextState& c, const std::string& where) {
  static const std::int64_t mib = tuning_value("TANDEM_POOL_RESERVE_MIB", 0, 0);
  if (mib <= 0) return;
  driver::Backend& b = c.backend();
  const std::string what =
      "reserving " + std::to_string(mib) + " MiB in the memory pool" + where + " (TANDEM_POOL_RESERVE_MIB)";
  driver::DevicePtr p = 0;
  c.check(b.mem_alloc_async(c.handle, c.pool, static_cast<std::size_t>(mib) << 20, c.free_stream, p), what);
  c.check(b.mem_free_async(c.handle, p, c.free_stream), what);
  c.check(b.stream_synchronize(c.handle, c.free_stream), what);
}

thread_local const unsigned t_shard = [] {
  static std::atomic<unsigned> next{0};
  return next.fetch_add(1, std::memory_order_relaxed) % 16;
}();
}  // namespace

void ShardedCounter::add(std::uint64_t n) noexcept {
  shards_[t_shard].v.fetch_add(n, std::memory_order_relaxed);
}

std::uint64_t ShardedCounter::sum() const noexcept {
  std::uint64_t total = 0;
  for (const Shard& s : shards_) total += s.v.load(std::memory_order_relaxed);
  return total;
}

ContextState::ContextState(PlatformState& platform_, int ordinal_, std::uint64_t id_, bool owned_,
                           ConflictPolicy policy_, driver::ContextHandle handle_)
    : backend_(platform_.backend.get()),
      functions_(new std::atomic<void*>[kFunctionSlots]),
      handle(handle_),
      policy(policy_),
      backend_reads_accesses(backend_->reads_declared_accesses()),
      platform(&platform_),
      id(id_),
      ordinal(ordinal_),
      owned(owned_) {
  platform_.add_ref();
  for (std::size_t i = 0; i < kFunctionSlots; ++i) functions_[i].store(nullptr);
}

ContextState* ContextState::create(PlatformState& platform, int ordinal, driver::ContextHandle borrowed,
                                   std::shared_ptr<void> keep_alive, ConflictPolicy policy) {
  driver::Backend& b = *platform.backend;
  const bool owned = !borrowed;
  driver::ContextHandle handle = borrowed;
  const std::string where = " for device " + std::to_string(ordinal);
  if (owned) {
    const driver::Result r = b.primary_context_retain(ordinal, handle);
    if (!r.ok())
      throw Error(ErrorCode::driver, "retaining the primary context" + where + ": " + b.describe(r));
  }
  auto* c = new ContextState(platform, ordinal, next_id(IdKind::context), owned, policy, handle);
  c->keep_alive = std::move(keep_alive);
  // From here on the destructor undoes whatever was set up.
  try {
    c->check(b.pool_create(handle, c->pool), "creating the memory pool" + where);
    c->check(b.stream_create(handle, c->free_stream), "creating the internal free stream" + where);
    reserve_pool(*c, where);
  } catch (...) {
    c->release();
    throw;
  }
  return c;
}

ContextState::~ContextState() {
  delete[] functions_;  // cached handles only: the driver frees functions with their modules
  if (records) leave_context_recording();  // the last one writes the file
  if (Retirement::process_is_exiting()) {  // the driver may be gone already
    keep_alive.reset();
    platform->release();
    return;
  }
  driver::Backend& b = backend();
  // Everything made in this context is gone (they all hold references), so
  // nothing pending uses the pool or the free stream; neither call waits.
  if (free_stream) (void)b.stream_destroy(handle, free_stream);
  if (pool) (void)b.pool_destroy(handle, pool);
  if (owned) (void)b.primary_context_release(ordinal);
  if (!owned && base::mutant(base::Mutant::borrowed_context_destroyed)) (void)b.context_destroy(handle);
  keep_alive.reset();  // a borrowed context's owner object, released last
  platform->release();
}

driver::FunctionHandle ContextState::function(const driver::KernelSymbol& symbol) {
  const std::uint32_t slot = symbol.cache_slot();
  std::atomic<void*>* cell = slot < kFunctionSlots ? &functions_[slot] : nullptr;
  if (cell) {
    if (void* f = cell->load(std::memory_order_acquire)) return driver::FunctionHandle{f};
  }
  driver::FunctionHandle f;
  const driver::Result r = backend().kernel_function(handle, symbol, f);
  if (!r.ok()) {
    fail(r, r.status == driver::Status::not_supported ? ErrorCode::unsupported : ErrorCode::driver,
         std::string("resolving kernel '") + symbol.name + "' in context " + std::to_string(id));
  }
  if (cell) cell->store(f.raw, std::memory_order_release);
  return f;
}

void ContextState::free_memory(driver::DevicePtr ptr, StreamAnchor* birth, std::uint64_t birth_seq,
                               bool birth_proven) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  if (Retirement::process_is_exiting()) return;  // the process's end returns it
  const ProfileScope timed(&RetireProfile::host_free);
  driver::Backend& b = backend();
  // The GPU is proven done with the memory; only the allocation itself must
  // precede the free, which the birth stream's order gives for free. When
  // work that followed the allocation is proven done, so is the allocation:
  // then a birth stream whose lock a submitter holds (across a driver call
  // that can take milliseconds while other threads launch) is not waited
  // for, and the free goes on the internal free stream instead.
  const auto take = [birth_proven](base::SpinLock& mu) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
    if (birth_proven) return mu.try_lock();
    mu.lock();
    return true;
  };
  if (birth && take(birth->mu)) {
    if (StreamState* s = birth->stream; s && take(s->mu)) {
      if (!s->capture) {
        const bool ok = b.mem_free_async(handle, ptr, s->handle).ok();
        if (ok) {
          s->untracked_seq = s->next_seq;
          s->freed_since_trim = true;  // Context::trim synchronizes it
        }
        s->mu.unlock();
        birth->mu.unlock();
        if (ok) return;
      } else {
        if (birth->proven_seq.load(std::memory_order_acquire) < birth_seq) {
          // A capturing stream would record the free into its graph. The
          // marker queued when the capture began follows the allocation.
          bool queued = false;
          try {
            if (const driver::EventHandle e = s->event_after(birth_seq, queued)) {
              (void)b.stream_wait_event(handle, free_stream, e);
            }
          } catch (...) {
            // Only queuing a marker can throw, and none is queued while capturing.
          }
        }
        s->mu.unlock();
        birth->mu.unlock();
      }
    } else {
      birth->mu.unlock();
    }
  }
  // Otherwise the birth stream is gone, and its allocations were proven
  // done before it went (StreamState::detach) unless the device failed.
  (void)b.mem_free_async(handle, ptr, free_stream);
}

StreamState* ContextState::ensure_release_stream() noexcept {
  if (StreamState* r = release_stream.load(std::memory_order_acquire)) return r;
  if (multi_stream_release != MultiStreamRelease::release_stream || Retirement::process_is_exiting())
    return nullptr;
  base::Guard g(release_stream_mu_);
  if (StreamState* r = release_stream.load(std::memory_order_acquire)) return r;
  driver::StreamHandle h;
  if (!backend().stream_create(handle, h).ok()) return nullptr;  // host-proven until a later try succeeds
  StreamState* r = nullptr;
  try {
    r = StreamState::create(*this, h, true, /*internal=*/true);
  } catch (...) {
    (void)backend().stream_destroy(handle, h);  // no memory for its records: host-proven for now
    return nullptr;
  }
  // Published last: a drop that sees it may push releases to it at once.
  release_stream.store(r, std::memory_order_release);
  return r;
}

void ContextState::let_go_of_release_stream() noexcept {
  // Only the stream's own reference on this context is left (release()):
  // nothing can push to it any more, and every release it took is
  // finished (each allocation holds a reference until then).
  if (StreamState* r = release_stream.exchange(nullptr, std::memory_order_acq_rel)) r->release();
}

void ContextState::note_held_bytes(std::uint64_t held) noexcept {
  std::uint64_t peak = held_bytes_peak.load(std::memory_order_relaxed);
  while (held > peak && !held_bytes_peak.compare_exchange_weak(peak, held, std::memory_order_relaxed)) {
  }
}

std::vector<StreamAnchor*> ContextState::stream_anchors() {
  std::vector<StreamAnchor*> anchors;
  base::Guard g(mu_);
  anchors.reserve(streams_.size());
  for (StreamState* s : streams_) {
    s->anchor->add_ref();
    anchors.push_back(s->anchor);
  }
  return anchors;
}

namespace {

// Calls fn(stream, anchor) for each stream of `c` alive now, holding its
// anchor's lock and then the stream's (the runtime's lock order: a first
// use on another stream holds an anchor's lock while it waits on a birth
// mark there). `fn` must not throw. False when the list of streams could
// not be made (no memory): nothing was visited.
template <class Fn>
bool each_live_stream(ContextState& c, Fn&& fn) noexcept TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<StreamAnchor*> anchors;
  try {
    anchors = c.stream_anchors();
  } catch (...) {
    return false;
  }
  for (StreamAnchor* a : anchors) {
    {
      base::Guard ga(a->mu);
      if (StreamState* s = a->stream) {
        base::Guard g(s->mu);
        fn(*s, *a);
      }
    }
    a->release();
  }
  return true;
}

}  // namespace

void ContextState::flush_releases() noexcept {
  // No memory for the list: the streams drain them as they go.
  (void)each_live_stream(*this, [](StreamState& s, StreamAnchor&) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
    if (s.inbox_ready.load(std::memory_order_acquire)) s.drain_releases(s.next_seq);
  });
}

bool ContextState::cover_untracked_work() noexcept {
  bool in_flight = false;
  bool queued = false;
  const NotifyRetirementIfQueued notify{queued};
  const bool visited =
      each_live_stream(*this, [&](StreamState& s, StreamAnchor& a) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
        if (!s.capture && s.untracked_seq > a.proven_seq.load(std::memory_order_acquire)) {
          try {
            (void)s.event_after(s.untracked_seq, queued);
          } catch (...) {
            // No event to be had: nothing more can be proven on this stream.
          }
        }
        in_flight |= s.pending() != 0 || s.has_release_work();
      });
  return in_flight || !visited;  // cannot tell: assume there is something to wait for
}

void ContextState::order_free_stream_after_untracked_work() {
  bool queued = false;
  const NotifyRetirementIfQueued notify{queued};
  std::exception_ptr failure;
  const bool visited =
      each_live_stream(*this, [&](StreamState& s, StreamAnchor& a) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
        if (failure || s.untracked_seq <= a.proven_seq.load(std::memory_order_acquire)) return;
        try {
          const driver::EventHandle e = s.event_after(s.untracked_seq, queued);
          if (e) check(backend().stream_wait_event(handle, free_stream, e), "ordering the runtime's frees");
        } catch (...) {
          failure = std::current_exception();
        }
      });
  if (!visited) throw std::bad_alloc();
  if (failure) std::rethrow_exception(failure);
}

void ContextState::synchronize_streams_that_freed() {
  std::exception_ptr failure;
  const bool visited =
      each_live_stream(*this, [&](StreamState& s, StreamAnchor&) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
        if (failure || !s.freed_since_trim || s.capture) return;
        try {
          check(backend().stream_synchronize(handle, s.handle),
                "waiting for the frees on stream " + std::to_string(s.id));
          s.freed_since_trim = false;
        } catch (...) {
          failure = std::current_exception();
        }
      });
  if (!visited) throw std::bad_alloc();
  if (failure) std::rethrow_exception(failure);
}

void ContextState::release_idle_stream_resources() noexcept {
  std::vector<driver::EventHandle> idle, surplus;
  // No memory for the list: nothing is released, nothing is lost.
  (void)each_live_stream(*this, [&](StreamState& s, StreamAnchor&) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
    std::vector<driver::EventHandle> i, x;
    s.shed_idle(i, x);
    try {
      idle.insert(idle.end(), i.begin(), i.end());
      surplus.insert(surplus.end(), x.begin(), x.end());
    } catch (...) {
      // No room to gather them: destroyed here, under the locks, instead.
      for (driver::EventHandle e : i) (void)backend().event_destroy(handle, e);
      for (driver::EventHandle e : x) (void)backend().event_destroy(handle, e);
    }
  });
  // Outside the locks: destroying an event can wait for the driver.
  for (driver::EventHandle e : idle) (void)backend().event_destroy(handle, e);
  for (driver::EventHandle e : surplus) (void)backend().event_destroy(handle, e);
}

void ContextState::fail(const driver::Result& r, ErrorCode code, const std::string& what) const {
  throw Error(code, what + ": " + backend().describe(r));
}

void ContextState::add_stream(StreamState* s) {
  base::Guard g(mu_);
  streams_.push_back(s);
}

void ContextState::remove_stream(StreamState* s) {
  base::Guard g(mu_);
  retired_by_gone_streams_ += s->retired.load(std::memory_order_relaxed);
  submitted_by_gone_streams_ += s->user_submitted.load(std::memory_order_relaxed);
  shared_by_gone_streams_ += s->shared_events.load(std::memory_order_relaxed);
  tail_markers_by_gone_streams_ += s->quiet_tail_markers.load(std::memory_order_relaxed);
  queue_waits_by_gone_streams_ += s->queue_waits.load(std::memory_order_relaxed);
  std::erase(streams_, s);
}

void ContextState::keep_quarantined(Submission* s) {
  base::Guard g(mu_);
  quarantine_.push_back(s);
}

void ContextState::add_peer(std::uint64_t peer_id) {
  base::Guard g(mu_);
  if (std::find(peers_.begin(), peers_.end(), peer_id) == peers_.end()) peers_.push_back(peer_id);
}

bool ContextState::has_peer(std::uint64_t peer_id) const {
  base::Guard g(mu_);
  return std::find(peers_.begin(), peers_.end(), peer_id) != peers_.end();
}

RuntimeStats ContextState::stats() const {
  RuntimeStats st;
  {
    // Read in this order, each event counted last is visible in the
    // counters read after it (release increments): never an underflow.
    const std::uint64_t quarantined = quarantined_allocations.load(std::memory_order_acquire);
    const std::uint64_t freed = frees_total.load(std::memory_order_acquire);
    const std::uint64_t made = allocations_total.load(std::memory_order_acquire);
    st.live_allocations = made > freed + quarantined ? made - freed - quarantined : 0;
  }
  st.released_unproven_bytes = released_unproven_bytes.load(std::memory_order_relaxed);
  st.held_bytes = held_bytes.load(std::memory_order_relaxed);
  st.live_bytes = st.held_bytes + st.released_unproven_bytes;
  st.held_bytes_peak = held_bytes_peak.load(std::memory_order_relaxed);
  st.released_unproven_allocations = released_unproven_allocations.load(std::memory_order_relaxed);
  st.awaiting_release_allocations = awaiting_release_allocations.load(std::memory_order_relaxed);
  st.awaiting_release_bytes = awaiting_release_bytes.load(std::memory_order_relaxed);
  st.stream_ordered_releases = stream_ordered_releases.load(std::memory_order_relaxed);
  st.host_proven_releases = host_proven_releases.load(std::memory_order_relaxed);
  st.pressure_retries = pressure_retries.load(std::memory_order_relaxed);
  st.pressure_recoveries = pressure_recoveries.load(std::memory_order_relaxed);
  st.quarantined_allocations = quarantined_allocations.load(std::memory_order_relaxed);
  st.quarantined_bytes = quarantined_bytes.load(std::memory_order_relaxed);
  st.foreign_owners_unreleased = foreign_unreleased.load(std::memory_order_relaxed);
  st.allocations_total = allocations_total.load(std::memory_order_relaxed);
  st.frees_total = frees_total.load(std::memory_order_relaxed);
  st.uniqueness_checks = uniqueness_checks.sum();
  st.same_stream_reuses = same_stream_reuses.sum();
  st.active_leases = quarantined_leases.load(std::memory_order_relaxed);
  base::Guard g(mu_);
  st.quarantined_submissions = quarantine_.size();
  st.retired_submissions = retired_by_gone_streams_;
  st.submissions_total = submitted_by_gone_streams_;
  st.shared_event_submissions = shared_by_gone_streams_;
  st.quiet_tail_markers = tail_markers_by_gone_streams_;
  st.queue_waits = queue_waits_by_gone_streams_;
  for (const StreamState* s : streams_) {
    if (!s->internal) ++st.streams;  // the release stream is not the user's
    const std::uint64_t submitted = s->user_submitted.load(std::memory_order_acquire);
    const std::uint64_t settled = s->user_settled.load(std::memory_order_acquire);
    st.pending_submissions += submitted > settled ? submitted - settled : 0;
    st.active_leases += s->leases_held();
    st.retired_submissions += s->retired.load(std::memory_order_relaxed);
    st.submissions_total += submitted;
    st.shared_event_submissions += s->shared_events.load(std::memory_order_relaxed);
    st.quiet_tail_markers += s->quiet_tail_markers.load(std::memory_order_relaxed);
    st.queue_waits += s->queue_waits.load(std::memory_order_relaxed);
  }
  return st;
}

void ref_add(ContextState* p) noexcept { p->add_ref(); }
void ref_release(ContextState* p) noexcept { p->release(); }

}  // namespace tandem::detail
