// SPDX-License-Identifier: Apache-2.0
// The CUDA driver backend: each Backend method is the driver call of the same
// meaning, made through the run-time resolved table in cuda_api.hpp.
//
// Making contexts current
// -----------------------
// Every method that takes a ContextHandle first makes it current on the
// calling thread. The launch path cannot afford a driver call for that (a
// whole tracked launch must stay within 1.10x of a raw ~3.5 us
// cuLaunchKernel), so tandem remembers, per thread, which context it last
// made current (`t_bound`) and skips cuCtxSetCurrent when it matches.
//
// The cache can go stale in two ways:
//  1. tandem destroys a context (or releases a primary context to zero), and
//     the driver later hands out the same address for a new one. Every such
//     destruction bumps a process-wide epoch, and a cached binding only
//     counts while its epoch is current: the hot-path check is two
//     compares against a thread-local and one atomic load (a plain load on
//     x86), no driver call.
//  2. Someone else (another library, the CUDA runtime) changes the thread's
//     current context behind tandem's back. tandem assumes it owns the
//     current context on the threads that call it: a library that switches
//     contexts on such a thread must restore the previous one (the usual
//     push/pop discipline). To limit the damage when that is violated:
//       - calls whose target is *only* the current context (creating
//         streams, events, pools, modules, allocations; mem_info;
//         context_device) ask the driver (cuCtxGetCurrent, a few ns, on calls
//         that cost microseconds) instead of trusting the cache, so they
//         never create objects in a foreign context;
//       - calls that act on handles (streams, events, graphs, functions,
//         pointers) trust the cache; and any failure forgets the cache, so
//         the next call on that thread rebinds with cuCtxSetCurrent.
//
// Process exit
// ------------
// Runtime objects may be destroyed after main() returns, while the driver is
// tearing down. The backend's destructor therefore makes no driver call (it
// neither unloads modules nor destroys anything: those die with their
// contexts) and libcuda is never dlclosed. Driver calls made that late
// return CUDA_ERROR_DEINITIALIZED, mapped to completion_unknown.
#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "cuda_api.hpp"
#include "tandem/driver/backend.hpp"

namespace tandem::driver {
namespace cuda {
namespace {

// --- handles ------------------------------------------------------------------

CUcontext cu(ContextHandle h) noexcept { return static_cast<CUcontext>(h.raw); }
CUstream cu(StreamHandle h) noexcept { return static_cast<CUstream>(h.raw); }
CUevent cu(EventHandle h) noexcept { return static_cast<CUevent>(h.raw); }
CUmemoryPool cu(PoolHandle h) noexcept { return static_cast<CUmemoryPool>(h.raw); }
CUfunction cu(FunctionHandle h) noexcept { return static_cast<CUfunction>(h.raw); }
CUgraphExec cu(GraphHandle h) noexcept { return static_cast<CUgraphExec>(h.raw); }

// --- the current-context cache (see the top of this file) ---------------------

// Epoch 0 never matches g_context_epoch, so a zeroed BoundContext means
// "tandem does not know what is current on this thread".
struct BoundContext {
  CUcontext ctx = nullptr;
  std::uint64_t epoch = 0;
};
// One per thread, shared by all CudaBackend instances: it mirrors the driver's
// own per-thread state, which they share too.
constinit thread_local BoundContext t_bound{};
constinit std::atomic<std::uint64_t> g_context_epoch{1};

void forget_bound_context() noexcept { t_bound = BoundContext{}; }

// A context was destroyed somewhere: every thread's cached binding is void.
void contexts_changed() noexcept { g_context_epoch.fetch_add(1, std::memory_order_acq_rel); }

// --- results --------------------------------------------------------------------

[[gnu::cold, gnu::noinline]] Result failure(CUresult rc, const char* api) noexcept {
  const Status status = status_of(rc);
  // A real error may mean the thread's current context is not what tandem
  // thinks (case 2 at the top): rebind on the next call. not_ready is the
  // normal answer of a poll and must stay cheap.
  if (status != Status::not_ready) {
    forget_bound_context();
  }
  return Result{status, static_cast<int>(rc), api};
}

inline Result check(CUresult rc, const char* api) noexcept {
  if (rc == CUDA_SUCCESS) [[likely]] {
    return kOk;
  }
  return failure(rc, api);
}

// Calls entry point `name` of api_ and names it in the Result: `#name` is the
// base name ("cuMemAlloc"), never cuda.h's renamed one ("cuMemAlloc_v2").
#define TANDEM_CU(name, ...) check(api_.name(__VA_ARGS__), #name)

// Returns early from the enclosing function when `expr` is not ok.
#define TANDEM_TRY(expr)                                                     \
  do {                                                                       \
    if (const Result tandem_try_ = (expr); !tandem_try_.ok()) [[unlikely]] { \
      return tandem_try_;                                                    \
    }                                                                        \
  } while (false)

// The first line of a text file, or "" when it cannot be read.
std::string first_line_of(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "13.0 (580.159.04)", or "13.0" when the kernel module's version is unknown.
std::string driver_version_text(int cuda_version) {
  std::string text = cuda_version_text(cuda_version);
  const std::string module = kernel_module_version(first_line_of("/proc/driver/nvidia/version"));
  if (!module.empty()) {
    text += " (" + module + ")";
  }
  return text;
}

// --- the backend ------------------------------------------------------------------

class CudaBackend final : public Backend {
 public:
  CudaBackend(const CudaApi& api, std::string version) : api_(api), version_(std::move(version)) {}

  // Deliberately no driver calls (see "Process exit" above).
  ~CudaBackend() override = default;

  [[nodiscard]] std::string_view name() const noexcept override {
    return backend_kind_name(BackendKind::cuda);
  }
  [[nodiscard]] std::string driver_version() const override { return version_; }
  [[nodiscard]] std::string describe(const Result& r) const override;

  // --- devices and contexts ---
  Result device_count(int& out) noexcept override { return TANDEM_CU(cuDeviceGetCount, &out); }
  Result device_info(int ordinal, DeviceInfo& out) noexcept override;
  Result primary_context_retain(int ordinal, ContextHandle& out) noexcept override;
  Result primary_context_release(int ordinal) noexcept override;
  Result context_create(int ordinal, ContextHandle& out) noexcept override;
  Result context_destroy(ContextHandle ctx) noexcept override;
  Result context_device(ContextHandle ctx, int& ordinal) noexcept override {
    TANDEM_TRY(bind_checked(ctx));
    return current_ordinal(ordinal);
  }

  // --- peer access ---
  Result device_can_access_peer(int ordinal, int peer, bool& out) noexcept override;
  Result context_enable_peer_access(ContextHandle ctx, ContextHandle peer) noexcept override;
  Result pool_grant_access(ContextHandle ctx, PoolHandle p, int peer) noexcept override;

  // --- streams ---
  Result stream_create(ContextHandle ctx, StreamHandle& out) noexcept override {
    TANDEM_TRY(bind_checked(ctx));
    CUstream stream = nullptr;
    TANDEM_TRY(TANDEM_CU(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING));
    out.raw = stream;
    return kOk;
  }
  Result stream_destroy(ContextHandle ctx, StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuStreamDestroy, cu(s));  // returns at once; pending work still runs
  }
  Result stream_synchronize(ContextHandle ctx, StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuStreamSynchronize, cu(s));
  }
  Result stream_query(ContextHandle ctx, StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuStreamQuery, cu(s));
  }

  // --- events ---
  Result event_create(ContextHandle ctx, EventHandle& out) noexcept override {
    TANDEM_TRY(bind_checked(ctx));
    CUevent event = nullptr;
    TANDEM_TRY(TANDEM_CU(cuEventCreate, &event, CU_EVENT_DISABLE_TIMING));
    out.raw = event;
    return kOk;
  }
  Result event_destroy(ContextHandle ctx, EventHandle e) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuEventDestroy, cu(e));
  }
  Result event_record(ContextHandle ctx, EventHandle e, StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuEventRecord, cu(e), cu(s));
  }
  Result event_query(ContextHandle ctx, EventHandle e) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuEventQuery, cu(e));
  }
  Result event_synchronize(ContextHandle ctx, EventHandle e) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuEventSynchronize, cu(e));
  }
  Result stream_wait_event(ContextHandle ctx, StreamHandle s, EventHandle e) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuStreamWaitEvent, cu(s), cu(e), 0U);
  }

  // --- memory ---
  Result pool_create(ContextHandle ctx, PoolHandle& out) noexcept override;
  Result pool_destroy(ContextHandle ctx, PoolHandle p) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuMemPoolDestroy, cu(p));
  }
  Result pool_trim(ContextHandle ctx, PoolHandle p, std::size_t keep_bytes) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuMemPoolTrimTo, cu(p), keep_bytes);
  }
  Result mem_alloc_async(ContextHandle ctx, PoolHandle p, std::size_t bytes, StreamHandle s,
                         DevicePtr& out) noexcept override {
    TANDEM_TRY(bind(ctx));
    CUdeviceptr ptr = 0;
    TANDEM_TRY(TANDEM_CU(cuMemAllocFromPoolAsync, &ptr, bytes, cu(p), cu(s)));
    out = ptr;
    return kOk;
  }
  Result mem_free_async(ContextHandle ctx, DevicePtr ptr, StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuMemFreeAsync, ptr, cu(s));
  }
  // The pool's own reuse on one stream without its two calls: nothing
  // reaches the driver, stream order alone keeps the old work first.
  Result mem_reuse_async(ContextHandle, PoolHandle, DevicePtr, std::size_t, StreamHandle) noexcept override {
    return kOk;
  }
  Result mem_alloc(ContextHandle ctx, std::size_t bytes, DevicePtr& out) noexcept override {
    TANDEM_TRY(bind_checked(ctx));
    CUdeviceptr ptr = 0;
    TANDEM_TRY(TANDEM_CU(cuMemAlloc, &ptr, bytes));
    out = ptr;
    return kOk;
  }
  Result mem_free(ContextHandle ctx, DevicePtr ptr) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuMemFree, ptr);
  }
  Result mem_info(ContextHandle ctx, std::size_t& free_bytes, std::size_t& total_bytes) noexcept override {
    TANDEM_TRY(bind_checked(ctx));
    return TANDEM_CU(cuMemGetInfo, &free_bytes, &total_bytes);
  }

  // --- transfers ---
  Result memcpy_async(ContextHandle ctx, DevicePtr dst, DevicePtr src, std::size_t bytes,
                      StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    // cuMemcpyAsync infers the direction from unified addressing, so it also
    // copies between devices and from memory another context allocated.
    return TANDEM_CU(cuMemcpyAsync, dst, src, bytes, cu(s));
  }
  Result upload_async(ContextHandle ctx, DevicePtr dst, const void* src, std::size_t bytes,
                      StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuMemcpyHtoDAsync, dst, src, bytes, cu(s));
  }
  Result download_async(ContextHandle ctx, void* dst, DevicePtr src, std::size_t bytes,
                        StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuMemcpyDtoHAsync, dst, src, bytes, cu(s));
  }
  Result memset8_async(ContextHandle ctx, DevicePtr dst, std::uint8_t value, std::size_t count,
                       StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuMemsetD8Async, dst, value, count, cu(s));
  }

  // --- kernels ---
  Result kernel_function(ContextHandle ctx, const KernelSymbol& symbol,
                         FunctionHandle& out) noexcept override;

  // The hot path: one thread-local compare, the driver call, no allocation,
  // no lock. `symbol` and `accesses` are for the simulated device.
  Result launch(const LaunchRequest& r) noexcept override {
    TANDEM_TRY(bind(r.context));
    const LaunchDims& d = r.dims;
    return TANDEM_CU(cuLaunchKernel, cu(r.function), d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y,
                     d.block.z, d.shared_bytes, cu(r.stream), r.params, nullptr);
  }

  // --- graphs ---
  Result capture_begin(ContextHandle ctx, StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuStreamBeginCapture, cu(s), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  }
  Result capture_end(ContextHandle ctx, StreamHandle s, GraphHandle& out) noexcept override;
  [[nodiscard]] bool reads_declared_accesses() const noexcept override { return false; }
  Result graph_launch(ContextHandle ctx, GraphHandle g, StreamHandle s) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuGraphLaunch, cu(g), cu(s));
  }
  Result graph_destroy(ContextHandle ctx, GraphHandle g) noexcept override {
    TANDEM_TRY(bind(ctx));
    return TANDEM_CU(cuGraphExecDestroy, cu(g));
  }

 private:
  // Makes `h` current, trusting the thread's cache (calls on handles).
  Result bind(ContextHandle h) noexcept {
    if (t_bound.ctx == cu(h) && t_bound.epoch == g_context_epoch.load(std::memory_order_acquire)) [[likely]] {
      return kOk;
    }
    return rebind(cu(h));
  }
  // Makes `h` current, asking the driver what is (calls whose only target is
  // the current context).
  Result bind_checked(ContextHandle h) noexcept;
  Result rebind(CUcontext ctx) noexcept;

  Result device_of(int ordinal, CUdevice& out) noexcept { return TANDEM_CU(cuDeviceGet, &out, ordinal); }
  Result ordinal_of(CUdevice device, int& out) noexcept;
  Result current_ordinal(int& out) noexcept;
  Result attribute(CUdevice device, CUdevice_attribute which, int& out) noexcept {
    return TANDEM_CU(cuDeviceGetAttribute, &out, which, device);
  }

  Result module_for(CUcontext ctx, const ModuleImage& image, CUmodule& out) noexcept;
  void forget_modules(CUcontext ctx) noexcept;  // caller holds mu_

  const CudaApi api_;
  const std::string version_;

  // Off the hot path: module loading and context bookkeeping.
  std::mutex mu_;
  // Modules loaded per (context, image); they die with their context, so
  // entries are dropped when tandem destroys or fully releases it.
  std::map<std::pair<CUcontext, const ModuleImage*>, CUmodule> modules_;
  std::map<int, CUcontext> primary_;  // ordinal -> its primary context, once retained
};

std::string CudaBackend::describe(const Result& r) const {
  const std::string api = r.api != nullptr && r.api[0] != '\0' ? r.api : "a driver call";
  if (r.ok()) {
    return api + " succeeded";
  }
  if (r.raw == kNoDeviceCode) {
    return api +
           " failed: the kernel's module has no device code (this tandem was built "
           "without the CUDA Toolkit, or the kernel for the simulated device only)";
  }
  if (r.raw == CUDA_SUCCESS) {  // a Result this backend did not make
    return api + " failed: " + status_name(r.status);
  }
  return api + " failed: " + error_text(api_, r.raw);
}

// --- peer access --------------------------------------------------------------------
// The three entry points are optional (cuda_api.hpp): a driver without them
// answers not_supported here instead of failing to load.

Result CudaBackend::device_can_access_peer(int ordinal, int peer, bool& out) noexcept {
  out = false;
  if (api_.cuDeviceCanAccessPeer == nullptr) {
    return Result{Status::not_supported, CUDA_ERROR_NOT_SUPPORTED, "cuDeviceCanAccessPeer"};
  }
  if (ordinal == peer) {
    return kOk;  // the driver answers 0 too; no call needed
  }
  CUdevice dev = 0;
  CUdevice peer_dev = 0;
  TANDEM_TRY(device_of(ordinal, dev));
  TANDEM_TRY(device_of(peer, peer_dev));
  int can = 0;
  TANDEM_TRY(TANDEM_CU(cuDeviceCanAccessPeer, &can, dev, peer_dev));
  out = can != 0;
  return kOk;
}

Result CudaBackend::context_enable_peer_access(ContextHandle ctx, ContextHandle peer) noexcept {
  if (api_.cuCtxEnablePeerAccess == nullptr) {
    return Result{Status::not_supported, CUDA_ERROR_NOT_SUPPORTED, "cuCtxEnablePeerAccess"};
  }
  TANDEM_TRY(bind_checked(ctx));
  const CUresult rc = api_.cuCtxEnablePeerAccess(cu(peer), 0U);
  // Enabling is idempotent for tandem: a second Context on the same primary
  // context, or another library, may have enabled it already.
  if (rc == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
    return kOk;
  }
  return check(rc, "cuCtxEnablePeerAccess");
}

Result CudaBackend::pool_grant_access(ContextHandle ctx, PoolHandle p, int peer) noexcept {
  if (api_.cuMemPoolSetAccess == nullptr) {
    return Result{Status::not_supported, CUDA_ERROR_NOT_SUPPORTED, "cuMemPoolSetAccess"};
  }
  TANDEM_TRY(bind(ctx));
  CUmemAccessDesc desc{};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = peer;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return TANDEM_CU(cuMemPoolSetAccess, cu(p), &desc, 1);
}

// --- contexts ---------------------------------------------------------------------

Result CudaBackend::rebind(CUcontext ctx) noexcept {
  if (ctx == nullptr) {
    // cuCtxSetCurrent(nullptr) would unbind the thread rather than fail.
    return Result{Status::invalid_handle, CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent"};
  }
  // Read before the switch: a context destroyed meanwhile leaves us with an
  // older epoch, which merely forces another rebind next time.
  const std::uint64_t epoch = g_context_epoch.load(std::memory_order_acquire);
  TANDEM_TRY(TANDEM_CU(cuCtxSetCurrent, ctx));
  t_bound = BoundContext{ctx, epoch};
  return kOk;
}

Result CudaBackend::bind_checked(ContextHandle h) noexcept {
  const std::uint64_t epoch = g_context_epoch.load(std::memory_order_acquire);
  CUcontext current = nullptr;
  if (cu(h) != nullptr && api_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == cu(h)) {
    t_bound = BoundContext{current, epoch};
    return kOk;
  }
  return rebind(cu(h));
}

Result CudaBackend::ordinal_of(CUdevice device, int& out) noexcept {
  // CUdevice is an opaque handle: in practice equal to the ordinal, but the
  // API only promises cuDeviceGet's mapping, so search it.
  int count = 0;
  TANDEM_TRY(TANDEM_CU(cuDeviceGetCount, &count));
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice candidate = 0;
    if (api_.cuDeviceGet(&candidate, ordinal) == CUDA_SUCCESS && candidate == device) {
      out = ordinal;
      return kOk;
    }
  }
  return Result{Status::invalid_handle, CUDA_ERROR_INVALID_DEVICE, "cuCtxGetDevice"};
}

Result CudaBackend::current_ordinal(int& out) noexcept {
  CUdevice device = 0;
  TANDEM_TRY(TANDEM_CU(cuCtxGetDevice, &device));
  return ordinal_of(device, out);
}

Result CudaBackend::device_info(int ordinal, DeviceInfo& out) noexcept {
  CUdevice device = 0;
  TANDEM_TRY(device_of(ordinal, device));
  DeviceInfo info;
  info.ordinal = ordinal;

  char name[256] = {};
  TANDEM_TRY(TANDEM_CU(cuDeviceGetName, name, static_cast<int>(sizeof name), device));
  info.name = name;

  CUuuid uuid{};
  TANDEM_TRY(TANDEM_CU(cuDeviceGetUuid, &uuid, device));
  info.uuid = gpu_uuid_text(uuid);

  char bus_id[32] = {};  // "0000:00:00.0" needs 13
  TANDEM_TRY(TANDEM_CU(cuDeviceGetPCIBusId, bus_id, static_cast<int>(sizeof bus_id), device));
  info.pci_bus_id = bus_id;

  TANDEM_TRY(attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, info.cc_major));
  TANDEM_TRY(attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, info.cc_minor));
  TANDEM_TRY(attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, info.multiprocessors));
  TANDEM_TRY(TANDEM_CU(cuDeviceTotalMem, &info.total_bytes, device));

  out = std::move(info);
  return kOk;
}

Result CudaBackend::primary_context_retain(int ordinal, ContextHandle& out) noexcept {
  CUdevice device = 0;
  TANDEM_TRY(device_of(ordinal, device));
  CUcontext ctx = nullptr;
  TANDEM_TRY(TANDEM_CU(cuDevicePrimaryCtxRetain, &ctx, device));
  {
    const std::lock_guard lock(mu_);
    primary_[ordinal] = ctx;
  }
  out.raw = ctx;
  return kOk;
}

Result CudaBackend::primary_context_release(int ordinal) noexcept {
  CUdevice device = 0;
  TANDEM_TRY(device_of(ordinal, device));
  // Under mu_ so that "released to zero, drop its modules" cannot interleave
  // with another thread retaining it again and loading a module.
  const std::lock_guard lock(mu_);
  TANDEM_TRY(TANDEM_CU(cuDevicePrimaryCtxRelease, device));
  unsigned int flags = 0;
  int active = 0;
  if (api_.cuDevicePrimaryCtxGetState(device, &flags, &active) == CUDA_SUCCESS && active != 0) {
    return kOk;  // other users still hold it: handles and modules stay valid
  }
  if (const auto it = primary_.find(ordinal); it != primary_.end()) {
    forget_modules(it->second);
  }
  contexts_changed();
  return kOk;
}

Result CudaBackend::context_create(int ordinal, ContextHandle& out) noexcept {
  CUdevice device = 0;
  TANDEM_TRY(device_of(ordinal, device));
  // CUDA 13's cuCtxCreate (cuCtxCreate_v4) takes creation parameters; all
  // zero means no execution affinity and no CIG: a plain context, as the
  // three-argument cuCtxCreate of earlier versions made.
  CUctxCreateParams params{};
  CUcontext ctx = nullptr;
  TANDEM_TRY(TANDEM_CU(cuCtxCreate, &ctx, &params, 0U, device));
  // cuCtxCreate also pushes the new context onto this thread's stack. Pop
  // it: creating a context must not change what is current here (nor
  // invalidate the thread's cached binding).
  CUcontext popped = nullptr;
  if (const Result r = TANDEM_CU(cuCtxPopCurrent, &popped); !r.ok()) {
    (void)api_.cuCtxDestroy(ctx);
    return r;
  }
  out.raw = ctx;
  return kOk;
}

Result CudaBackend::context_destroy(ContextHandle ctx) noexcept {
  {
    const std::lock_guard lock(mu_);
    forget_modules(cu(ctx));
  }
  const Result r = TANDEM_CU(cuCtxDestroy, cu(ctx));
  contexts_changed();  // even on failure: whether it is gone is unclear, rebinding is cheap
  return r;
}

// --- memory ---------------------------------------------------------------------

Result CudaBackend::pool_create(ContextHandle ctx, PoolHandle& out) noexcept {
  TANDEM_TRY(bind_checked(ctx));
  int ordinal = 0;
  TANDEM_TRY(current_ordinal(ordinal));

  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = ordinal;
  CUmemoryPool pool = nullptr;
  TANDEM_TRY(TANDEM_CU(cuMemPoolCreate, &pool, &props));

  // Keep freed memory cached in the pool (0.6 us per alloc/free pair instead
  // of 60-80 us for cuMemAlloc/cuMemFree) until pool_trim gives it back.
  cuuint64_t release_threshold = UINT64_MAX;
  if (const Result r =
          TANDEM_CU(cuMemPoolSetAttribute, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &release_threshold);
      !r.ok()) {
    (void)api_.cuMemPoolDestroy(pool);
    return r;
  }
  out.raw = pool;
  return kOk;
}

// --- kernels ----------------------------------------------------------------------

Result CudaBackend::module_for(CUcontext ctx, const ModuleImage& image, CUmodule& out) noexcept {
  const std::lock_guard lock(mu_);
  const auto key = std::make_pair(ctx, &image);
  if (const auto it = modules_.find(key); it != modules_.end()) {
    out = it->second;
    return kOk;
  }
  CUmodule module = nullptr;
  TANDEM_TRY(TANDEM_CU(cuModuleLoadData, &module, image.data));  // into the current context
  modules_.emplace(key, module);
  out = module;
  return kOk;
}

void CudaBackend::forget_modules(CUcontext ctx) noexcept {
  for (auto it = modules_.begin(); it != modules_.end();) {
    it = it->first.first == ctx ? modules_.erase(it) : std::next(it);
  }
}

Result CudaBackend::kernel_function(ContextHandle ctx, const KernelSymbol& symbol,
                                    FunctionHandle& out) noexcept {
  if (symbol.module == nullptr || symbol.module->data == nullptr) {
    return Result{Status::not_supported, kNoDeviceCode, "kernel_function"};
  }
  TANDEM_TRY(bind_checked(ctx));
  CUmodule module = nullptr;
  TANDEM_TRY(module_for(cu(ctx), *symbol.module, module));
  CUfunction function = nullptr;
  TANDEM_TRY(TANDEM_CU(cuModuleGetFunction, &function, module, symbol.name));
  out.raw = function;
  return kOk;
}

// --- graphs -----------------------------------------------------------------------

Result CudaBackend::capture_end(ContextHandle ctx, StreamHandle s, GraphHandle& out) noexcept {
  TANDEM_TRY(bind(ctx));
  CUgraph graph = nullptr;
  if (const Result r = TANDEM_CU(cuStreamEndCapture, cu(s), &graph); !r.ok()) {
    if (graph != nullptr) {
      (void)api_.cuGraphDestroy(graph);
    }
    return r;
  }
  CUgraphExec exec = nullptr;
  const Result r = TANDEM_CU(cuGraphInstantiateWithFlags, &exec, graph, 0ULL);
  // The executable graph is independent of its template: drop the template
  // either way. A failure here would only leak it, so it is not reported.
  (void)api_.cuGraphDestroy(graph);
  if (r.ok()) {
    out.raw = exec;
  }
  return r;
}

#undef TANDEM_TRY
#undef TANDEM_CU

}  // namespace
}  // namespace cuda

std::unique_ptr<Backend> load_cuda_backend(std::string& why) {
  cuda::CudaApi api;
  if (!cuda::load_cuda_api(api, why)) {
    return nullptr;
  }
  if (const CUresult rc = api.cuInit(0); rc != CUDA_SUCCESS) {
    why = "cuInit failed: " + cuda::error_text(api, rc);
    return nullptr;
  }
  int count = 0;
  if (const CUresult rc = api.cuDeviceGetCount(&count); rc != CUDA_SUCCESS) {
    why = "cuDeviceGetCount failed: " + cuda::error_text(api, rc);
    return nullptr;
  }
  if (count == 0) {
    why = "cuDeviceGetCount found no CUDA device";
    return nullptr;
  }
  int version = 0;
  if (const CUresult rc = api.cuDriverGetVersion(&version); rc != CUDA_SUCCESS) {
    why = "cuDriverGetVersion failed: " + cuda::error_text(api, rc);
    return nullptr;
  }
  return std::make_unique<cuda::CudaBackend>(api, cuda::driver_version_text(version));
}

}  // namespace tandem::driver
