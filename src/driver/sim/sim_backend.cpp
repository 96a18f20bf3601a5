// SPDX-License-Identifier: Apache-2.0
// The simulated device: the Backend surface on host memory and host threads.
//
// This file is the facade: handle bookkeeping, argument checks and error
// messages. The moving parts live next to it:
//   sim_memory    virtual device addresses, host bytes, capacity accounting
//   sim_stream    per-stream queue + worker thread, capture lists
//   sim_executor  runs one operation (translation, checks, delay)
//   sim_checker   the active-access set and the violation log
//   sim_events    event records, stream waits, injected completion faults
//
// This file: devices, contexts, peer access, streams, events; memory is in
// sim_backend_memory.cpp, kernels, graphs and the controls in
// sim_backend_kernels.cpp; their shared state in sim_backend_impl.hpp.
#include "sim_backend_impl.hpp"

namespace tandem::driver {

const char* violation_kind_name(Violation::Kind k) noexcept {
  switch (k) {
    case Violation::Kind::use_after_free:
      return "use_after_free";
    case Violation::Kind::unordered_conflict:
      return "unordered_conflict";
  }
  return "unknown";
}

SimBackend::Impl::Impl(SimConfig cfg)
    : config(cfg),
      instance(g_backend_instances.fetch_add(1, std::memory_order_relaxed) + 1),
      memory(cfg.memory_bytes, std::max(cfg.devices, 0)) {
  const int devices = std::max(cfg.devices, 0);
  for (int d = 0; d < devices; ++d) {
    primaries.push_back(std::make_unique<Context>(Context{d, true}));
  }
  base::Lock lock(mu);
  primary_refs.assign(static_cast<std::size_t>(devices), 0);
}

SimBackend::Impl::~Impl() {
  std::vector<std::shared_ptr<sim::Stream>> all;
  {
    base::Lock lock(mu);
    for (auto& entry : streams) {
      all.push_back(std::move(entry.second));
    }
    streams.clear();
    all.insert(all.end(), retired.begin(), retired.end());
    retired.clear();
  }
  // Close all first so the queues drain concurrently (a wait on one stream
  // may need another stream's record).
  for (auto& s : all) {
    s->close();
  }
  for (auto& s : all) {
    s->join();
  }
}

Result SimBackend::Impl::check_ordinal(const char* api, int ordinal) const {
  if (ordinal >= 0 && static_cast<std::size_t>(ordinal) < primaries.size()) {
    return succeeded(api);
  }
  return fail(api, Status::invalid_value,
              "device ordinal " + std::to_string(ordinal) + " is out of range (the sim has " +
                  std::to_string(primaries.size()) + " devices)");
}

Result SimBackend::Impl::find_context(const char* api, ContextHandle h, int& device) {
  if (!h) {
    return fail(api, Status::invalid_handle, "no context given (null handle)");
  }
  base::Lock lock(mu);
  for (const auto& p : primaries) {
    if (p.get() != h.raw) {
      continue;
    }
    if (primary_refs[static_cast<std::size_t>(p->device)] == 0) {
      return fail(api, Status::invalid_handle,
                  "the primary context of device " + std::to_string(p->device) +
                      " is not retained (released to a count of 0)");
    }
    device = p->device;
    return succeeded(api);
  }
  auto it = contexts.find(h.raw);
  if (it == contexts.end()) {
    return not_live(api, "context", h.raw);
  }
  device = it->second->device;
  return succeeded(api);
}

std::shared_ptr<sim::Stream> SimBackend::Impl::live_stream(StreamHandle h) {
  base::Lock lock(mu);
  auto it = streams.find(h.raw);
  return it == streams.end() ? nullptr : it->second;
}

Result SimBackend::Impl::find_stream(const char* api, StreamHandle h, std::shared_ptr<sim::Stream>& out) {
  if (!h) {
    return fail(api, Status::invalid_handle,
                "no stream given (null handle): the sim has no legacy default stream");
  }
  out = live_stream(h);
  if (!out) {
    return not_live(api, "stream", h.raw);
  }
  return succeeded(api);
}

Result SimBackend::Impl::find_event(const char* api, EventHandle h, std::shared_ptr<sim::Event>& out) {
  base::Lock lock(mu);
  auto it = event_table.find(h.raw);
  if (it == event_table.end()) {
    return not_live(api, "event", h.raw);
  }
  out = it->second;
  return succeeded(api);
}

Result SimBackend::Impl::find_pool(const char* api, PoolHandle h, Pool& out) {
  base::Lock lock(mu);
  auto it = pools.find(h.raw);
  if (it == pools.end()) {
    return not_live(api, "pool", h.raw);
  }
  out = *it->second;
  return succeeded(api);
}

Result SimBackend::Impl::find_graph(const char* api, GraphHandle h, std::shared_ptr<const Graph>& out) {
  base::Lock lock(mu);
  auto it = graphs.find(h.raw);
  if (it == graphs.end()) {
    return not_live(api, "graph", h.raw);
  }
  out = it->second;
  return succeeded(api);
}

Result SimBackend::Impl::find_context_stream(const char* api, ContextHandle ctx, StreamHandle s,
                                             std::shared_ptr<sim::Stream>& out) {
  int device = 0;
  if (Result r = find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  return find_stream(api, s, out);
}

Result SimBackend::Impl::allocate(const char* api, const sim::AllocRequest& request, DevicePtr& out) {
  sim::Refusal refusal;
  const Status status = memory.allocate(request, out, refusal);
  if (status != Status::ok) {
    return fail(api, status, std::move(refusal.why), refusal.injected ? Cause::injected : Cause::real);
  }
  return succeeded(api);
}

std::string SimBackend::Impl::peer_problem(ContextHandle ctx, int device, DevicePtr ptr) {
  int owner = 0;
  bool pooled = false;
  if (!memory.owner_of(ptr, owner, pooled) || owner == device) {
    return {};  // a dead address is the executor's use_after_free to report
  }
  base::Lock lock(mu);
  const bool enabled =
      std::find(peer_enabled.begin(), peer_enabled.end(),
                std::make_pair(static_cast<const void*>(ctx.raw), owner)) != peer_enabled.end();
  if (!enabled) {
    return sim::hex(ptr) + " is memory of device " + std::to_string(owner) +
           ", used from a context of device " + std::to_string(device) +
           " that has not enabled peer access to it (context_enable_peer_access)";
  }
  if (pooled &&
      std::find(pool_grants.begin(), pool_grants.end(), std::make_pair(owner, device)) == pool_grants.end()) {
    return sim::hex(ptr) + " is pool memory of device " + std::to_string(owner) +
           ", whose pool has not granted device " + std::to_string(device) + " access (pool_grant_access)";
  }
  return {};
}

Result SimBackend::Impl::submit(const char* api, ContextHandle ctx, StreamHandle s, sim::Command command,
                                sim::Countdown* fault) {
  std::shared_ptr<sim::Stream> stream;
  if (Result r = find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  if (fault != nullptr && fault->take()) {
    return fail(api, Status::unknown,
                std::string(api) + " on " + sim::stream_name(stream->id()) + ": failed on purpose by " +
                    (fault == &launch_faults ? "fail_nth_launch" : "fail_nth_copy") + " (a driver error)",
                Cause::injected);
  }
  const Status status = stream->submit(std::move(command), sim::Stream::DuringCapture::capture);
  if (status != Status::ok) {
    return fail(api, status, sim::stream_name(stream->id()) + " is being destroyed");
  }
  return succeeded(api);
}

Result SimBackend::Impl::observe_event(const char* api, ContextHandle ctx, EventHandle e, Observe how) {
  int device = 0;
  std::shared_ptr<sim::Event> event;
  if (Result r = find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  if (Result r = find_event(api, e, event); !r.ok()) {
    return r;
  }
  const sim::EventState state = how == Observe::wait ? events.synchronize(*event) : events.query(*event);
  if (state.completed) {
    host_clock.join(state.completed->clock);  // the host saw it complete
  }
  return event_result(api, state);
}

Result SimBackend::Impl::event_result(const char* api, const sim::EventState& state) const {
  if (state.status != Status::completion_unknown) {
    return reported(api, state.status);
  }
  // The sim's work always finishes: completion_unknown is only ever the
  // fault armed by arm_completion_unknown.
  const std::string where = sim::stream_name(state.stream);
  if (state.inherited) {
    return fail(api, state.status,
                "an earlier event recorded on " + where +
                    " reported completion_unknown and has not been queried yet (the fault is "
                    "pending on the stream)",
                Cause::injected);
  }
  return fail(api, state.status,
              "the event recorded on " + where +
                  " was faulted (arm_completion_unknown): whether its work finished is unknown",
              Cause::injected);
}

void SimBackend::Impl::reap_finished_workers() {
  std::vector<std::shared_ptr<sim::Stream>> finished;
  {
    base::Lock lock(mu);
    auto first_done =
        std::partition(retired.begin(), retired.end(), [](const auto& s) { return !s->finished(); });
    std::move(first_done, retired.end(), std::back_inserter(finished));
    retired.erase(first_done, retired.end());
  }
  for (auto& s : finished) {
    s->join();  // already out of its loop: returns at once
  }
}

// --- SimBackend ---------------------------------------------------------------

SimBackend::SimBackend(SimConfig config) : impl_(std::make_unique<Impl>(config)) {}

SimBackend::~SimBackend() = default;

std::unique_ptr<Backend> make_sim_backend(const SimConfig& config) {
  return std::make_unique<SimBackend>(config);
}

std::string SimBackend::driver_version() const { return "tandem-sim 1"; }

std::string SimBackend::describe(const Result& r) const {
  const char* api = r.api != nullptr ? r.api : "";
  std::string message = "sim: " + std::string(api) + ": " + status_name(r.status);
  const LastError& last = t_last_error;
  if (last.status == r.status && last.api == api && !last.detail.empty()) {
    message += " (" + last.detail + ")";
  }
  return message;
}

// --- devices and contexts -----------------------------------------------------

Result SimBackend::device_count(int& out) noexcept {
  out = static_cast<int>(impl_->primaries.size());
  return succeeded("device_count");
}

Result SimBackend::device_info(int ordinal, DeviceInfo& out) noexcept {
  constexpr const char* api = "device_info";
  if (Result r = impl_->check_ordinal(api, ordinal); !r.ok()) {
    return r;
  }
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "SIM-%08llx-%04x-0000-0000-%012llx",
                static_cast<unsigned long long>(impl_->instance), static_cast<unsigned>(ordinal),
                static_cast<unsigned long long>(::getpid()));
  char pci[32];  // PCI device numbers are 5 bits: spill higher ordinals into the bus
  std::snprintf(pci, sizeof pci, "0000:%02x:%02x.0", static_cast<unsigned>(ordinal / 32),
                static_cast<unsigned>(ordinal % 32));
  out = DeviceInfo{};
  out.ordinal = ordinal;
  out.name = "tandem sim device " + std::to_string(ordinal);
  out.uuid = uuid;
  out.pci_bus_id = pci;
  out.cc_major = 9;
  out.cc_minor = 0;
  out.total_bytes = impl_->memory.capacity();
  out.multiprocessors = kMultiprocessors;
  return succeeded(api);
}

Result SimBackend::primary_context_retain(int ordinal, ContextHandle& out) noexcept {
  constexpr const char* api = "primary_context_retain";
  if (Result r = impl_->check_ordinal(api, ordinal); !r.ok()) {
    return r;
  }
  const auto d = static_cast<std::size_t>(ordinal);
  base::Lock lock(impl_->mu);
  ++impl_->primary_refs[d];
  out.raw = impl_->primaries[d].get();
  return succeeded(api);
}

Result SimBackend::primary_context_release(int ordinal) noexcept {
  constexpr const char* api = "primary_context_release";
  if (Result r = impl_->check_ordinal(api, ordinal); !r.ok()) {
    return r;
  }
  const auto d = static_cast<std::size_t>(ordinal);
  base::Lock lock(impl_->mu);
  if (impl_->primary_refs[d] == 0) {
    return fail(api, Status::invalid_value,
                "the primary context of device " + std::to_string(ordinal) +
                    " is not retained (a release without a matching retain)");
  }
  --impl_->primary_refs[d];
  return succeeded(api);
}

Result SimBackend::context_create(int ordinal, ContextHandle& out) noexcept {
  constexpr const char* api = "context_create";
  if (Result r = impl_->check_ordinal(api, ordinal); !r.ok()) {
    return r;
  }
  auto ctx = std::make_unique<Context>(Context{ordinal, false});
  out.raw = ctx.get();
  base::Lock lock(impl_->mu);
  impl_->contexts.emplace(ctx.get(), std::move(ctx));
  return succeeded(api);
}

Result SimBackend::context_destroy(ContextHandle ctx) noexcept {
  constexpr const char* api = "context_destroy";
  base::Lock lock(impl_->mu);
  for (const auto& p : impl_->primaries) {
    if (p.get() == ctx.raw) {
      return fail(api, Status::invalid_value,
                  "context " + handle_text(ctx.raw) + " is the primary context of device " +
                      std::to_string(p->device) + ": release it with primary_context_release");
    }
  }
  if (impl_->contexts.erase(ctx.raw) == 0) {
    return not_live(api, "context", ctx.raw);
  }
  // Its address may be reused by a later context, which starts without peers.
  std::erase_if(impl_->peer_enabled, [&](const auto& e) { return e.first == ctx.raw; });
  return succeeded(api);
}

Result SimBackend::context_device(ContextHandle ctx, int& ordinal) noexcept {
  return impl_->find_context("context_device", ctx, ordinal);
}

// --- peer access -----------------------------------------------------------------

Result SimBackend::device_can_access_peer(int ordinal, int peer, bool& out) noexcept {
  constexpr const char* api = "device_can_access_peer";
  out = false;
  if (Result r = impl_->check_ordinal(api, ordinal); !r.ok()) {
    return r;
  }
  if (Result r = impl_->check_ordinal(api, peer); !r.ok()) {
    return r;
  }
  out = ordinal != peer && impl_->config.peer_capable;
  return succeeded(api);
}

Result SimBackend::context_enable_peer_access(ContextHandle ctx, ContextHandle peer) noexcept {
  constexpr const char* api = "context_enable_peer_access";
  int device = 0;
  int peer_device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  if (Result r = impl_->find_context(api, peer, peer_device); !r.ok()) {
    return r;
  }
  if (device == peer_device) {
    return fail(api, Status::invalid_value,
                "context " + handle_text(ctx.raw) + " and peer context " + handle_text(peer.raw) +
                    " are both on device " + std::to_string(device) + " (a device is not its own peer)");
  }
  if (!impl_->config.peer_capable) {
    return fail(api, Status::not_supported,
                "device " + std::to_string(device) + " cannot access device " + std::to_string(peer_device) +
                    " (SimConfig::peer_capable is false)");
  }
  base::Lock lock(impl_->mu);
  const auto pair = std::make_pair(static_cast<const void*>(ctx.raw), peer_device);
  if (std::find(impl_->peer_enabled.begin(), impl_->peer_enabled.end(), pair) == impl_->peer_enabled.end()) {
    impl_->peer_enabled.push_back(pair);  // already enabled is ok, as the cuda backend treats it
  }
  return succeeded(api);
}

Result SimBackend::pool_grant_access(ContextHandle ctx, PoolHandle p, int peer) noexcept {
  constexpr const char* api = "pool_grant_access";
  int device = 0;
  Pool pool;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  if (Result r = impl_->check_ordinal(api, peer); !r.ok()) {
    return r;
  }
  if (Result r = impl_->find_pool(api, p, pool); !r.ok()) {
    return r;
  }
  base::Lock lock(impl_->mu);
  const auto pair = std::make_pair(pool.device, peer);
  if (peer != pool.device &&
      std::find(impl_->pool_grants.begin(), impl_->pool_grants.end(), pair) == impl_->pool_grants.end()) {
    impl_->pool_grants.push_back(pair);
  }
  return succeeded(api);
}

// --- streams -------------------------------------------------------------------

Result SimBackend::stream_create(ContextHandle ctx, StreamHandle& out) noexcept {
  constexpr const char* api = "stream_create";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  impl_->reap_finished_workers();
  std::uint64_t id = 0;
  {
    base::Lock lock(impl_->mu);
    id = impl_->next_stream_id++;
  }
  auto stream = std::make_shared<sim::Stream>(id, device, impl_->executor, impl_->events);
  try {
    stream->start();
  } catch (const std::system_error& e) {
    return fail(api, Status::out_of_memory,
                "could not start a worker thread for a new stream: " + std::string(e.what()));
  }
  out.raw = stream.get();
  base::Lock lock(impl_->mu);
  impl_->streams.emplace(stream.get(), std::move(stream));
  return succeeded(api);
}

Result SimBackend::stream_destroy(ContextHandle ctx, StreamHandle s) noexcept {
  constexpr const char* api = "stream_destroy";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  std::shared_ptr<sim::Stream> stream;
  {
    base::Lock lock(impl_->mu);
    auto it = impl_->streams.find(s.raw);
    if (it == impl_->streams.end()) {
      return not_live(api, "stream", s.raw);
    }
    stream = std::move(it->second);
    impl_->streams.erase(it);
  }
  stream->close();  // does not wait: the worker drains what is queued
  if (stream->query() == Status::ok) {
    // Nothing queued or running: the worker is leaving its loop, and
    // joining it waits for no device work. Joined now, not lazily: a
    // backend kept alive to the end of the process (by memory quarantined
    // there) would never reap it, leaving a finished thread unjoined.
    stream->join();
  } else {
    base::Lock lock(impl_->mu);
    impl_->retired.push_back(std::move(stream));
  }
  impl_->reap_finished_workers();
  return succeeded(api);
}

Result SimBackend::stream_synchronize(ContextHandle ctx, StreamHandle s) noexcept {
  constexpr const char* api = "stream_synchronize";
  std::shared_ptr<sim::Stream> stream;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  sim::VectorClock seen;
  if (stream->synchronize(&seen) == Status::not_permitted) {
    return fail(api, Status::not_permitted,
                sim::stream_name(stream->id()) + " is capturing: it cannot be synchronized");
  }
  impl_->host_clock.join(seen);
  return succeeded(api);
}

Result SimBackend::stream_query(ContextHandle ctx, StreamHandle s) noexcept {
  constexpr const char* api = "stream_query";
  std::shared_ptr<sim::Stream> stream;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  sim::VectorClock seen;
  const Status status = stream->query(&seen);
  if (status == Status::not_permitted) {
    return fail(api, status, sim::stream_name(stream->id()) + " is capturing: it cannot be queried");
  }
  if (status == Status::ok) {
    impl_->host_clock.join(seen);
  }
  return reported(api, status);
}

// --- events -------------------------------------------------------------------

Result SimBackend::event_create(ContextHandle ctx, EventHandle& out) noexcept {
  constexpr const char* api = "event_create";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  auto event = std::make_shared<sim::Event>();
  out.raw = event.get();
  base::Lock lock(impl_->mu);
  impl_->event_table.emplace(event.get(), std::move(event));
  return succeeded(api);
}

Result SimBackend::event_destroy(ContextHandle ctx, EventHandle e) noexcept {
  constexpr const char* api = "event_destroy";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  base::Lock lock(impl_->mu);
  // Queued records and waits hold their own references: destroying an event
  // with pending work is fine, as in CUDA.
  if (impl_->event_table.erase(e.raw) == 0) {
    return not_live(api, "event", e.raw);
  }
  return succeeded(api);
}

Result SimBackend::event_record(ContextHandle ctx, EventHandle e, StreamHandle s) noexcept {
  constexpr const char* api = "event_record";
  std::shared_ptr<sim::Event> event;
  if (Result r = impl_->find_event(api, e, event); !r.ok()) {
    return r;
  }
  return impl_->submit(api, ctx, s, sim::RecordCommand{std::move(event)});
}

Result SimBackend::event_query(ContextHandle ctx, EventHandle e) noexcept {
  return impl_->observe_event("event_query", ctx, e, Impl::Observe::query);
}

Result SimBackend::event_synchronize(ContextHandle ctx, EventHandle e) noexcept {
  return impl_->observe_event("event_synchronize", ctx, e, Impl::Observe::wait);
}

Result SimBackend::stream_wait_event(ContextHandle ctx, StreamHandle s, EventHandle e) noexcept {
  constexpr const char* api = "stream_wait_event";
  std::shared_ptr<sim::Event> event;
  if (Result r = impl_->find_event(api, e, event); !r.ok()) {
    return r;
  }
  return impl_->submit(api, ctx, s, sim::WaitCommand{std::move(event)});
}

}  // namespace tandem::driver
