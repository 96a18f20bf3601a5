// SPDX-License-Identifier: Apache-2.0
// The simulated device facade (sim_backend.cpp): kernel launches, graphs
// (capture and replay) and the simulation controls tests use.
#include "sim_backend_impl.hpp"

namespace tandem::driver {

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
                       std::vector<Access>(request.accesses, request.accesses + request.access_count),
                       impl_->next_launch.fetch_add(1, std::memory_order_relaxed)};
  return impl_->submit(api, request.context, request.stream, sim::Work{std::move(work)},
                       &impl_->launch_faults);
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

void SimBackend::fail_nth_alloc_with_driver_error(std::uint64_t n) {
  impl_->memory.fail_nth_alloc_with_driver_error(n);
}

void SimBackend::fail_nth_launch(std::uint64_t n) { impl_->launch_faults.arm(n); }

void SimBackend::fail_nth_copy(std::uint64_t n) { impl_->copy_faults.arm(n); }

std::vector<Violation> SimBackend::violations() const { return impl_->checker.violations(); }

std::uint64_t SimBackend::violation_count() const noexcept { return impl_->checker.count(); }

std::size_t SimBackend::race_check_ranges() const { return impl_->checker.remembered_segments(); }

std::uint64_t SimBackend::live_allocations() const noexcept { return impl_->memory.live_allocations(); }

std::uint64_t SimBackend::live_bytes() const noexcept { return impl_->memory.live_bytes(); }

}  // namespace tandem::driver
