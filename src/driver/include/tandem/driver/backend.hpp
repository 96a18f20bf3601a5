// SPDX-License-Identifier: Apache-2.0
// tandem/driver/backend.hpp — the one driver interface, two implementations.
//
//   auto cuda = tandem::driver::load_cuda_backend();   // nullptr + reason if
//                                                       // no driver/device
//   auto sim  = tandem::driver::make_sim_backend(SimConfig{});
//
// Contract for every method:
//   - never throws, returns a Result (status + the backend's raw code + api);
//   - "async" calls enqueue on the given stream and return without waiting
//     for the device; "sync" calls block the calling thread as documented;
//   - methods taking a ContextHandle make that context current on the calling
//     thread first (cheap when it already is);
//   - all methods may be called concurrently from any thread, except that one
//     handle must not be destroyed while another thread uses it.
//
// Semantics follow the CUDA driver API of the same name; the simulated device
// (sim_backend.hpp) implements them on host threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tandem/base/backend_kind.hpp"
#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/driver/sim_config.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::driver {

struct LaunchRequest {
  ContextHandle context;
  FunctionHandle function;  // from kernel_function()
  const KernelSymbol* symbol = nullptr;
  LaunchDims dims;
  StreamHandle stream;
  void** params = nullptr;           // params[i] points at parameter i (symbol->params[i])
  const Access* accesses = nullptr;  // declared accesses (sim checks them)
  std::uint32_t access_count = 0;
};

class SimBackend;  // sim_backend.hpp: only src/driver and tandem/testing/sim.hpp include it

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend() = default;

  // backend_kind_name of what it is ("cuda" | "sim"), or its own name for
  // a backend that is neither (a test's or a tool's).
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  // This object as the simulated device, whose controls (faults, delays,
  // violations) tests reach through tandem/testing/sim.hpp; nullptr for any
  // other backend, a wrapper around the sim included (its calls would
  // bypass the wrapper). Replaces a dynamic_cast.
  [[nodiscard]] virtual SimBackend* as_sim() noexcept { return nullptr; }
  [[nodiscard]] virtual std::string driver_version() const = 0;
  // A readable message for a failed Result: api, code name, description.
  [[nodiscard]] virtual std::string describe(const Result& r) const = 0;

  // --- devices and contexts (sync) ---------------------------------------
  virtual Result device_count(int& out) noexcept = 0;
  virtual Result device_info(int ordinal, DeviceInfo& out) noexcept = 0;
  // The device's primary context, reference counted by the driver.
  virtual Result primary_context_retain(int ordinal, ContextHandle& out) noexcept = 0;
  virtual Result primary_context_release(int ordinal) noexcept = 0;
  // A separate context, as another library would create one (for borrowing).
  virtual Result context_create(int ordinal, ContextHandle& out) noexcept = 0;
  virtual Result context_destroy(ContextHandle ctx) noexcept = 0;
  virtual Result context_device(ContextHandle ctx, int& ordinal) noexcept = 0;

  // --- peer access between devices (sync) -----------------------------------
  // Whether device `ordinal` can access the memory of device `peer` directly
  // (cuDeviceCanAccessPeer). A device is never its own peer (false).
  virtual Result device_can_access_peer(int ordinal, int peer, bool& out) noexcept = 0;
  // Work of `ctx` may access memory of `peer`'s context from now on
  // (cuCtxEnablePeerAccess). One direction only; already enabled is ok.
  virtual Result context_enable_peer_access(ContextHandle ctx, ContextHandle peer) noexcept = 0;
  // Device `peer` may read and write memory allocated from pool `p` of `ctx`
  // (cuMemPoolSetAccess): peer access does not cover stream-ordered pools.
  virtual Result pool_grant_access(ContextHandle ctx, PoolHandle p, int peer) noexcept = 0;

  // --- streams (create/destroy sync; destroy does not wait for work) -------
  // Non-blocking streams (no implicit sync with the legacy default stream).
  virtual Result stream_create(ContextHandle ctx, StreamHandle& out) noexcept = 0;
  virtual Result stream_destroy(ContextHandle ctx, StreamHandle s) noexcept = 0;
  // Blocks until all work on `s` is done.
  virtual Result stream_synchronize(ContextHandle ctx, StreamHandle s) noexcept = 0;
  // ok | not_ready | error.
  virtual Result stream_query(ContextHandle ctx, StreamHandle s) noexcept = 0;

  // --- events (timing disabled) -------------------------------------------
  virtual Result event_create(ContextHandle ctx, EventHandle& out) noexcept = 0;
  virtual Result event_destroy(ContextHandle ctx, EventHandle e) noexcept = 0;
  // async: the event completes when all work enqueued on `s` before it has.
  virtual Result event_record(ContextHandle ctx, EventHandle e, StreamHandle s) noexcept = 0;
  // ok | not_ready | completion_unknown or another error. An event never
  // recorded is ok.
  virtual Result event_query(ContextHandle ctx, EventHandle e) noexcept = 0;
  // Blocks until the event completes (or reports its error).
  virtual Result event_synchronize(ContextHandle ctx, EventHandle e) noexcept = 0;
  // async: work enqueued on `s` after this waits (on the device) for `e`.
  virtual Result stream_wait_event(ContextHandle ctx, StreamHandle s, EventHandle e) noexcept = 0;

  // --- memory ----------------------------------------------------------------
  // A stream-ordered pool on the context's device that keeps freed memory
  // cached (release threshold = max) until trimmed.
  virtual Result pool_create(ContextHandle ctx, PoolHandle& out) noexcept = 0;
  virtual Result pool_destroy(ContextHandle ctx, PoolHandle p) noexcept = 0;
  // sync: return cached memory above `keep_bytes` to the device.
  virtual Result pool_trim(ContextHandle ctx, PoolHandle p, std::size_t keep_bytes) noexcept = 0;
  // async (stream-ordered) allocation from `p` and free.
  virtual Result mem_alloc_async(ContextHandle ctx, PoolHandle p, std::size_t bytes, StreamHandle s,
                                 DevicePtr& out) noexcept = 0;
  virtual Result mem_free_async(ContextHandle ctx, DevicePtr ptr, StreamHandle s) noexcept = 0;
  // async: `ptr` (a block of `p` of exactly `bytes`, whose free the caller
  // would enqueue on `s` now) becomes a new allocation on `s` instead, as
  // mem_free_async followed by mem_alloc_async returning the same block
  // would: stream order puts the new owner's work after the old one's, as
  // the pool's own reuse on one stream does. Counts as an allocation call
  // (injected allocation faults fire on it). Not supported by default: the
  // caller then frees and allocates.
  virtual Result mem_reuse_async(ContextHandle /*ctx*/, PoolHandle /*p*/, DevicePtr /*ptr*/,
                                 std::size_t /*bytes*/, StreamHandle /*s*/) noexcept {
    return Result{Status::not_supported, 0, "mem_reuse_async"};
  }
  // sync, not pooled: memory "made elsewhere" (foreign memory, tests).
  virtual Result mem_alloc(ContextHandle ctx, std::size_t bytes, DevicePtr& out) noexcept = 0;
  virtual Result mem_free(ContextHandle ctx, DevicePtr ptr) noexcept = 0;
  // sync: the device's free and total memory.
  virtual Result mem_info(ContextHandle ctx, std::size_t& free_bytes, std::size_t& total_bytes) noexcept = 0;

  // --- transfers (async; host memory must stay valid until they complete) --
  virtual Result memcpy_async(ContextHandle ctx, DevicePtr dst, DevicePtr src, std::size_t bytes,
                              StreamHandle s) noexcept = 0;
  virtual Result upload_async(ContextHandle ctx, DevicePtr dst, const void* src, std::size_t bytes,
                              StreamHandle s) noexcept = 0;
  virtual Result download_async(ContextHandle ctx, void* dst, DevicePtr src, std::size_t bytes,
                                StreamHandle s) noexcept = 0;
  virtual Result memset8_async(ContextHandle ctx, DevicePtr dst, std::uint8_t value, std::size_t count,
                               StreamHandle s) noexcept = 0;

  // --- kernels ----------------------------------------------------------------
  // Resolves a symbol in `ctx` (loading its module once per context).
  // not_supported when the symbol's module has no device code.
  virtual Result kernel_function(ContextHandle ctx, const KernelSymbol& symbol,
                                 FunctionHandle& out) noexcept = 0;
  virtual Result launch(const LaunchRequest& request) noexcept = 0;
  // Whether launch() reads LaunchRequest::accesses. A backend that does not
  // (the CUDA driver) lets the runtime skip building them on every launch.
  [[nodiscard]] virtual bool reads_declared_accesses() const noexcept { return true; }

  // --- graphs (capture is per stream, thread-local mode) ---------------------
  virtual Result capture_begin(ContextHandle ctx, StreamHandle s) noexcept = 0;
  // Ends capture and instantiates the captured work.
  virtual Result capture_end(ContextHandle ctx, StreamHandle s, GraphHandle& out) noexcept = 0;
  virtual Result graph_launch(ContextHandle ctx, GraphHandle g, StreamHandle s) noexcept = 0;
  virtual Result graph_destroy(ContextHandle ctx, GraphHandle g) noexcept = 0;
};

// Loads the CUDA driver library at run time. Returns nullptr and sets
// `why` when no driver library, no device, or a build without CUDA support.
std::unique_ptr<Backend> load_cuda_backend(std::string& why);

// A fresh simulated device (sim_backend.hpp), seen through the interface.
std::unique_ptr<Backend> make_sim_backend(const SimConfig& config);

}  // namespace tandem::driver
