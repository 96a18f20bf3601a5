// The simulated device: the Backend surface on host memory and host threads.
//
// This file is the facade: handle bookkeeping, argument checks and error
// messages. The moving parts live next to it:
//   sim_memory    virtual device addresses, host bytes, capacity accounting
//   sim_stream    per-stream queue + worker thread, capture lists
//   sim_executor  runs one operation (translation, checks, delay)
//   sim_checker   the active-access set and the violation log
//   sim_events    event records, stream waits, injected completion faults
#include "tandem/driver/sim_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "sim_checker.hpp"
#include "sim_events.hpp"
#include "sim_executor.hpp"
#include "sim_memory.hpp"
#include "sim_ops.hpp"
#include "sim_stream.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "sim_text.hpp"

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

namespace {

using base::Lock;

constexpr int kMultiprocessors = 132;  // an H100/H200-sized device
constexpr std::uint32_t kMaxThreadsPerBlock = 1024;

// The last failure on this thread: describe() adds its detail when asked
// about that same failure.
struct LastError {
  std::string api;
  Status status = Status::ok;
  std::string detail;
};
thread_local LastError t_last_error;

Result succeeded(const char* api) { return Result{Status::ok, 0, api}; }

// A status that is not a failure (not_ready): no detail.
Result reported(const char* api, Status status) { return Result{status, static_cast<int>(status), api}; }

enum class Cause : std::uint8_t { real, injected };

Result fail(const char* api, Status status, std::string detail, Cause cause = Cause::real) {
  t_last_error = LastError{api, status, std::move(detail)};
  Result r = reported(api, status);
  r.injected = cause == Cause::injected;
  return r;
}

std::string handle_text(const void* raw) {
  return sim::hex(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(raw)));
}

struct Context {
  int device = 0;
  bool primary = false;
};
struct Pool {
  int device = 0;
  std::uint64_t id = 0;  // never reused: a queued free lends only within its own pool
};
struct Graph {
  int device = 0;
  std::vector<sim::Command> commands;
};

std::atomic<std::uint64_t> g_backend_instances{0};

}  // namespace

struct SimBackend::Impl {
  explicit Impl(SimConfig cfg);
  ~Impl();  // drains every stream's queue and joins every worker
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Handle lookups: ok, or a failure naming the handle and why it is bad.
  Result check_ordinal(const char* api, int ordinal) const;
  Result find_context(const char* api, ContextHandle h, int& device) TANDEM_EXCLUDES(mu);
  Result find_stream(const char* api, StreamHandle h, std::shared_ptr<sim::Stream>& out) TANDEM_EXCLUDES(mu);
  std::shared_ptr<sim::Stream> live_stream(StreamHandle h) TANDEM_EXCLUDES(mu);  // null if not
  Result find_event(const char* api, EventHandle h, std::shared_ptr<sim::Event>& out) TANDEM_EXCLUDES(mu);
  Result find_pool(const char* api, PoolHandle h, Pool& out) TANDEM_EXCLUDES(mu);
  Result find_graph(const char* api, GraphHandle h, std::shared_ptr<const Graph>& out) TANDEM_EXCLUDES(mu);
  // The common prefix of stream calls: a live context and a live stream.
  Result find_context_stream(const char* api, ContextHandle ctx, StreamHandle s,
                             std::shared_ptr<sim::Stream>& out);

  Result allocate(const char* api, const sim::AllocRequest& request, DevicePtr& out);
  // Why work on a stream of context `ctx` (device `device`) may not touch
  // the live block containing `ptr`, or empty (same device, or peer access).
  std::string peer_problem(ContextHandle ctx, int device, DevicePtr ptr) TANDEM_EXCLUDES(mu);
  Result submit(const char* api, ContextHandle ctx, StreamHandle s, sim::Command command);
  Result event_result(const char* api, const sim::EventState& state) const;
  // Joins the workers of destroyed streams that have drained their queues.
  void reap_finished_workers() TANDEM_EXCLUDES(mu);

  const SimConfig config;
  const std::uint64_t instance;
  sim::Memory memory;
  sim::Checker checker;
  sim::Events events;
  sim::Executor executor{memory, checker, events};

  // Handle registry. Handles are pointers to these objects; the maps decide
  // whether a handle is live.
  mutable base::Mutex mu;
  std::vector<std::unique_ptr<Context>> primaries;  // one per device, immutable
  std::vector<int> primary_refs TANDEM_GUARDED_BY(mu);
  std::unordered_map<const void*, std::unique_ptr<Context>> contexts TANDEM_GUARDED_BY(mu);
  std::unordered_map<const void*, std::shared_ptr<sim::Stream>> streams TANDEM_GUARDED_BY(mu);
  // Destroyed streams whose worker may still be draining; joined lazily.
  std::vector<std::shared_ptr<sim::Stream>> retired TANDEM_GUARDED_BY(mu);
  std::unordered_map<const void*, std::shared_ptr<sim::Event>> event_table TANDEM_GUARDED_BY(mu);
  std::unordered_map<const void*, std::unique_ptr<Pool>> pools TANDEM_GUARDED_BY(mu);
  std::unordered_map<const void*, std::shared_ptr<const Graph>> graphs TANDEM_GUARDED_BY(mu);
  std::uint64_t next_stream_id TANDEM_GUARDED_BY(mu) = 1;
  std::uint64_t next_pool_id TANDEM_GUARDED_BY(mu) = 1;
  // (context, peer device) pairs with peer access enabled (contexts never
  // lose it: a destroyed context's pairs are dropped with it).
  std::vector<std::pair<const void*, int>> peer_enabled TANDEM_GUARDED_BY(mu);
  // (pool's device, peer device) pairs whose pool memory the peer may use.
  std::vector<std::pair<int, int>> pool_grants TANDEM_GUARDED_BY(mu);  // 0 is sim::kHostStream
};

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

namespace {
// The error for a handle this backend does not know (never made, or destroyed).
Result not_live(const char* api, const char* kind, const void* raw) {
  return fail(api, Status::invalid_handle,
              std::string(kind) + " " + handle_text(raw) + " is not live in this sim backend (destroyed?)");
}
}  // namespace

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
  const bool enabled = std::find(peer_enabled.begin(), peer_enabled.end(),
                                 std::make_pair(static_cast<const void*>(ctx.raw), owner)) != peer_enabled.end();
  if (!enabled) {
    return sim::hex(ptr) + " is memory of device " + std::to_string(owner) + ", used from a context of device " +
           std::to_string(device) + " that has not enabled peer access to it (context_enable_peer_access)";
  }
  if (pooled && std::find(pool_grants.begin(), pool_grants.end(), std::make_pair(owner, device)) == pool_grants.end()) {
    return sim::hex(ptr) + " is pool memory of device " + std::to_string(owner) + ", whose pool has not granted device " +
           std::to_string(device) + " access (pool_grant_access)";
  }
  return {};
}

Result SimBackend::Impl::submit(const char* api, ContextHandle ctx, StreamHandle s, sim::Command command) {
  std::shared_ptr<sim::Stream> stream;
  if (Result r = find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  const Status status = stream->submit(std::move(command), sim::Stream::DuringCapture::capture);
  if (status != Status::ok) {
    return fail(api, status, sim::stream_name(stream->id()) + " is being destroyed");
  }
  return succeeded(api);
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

std::unique_ptr<Backend> make_sim_backend(const SimConfig& config) { return std::make_unique<SimBackend>(config); }

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
  if (stream->synchronize() == Status::not_permitted) {
    return fail(api, Status::not_permitted,
                sim::stream_name(stream->id()) + " is capturing: it cannot be synchronized");
  }
  return succeeded(api);
}

Result SimBackend::stream_query(ContextHandle ctx, StreamHandle s) noexcept {
  constexpr const char* api = "stream_query";
  std::shared_ptr<sim::Stream> stream;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  const Status status = stream->query();
  if (status == Status::not_permitted) {
    return fail(api, status, sim::stream_name(stream->id()) + " is capturing: it cannot be queried");
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
  constexpr const char* api = "event_query";
  int device = 0;
  std::shared_ptr<sim::Event> event;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  if (Result r = impl_->find_event(api, e, event); !r.ok()) {
    return r;
  }
  return impl_->event_result(api, impl_->events.query(*event));
}

Result SimBackend::event_synchronize(ContextHandle ctx, EventHandle e) noexcept {
  constexpr const char* api = "event_synchronize";
  int device = 0;
  std::shared_ptr<sim::Event> event;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  if (Result r = impl_->find_event(api, e, event); !r.ok()) {
    return r;
  }
  return impl_->event_result(api, impl_->events.synchronize(*event));
}

Result SimBackend::stream_wait_event(ContextHandle ctx, StreamHandle s, EventHandle e) noexcept {
  constexpr const char* api = "stream_wait_event";
  std::shared_ptr<sim::Event> event;
  if (Result r = impl_->find_event(api, e, event); !r.ok()) {
    return r;
  }
  return impl_->submit(api, ctx, s, sim::WaitCommand{std::move(event)});
}

// --- memory ----------------------------------------------------------------------

Result SimBackend::pool_create(ContextHandle ctx, PoolHandle& out) noexcept {
  constexpr const char* api = "pool_create";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  base::Lock lock(impl_->mu);
  auto pool = std::make_unique<Pool>(Pool{device, impl_->next_pool_id++});
  out.raw = pool.get();
  impl_->pools.emplace(pool.get(), std::move(pool));
  return succeeded(api);
}

Result SimBackend::pool_destroy(ContextHandle ctx, PoolHandle p) noexcept {
  constexpr const char* api = "pool_destroy";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  base::Lock lock(impl_->mu);
  if (impl_->pools.erase(p.raw) == 0) {
    return not_live(api, "pool", p.raw);
  }
  return succeeded(api);
}

Result SimBackend::pool_trim(ContextHandle ctx, PoolHandle p, std::size_t /*keep_bytes*/) noexcept {
  constexpr const char* api = "pool_trim";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  // The sim's pools cache nothing (an executed free returns its bytes to the
  // device), so there is never anything to trim.
  Pool pool;
  return impl_->find_pool(api, p, pool);
}

Result SimBackend::mem_alloc_async(ContextHandle ctx, PoolHandle p, std::size_t bytes, StreamHandle s,
                                   DevicePtr& out) noexcept {
  constexpr const char* api = "mem_alloc_async";
  std::shared_ptr<sim::Stream> stream;
  Pool pool;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  if (Result r = impl_->find_pool(api, p, pool); !r.ok()) {
    return r;
  }
  if (stream->capturing()) {
    return fail(api, Status::not_permitted,
                sim::stream_name(stream->id()) +
                    " is capturing: the sim does not capture "
                    "stream-ordered allocation");
  }
  // Allocated now, which is earlier than stream order requires: harmless.
  return impl_->allocate(api, sim::AllocRequest{pool.device, bytes, pool.id, stream->id()}, out);
}

Result SimBackend::mem_free_async(ContextHandle ctx, DevicePtr ptr, StreamHandle s) noexcept {
  constexpr const char* api = "mem_free_async";
  std::shared_ptr<sim::Stream> stream;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  std::string why;
  if (!impl_->memory.accept_free(ptr, why)) {
    return fail(api, Status::invalid_value, std::move(why));
  }
  const Status status = stream->submit(sim::Work{sim::FreeWork{ptr}}, sim::Stream::DuringCapture::forbid);
  if (status != Status::ok) {
    impl_->memory.withdraw_free(ptr);
    return fail(api, status,
                sim::stream_name(stream->id()) + (status == Status::not_permitted
                                                      ? " is capturing: the sim does not capture "
                                                        "stream-ordered frees"
                                                      : " is being destroyed"));
  }
  // Only now, once it is queued: a free that was withdrawn must lend nothing.
  impl_->memory.lend_until_freed(ptr, stream->id());
  return succeeded(api);
}

Result SimBackend::mem_alloc(ContextHandle ctx, std::size_t bytes, DevicePtr& out) noexcept {
  constexpr const char* api = "mem_alloc";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  return impl_->allocate(api, sim::AllocRequest{device, bytes}, out);
}

Result SimBackend::mem_free(ContextHandle ctx, DevicePtr ptr) noexcept {
  constexpr const char* api = "mem_free";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  std::string why;
  if (!impl_->memory.accept_free(ptr, why)) {
    return fail(api, Status::invalid_value, std::move(why));
  }
  impl_->executor.free_block(ptr, sim::OpLabel{sim::kHostStream, api, true}, sim::Executor::Clock::now());
  return succeeded(api);
}

Result SimBackend::mem_info(ContextHandle ctx, std::size_t& free_bytes, std::size_t& total_bytes) noexcept {
  constexpr const char* api = "mem_info";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  impl_->memory.info(device, free_bytes, total_bytes);
  return succeeded(api);
}

// --- transfers ---------------------------------------------------------------------
// Addresses are checked when the operation runs (a dead one is a violation,
// as on a device); here only arguments that can never be right.

Result SimBackend::memcpy_async(ContextHandle ctx, DevicePtr dst, DevicePtr src, std::size_t bytes,
                                StreamHandle s) noexcept {
  constexpr const char* api = "memcpy_async";
  if (bytes > 0 && (dst == 0 || src == 0)) {
    return fail(api, Status::invalid_value,
                "copy of " + std::to_string(bytes) + " bytes from " + sim::hex(src) + " to " + sim::hex(dst) +
                    ": null device pointer");
  }
  if (bytes > 0) {
    int device = 0;
    if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
      return r;
    }
    for (const DevicePtr p : {src, dst}) {
      if (std::string why = impl_->peer_problem(ctx, device, p); !why.empty()) {
        return fail(api, Status::not_permitted, "copy of " + std::to_string(bytes) + " bytes: " + why);
      }
    }
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::CopyWork{dst, src, bytes}});
}

Result SimBackend::upload_async(ContextHandle ctx, DevicePtr dst, const void* src, std::size_t bytes,
                                StreamHandle s) noexcept {
  constexpr const char* api = "upload_async";
  if (bytes > 0 && (dst == 0 || src == nullptr)) {
    return fail(api, Status::invalid_value,
                "upload of " + std::to_string(bytes) + " bytes to " + sim::hex(dst) +
                    ": null device or host pointer");
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::UploadWork{dst, src, bytes}});
}

Result SimBackend::download_async(ContextHandle ctx, void* dst, DevicePtr src, std::size_t bytes,
                                  StreamHandle s) noexcept {
  constexpr const char* api = "download_async";
  if (bytes > 0 && (dst == nullptr || src == 0)) {
    return fail(api, Status::invalid_value,
                "download of " + std::to_string(bytes) + " bytes from " + sim::hex(src) +
                    ": null device or host pointer");
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::DownloadWork{dst, src, bytes}});
}

Result SimBackend::memset8_async(ContextHandle ctx, DevicePtr dst, std::uint8_t value, std::size_t count,
                                 StreamHandle s) noexcept {
  constexpr const char* api = "memset8_async";
  if (count > 0 && dst == 0) {
    return fail(api, Status::invalid_value,
                "memset of " + std::to_string(count) + " bytes: null device pointer");
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::MemsetWork{dst, value, count}});
}

// --- kernels -------------------------------------------------------------------------

namespace {

std::string kernel_text(const KernelSymbol& k) { return "kernel '" + std::string(k.name) + "'"; }

// Why `request` can never be launched, or empty.
std::string launch_problem(const LaunchRequest& request, const KernelSymbol& k) {
  const Dim3 g = request.dims.grid;
  const Dim3 b = request.dims.block;
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0) {
    return kernel_text(k) + ": grid (" + std::to_string(g.x) + "," + std::to_string(g.y) + "," +
           std::to_string(g.z) + ") and block (" + std::to_string(b.x) + "," + std::to_string(b.y) + "," +
           std::to_string(b.z) + ") must have no zero dimension";
  }
  const std::uint64_t threads = std::uint64_t{b.x} * b.y * b.z;
  if (threads > kMaxThreadsPerBlock) {
    return kernel_text(k) + ": a block of " + std::to_string(threads) + " threads (at most " +
           std::to_string(kMaxThreadsPerBlock) + ")";
  }
  if (k.param_count > 0 && k.params == nullptr) {
    return kernel_text(k) + " declares " + std::to_string(k.param_count) +
           " parameters but KernelSymbol::params is null";
  }
  if (k.param_count > 0 && request.params == nullptr) {
    return kernel_text(k) + " takes " + std::to_string(k.param_count) +
           " parameters but LaunchRequest::params is null";
  }
  for (std::uint32_t i = 0; i < k.param_count; ++i) {
    if (request.params[i] == nullptr && k.params[i].size > 0) {
      return kernel_text(k) + ": params[" + std::to_string(i) + "] is null";
    }
    if (k.params[i].kind == ParamKind::pointer_led && k.params[i].size < sizeof(DevicePtr)) {
      return kernel_text(k) + ": parameter " + std::to_string(i) + " is pointer-led but " +
             std::to_string(k.params[i].size) + " bytes (its DevicePtr needs 8)";
    }
  }
  if (request.access_count > 0 && request.accesses == nullptr) {
    return kernel_text(k) + ": " + std::to_string(request.access_count) +
           " accesses declared but LaunchRequest::accesses is null";
  }
  return {};
}

}  // namespace

Result SimBackend::kernel_function(ContextHandle ctx, const KernelSymbol& symbol,
                                   FunctionHandle& out) noexcept {
  constexpr const char* api = "kernel_function";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  if (symbol.host == nullptr) {
    return fail(api, Status::not_supported,
                kernel_text(symbol) + " has no host reference (KernelSymbol::host is null)");
  }
  // The sim needs nothing per context: the handle is the symbol itself.
  out.raw = const_cast<KernelSymbol*>(&symbol);
  return succeeded(api);
}

Result SimBackend::launch(const LaunchRequest& request) noexcept {
  constexpr const char* api = "launch";
  const KernelSymbol* symbol = request.symbol;
  if (symbol == nullptr) {
    symbol = static_cast<const KernelSymbol*>(request.function.raw);
  }
  if (symbol == nullptr) {
    return fail(api, Status::invalid_handle, "LaunchRequest names no kernel (no symbol, no function)");
  }
  if (request.function && request.function.raw != symbol) {
    return fail(api, Status::invalid_value,
                "LaunchRequest::function and ::symbol name different kernels (" + kernel_text(*symbol) + ")");
  }
  if (symbol->host == nullptr) {
    return fail(api, Status::not_supported,
                kernel_text(*symbol) + " has no host reference (KernelSymbol::host is null)");
  }
  if (std::string problem = launch_problem(request, *symbol); !problem.empty()) {
    return fail(api, Status::invalid_value, std::move(problem));
  }
  sim::LaunchWork work{symbol, request.dims, sim::ParamBuffer(*symbol, request.params),
                       std::vector<Access>(request.accesses, request.accesses + request.access_count)};
  return impl_->submit(api, request.context, request.stream, sim::Work{std::move(work)});
}

// --- graphs --------------------------------------------------------------------------

Result SimBackend::capture_begin(ContextHandle ctx, StreamHandle s) noexcept {
  constexpr const char* api = "capture_begin";
  std::shared_ptr<sim::Stream> stream;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  if (stream->begin_capture() != Status::ok) {
    return fail(api, Status::not_permitted, sim::stream_name(stream->id()) + " is already capturing");
  }
  return succeeded(api);
}

Result SimBackend::capture_end(ContextHandle ctx, StreamHandle s, GraphHandle& out) noexcept {
  constexpr const char* api = "capture_end";
  std::shared_ptr<sim::Stream> stream;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  auto graph = std::make_shared<Graph>();
  graph->device = stream->device();
  if (stream->end_capture(graph->commands) != Status::ok) {
    return fail(api, Status::invalid_value,
                sim::stream_name(stream->id()) + " is not capturing (no capture_begin)");
  }
  out.raw = graph.get();
  base::Lock lock(impl_->mu);
  impl_->graphs.emplace(graph.get(), std::move(graph));
  return succeeded(api);
}

Result SimBackend::graph_launch(ContextHandle ctx, GraphHandle g, StreamHandle s) noexcept {
  constexpr const char* api = "graph_launch";
  std::shared_ptr<sim::Stream> stream;
  std::shared_ptr<const Graph> graph;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  if (Result r = impl_->find_graph(api, g, graph); !r.ok()) {
    return r;
  }
  // The queue gets copies: destroying the graph cannot disturb a replay.
  stream->submit_all(graph->commands);
  return succeeded(api);
}

Result SimBackend::graph_destroy(ContextHandle ctx, GraphHandle g) noexcept {
  constexpr const char* api = "graph_destroy";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  base::Lock lock(impl_->mu);
  if (impl_->graphs.erase(g.raw) == 0) {
    return not_live(api, "graph", g.raw);
  }
  return succeeded(api);
}

// --- simulation controls -------------------------------------------------------------

// The controls return nothing: an unknown stream is ignored.

void SimBackend::set_stream_delay(StreamHandle s, std::chrono::microseconds delay) {
  if (auto stream = impl_->live_stream(s)) {
    stream->set_delay(delay);
  }
}

void SimBackend::arm_completion_unknown(StreamHandle s) {
  if (auto stream = impl_->live_stream(s)) {
    stream->arm_fault();
  }
}

void SimBackend::fail_nth_alloc(std::uint64_t n) { impl_->memory.fail_nth_alloc(n); }

std::vector<Violation> SimBackend::violations() const { return impl_->checker.violations(); }

std::uint64_t SimBackend::violation_count() const noexcept { return impl_->checker.count(); }

std::uint64_t SimBackend::live_allocations() const noexcept { return impl_->memory.live_allocations(); }

std::uint64_t SimBackend::live_bytes() const noexcept { return impl_->memory.live_bytes(); }

}  // namespace tandem::driver
