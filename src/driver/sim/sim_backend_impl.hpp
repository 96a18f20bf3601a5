// SPDX-License-Identifier: Apache-2.0
// sim_backend_impl.hpp — the simulated device facade's state and helpers
// (private to src/driver/sim), shared by the files that implement
// SimBackend: sim_backend.cpp (devices, contexts, peers, streams, events),
// sim_backend_memory.cpp (pools, allocations, transfers) and
// sim_backend_kernels.cpp (launches, graphs, the simulation controls).
#pragma once

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
#include "sim_faults.hpp"
#include "sim_memory.hpp"
#include "sim_ops.hpp"
#include "sim_stream.hpp"
#include "sim_text.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {

// Named, not anonymous: SimBackend::Impl (external linkage) holds these
// types, and every file of the facade must share t_last_error.
namespace sim_facade {

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
inline thread_local LastError t_last_error;

inline Result succeeded(const char* api) { return Result{Status::ok, 0, api}; }

// A status that is not a failure (not_ready): no detail.
inline Result reported(const char* api, Status status) {
  return Result{status, static_cast<int>(status), api};
}

enum class Cause : std::uint8_t { real, injected };

inline Result fail(const char* api, Status status, std::string detail, Cause cause = Cause::real) {
  t_last_error = LastError{api, status, std::move(detail)};
  Result r = reported(api, status);
  r.injected = cause == Cause::injected;
  return r;
}

inline std::string handle_text(const void* raw) {
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

inline std::atomic<std::uint64_t> g_backend_instances{0};

// The error for a handle this backend does not know (never made, or destroyed).
inline Result not_live(const char* api, const char* kind, const void* raw) {
  return fail(api, Status::invalid_handle,
              std::string(kind) + " " + handle_text(raw) + " is not live in this sim backend (destroyed?)");
}

}  // namespace sim_facade

using namespace sim_facade;  // NOLINT: the facade's own vocabulary

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
  // Enqueues `command` on a live stream; when `fault` is given and this call
  // is its armed one, fails with an injected driver error instead.
  Result submit(const char* api, ContextHandle ctx, StreamHandle s, sim::Command command,
                sim::Countdown* fault = nullptr);
  // event_query and event_synchronize: the host observes an event (and, once it has completed,
  // everything that happened before it, for the race checks).
  enum class Observe { query, wait };
  Result observe_event(const char* api, ContextHandle ctx, EventHandle e, Observe how);
  Result event_result(const char* api, const sim::EventState& state) const;
  // Joins the workers of destroyed streams that have drained their queues.
  void reap_finished_workers() TANDEM_EXCLUDES(mu);

  const SimConfig config;
  const std::uint64_t instance;
  sim::Memory memory;
  sim::Checker checker;
  sim::Events events;
  sim::HostClock host_clock;  // what the host has observed complete
  sim::Executor executor{memory, checker, events, host_clock};
  sim::Countdown launch_faults;               // fail_nth_launch
  std::atomic<std::uint64_t> next_launch{1};  // LaunchWork::id
  sim::Countdown copy_faults;                 // fail_nth_copy

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

}  // namespace tandem::driver
