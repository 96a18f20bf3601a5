// SPDX-License-Identifier: Apache-2.0
// A fake libcuda.so.1 for testing the CUDA backend's plumbing on machines
// without a GPU (cuda_fake_driver_test).
//
// It exports cuGetProcAddress_v2 and hands out host implementations of every
// entry point in TANDEM_CUDA_ENTRY_POINTS, each checked at compile time
// against the PFN type the backend casts it to. "Device" memory is host
// memory and work runs at enqueue, so transfers can be checked.
//
// It is stricter than the real driver where that makes the backend's context
// binding observable: every call on a stream, event, module or function
// fails with CUDA_ERROR_INVALID_CONTEXT unless the object's context is the
// calling thread's current one. And cuCtxCreate reuses the address of the
// most recently destroyed context, so a stale "already current" cache shows.
//
// Test hooks: the extern "C" fake_cuda_* functions at the bottom.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda_api.hpp"

namespace fake {
namespace {

struct Context {
  bool alive = true;
};
struct Stream {
  Context* ctx = nullptr;
  bool capturing = false;
  bool invalidated = false;
  std::vector<std::function<void()>> captured{};
};
struct Event {
  Context* ctx = nullptr;
};
struct Module {
  Context* ctx = nullptr;
};
struct Function {
  Context* ctx = nullptr;
};
struct Graph {
  std::vector<std::function<void()>> work;
};

constexpr std::size_t kTotalBytes = std::size_t{80} << 30U;

std::mutex g_mu;  // guards everything below that is not thread_local
std::map<std::string, long> g_calls;
std::map<std::string, int> g_requested_version;
cuuint64_t g_requested_flags = 0;
cuuint64_t g_release_threshold = 0;
std::map<CUdeviceptr, std::size_t> g_allocations;
std::size_t g_allocated = 0;
Context g_primary{false};
int g_primary_refs = 0;
Context* g_graveyard = nullptr;  // the next cuCtxCreate reuses this address

thread_local std::vector<Context*> t_stack;  // this thread's context stack

// Every object the fake hands out lives here until the process ends (so
// leak checkers see no leak, whatever the backend keeps or drops).
std::vector<std::shared_ptr<void>> g_arena;

template <class T, class... Args>
T* make(Args&&... args) {
  auto object = std::make_shared<T>(T{std::forward<Args>(args)...});
  const std::lock_guard lock(g_mu);
  g_arena.push_back(object);
  return object.get();
}

void count(const char* name) {
  const std::lock_guard lock(g_mu);
  ++g_calls[name];
}

Context* current() { return t_stack.empty() ? nullptr : t_stack.back(); }

CUresult need_current() {
  const Context* ctx = current();
  return ctx != nullptr && ctx->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult need_current_is(const Context* owner) {
  return owner != nullptr && current() == owner && owner->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

template <class T, class H>
T* obj(H handle) {
  return reinterpret_cast<T*>(handle);
}
template <class H, class T>
H handle(T* object) {
  return reinterpret_cast<H>(object);
}

// "Device" pointers are host pointers.
void* host(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));  // NOLINT(performance-no-int-to-ptr)
}

// Runs `op` now, or records it while the stream is capturing.
CUresult enqueue(CUstream s, std::function<void()> op) {
  Stream* stream = obj<Stream>(s);
  if (const CUresult rc = need_current_is(stream->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (stream->capturing) {
    stream->captured.push_back(std::move(op));
  } else {
    op();
  }
  return CUDA_SUCCESS;
}

// Sync calls on a capturing stream invalidate the capture, as in CUDA.
CUresult sync_call(CUstream s) {
  Stream* stream = obj<Stream>(s);
  if (const CUresult rc = need_current_is(stream->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (stream->capturing) {
    stream->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return CUDA_SUCCESS;
}

}  // namespace

// --- entry points (names go through cuda.h's renaming, like the backend's) ---

CUresult cuGetErrorName(CUresult error, const char** out) {
  switch (error) {
    case CUDA_SUCCESS:
      *out = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *out = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *out = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_DEVICE:
      *out = "CUDA_ERROR_INVALID_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT:
      *out = "CUDA_ERROR_INVALID_CONTEXT";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND:
      *out = "CUDA_ERROR_NOT_FOUND";
      return CUDA_SUCCESS;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
      *out = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
      *out = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
      return CUDA_SUCCESS;
    default:
      *out = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult cuGetErrorString(CUresult error, const char** out) {
  if (error == CUDA_ERROR_OUT_OF_MEMORY) {
    *out = "out of memory";
    return CUDA_SUCCESS;
  }
  const char* name = nullptr;
  const CUresult rc = fake::cuGetErrorName(error, &name);
  *out = rc == CUDA_SUCCESS ? "fake description" : nullptr;
  return rc;
}
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "Fake H200", static_cast<std::size_t>(len));
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice) {
  for (int i = 0; i < 16; ++i) {
    uuid->bytes[i] = static_cast<char>(0xf0 + i);
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetPCIBusId(char* bus, int len, CUdevice) {
  std::strncpy(bus, "0000:1B:00.0", static_cast<std::size_t>(len));
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute which, CUdevice) {
  switch (which) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = 9;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 132;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult cuDeviceTotalMem(size_t* bytes, CUdevice) {
  *bytes = kTotalBytes;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
  const std::lock_guard lock(g_mu);
  ++g_primary_refs;
  g_primary.alive = true;
  *ctx = handle<CUcontext>(&g_primary);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) {
  const std::lock_guard lock(g_mu);
  if (g_primary_refs == 0) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (--g_primary_refs == 0) {
    g_primary.alive = false;
  }
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxGetState(CUdevice, unsigned int* flags, int* active) {
  const std::lock_guard lock(g_mu);
  *flags = 0;
  *active = g_primary_refs > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}
CUresult cuCtxCreate(CUcontext* out, CUctxCreateParams* params, unsigned int, CUdevice) {
  if (params == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Context* ctx = nullptr;
  {
    const std::lock_guard lock(g_mu);
    ctx = g_graveyard;
    g_graveyard = nullptr;
  }
  if (ctx == nullptr) {
    ctx = make<Context>();
  }
  ctx->alive = true;
  t_stack.push_back(ctx);  // like CUDA: the new context becomes current
  *out = handle<CUcontext>(ctx);
  return CUDA_SUCCESS;
}
CUresult cuCtxDestroy(CUcontext h) {
  Context* ctx = obj<Context>(h);
  if (ctx == nullptr || !ctx->alive) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (current() == ctx) {
    t_stack.pop_back();  // like CUDA: popped if current here
  }
  const std::lock_guard lock(g_mu);
  ctx->alive = false;
  g_graveyard = ctx;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext h) {
  count("cuCtxSetCurrent");
  if (t_stack.empty()) {
    t_stack.push_back(obj<Context>(h));
  } else {
    t_stack.back() = obj<Context>(h);
  }
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext* out) {
  count("cuCtxGetCurrent");
  *out = handle<CUcontext>(current());
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent(CUcontext* out) {
  if (t_stack.empty()) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  *out = handle<CUcontext>(t_stack.back());
  t_stack.pop_back();
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice* device) {
  if (const CUresult rc = need_current(); rc != CUDA_SUCCESS) {
    return rc;
  }
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream* out, unsigned int flags) {
  if (const CUresult rc = need_current(); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (flags != CU_STREAM_NON_BLOCKING) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = handle<CUstream>(make<Stream>(current()));
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) {
  if (const CUresult rc = need_current_is(obj<Stream>(s)->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) { return sync_call(s); }
CUresult cuStreamQuery(CUstream s) { return sync_call(s); }
CUresult cuStreamWaitEvent(CUstream s, CUevent, unsigned int) {
  return enqueue(s, [] {});
}

CUresult cuEventCreate(CUevent* out, unsigned int flags) {
  if (const CUresult rc = need_current(); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (flags != CU_EVENT_DISABLE_TIMING) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = handle<CUevent>(make<Event>(current()));
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
  if (const CUresult rc = need_current_is(obj<Event>(e)->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  if (const CUresult rc = need_current_is(obj<Event>(e)->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  return enqueue(s, [] {});
}
CUresult cuEventQuery(CUevent e) { return need_current_is(obj<Event>(e)->ctx); }
CUresult cuEventSynchronize(CUevent e) { return need_current_is(obj<Event>(e)->ctx); }

CUresult cuMemPoolCreate(CUmemoryPool* out, const CUmemPoolProps* props) {
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = handle<CUmemoryPool>(make<int>(0));
  return CUDA_SUCCESS;
}
CUresult cuMemPoolDestroy(CUmemoryPool) { return CUDA_SUCCESS; }
CUresult cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute attr, void* value) {
  if (attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::lock_guard lock(g_mu);
  g_release_threshold = *static_cast<cuuint64_t*>(value);
  return CUDA_SUCCESS;
}
CUresult cuMemPoolTrimTo(CUmemoryPool, size_t) { return CUDA_SUCCESS; }

CUresult cuMemAlloc(CUdeviceptr* out, size_t bytes) {
  if (const CUresult rc = need_current(); rc != CUDA_SUCCESS) {
    return rc;
  }
  const std::lock_guard lock(g_mu);
  if (bytes > kTotalBytes - g_allocated) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  void* p = std::malloc(bytes);
  if (p == nullptr) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
  g_allocations[*out] = bytes;
  g_allocated += bytes;
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr ptr) {
  const std::lock_guard lock(g_mu);
  const auto it = g_allocations.find(ptr);
  if (it == g_allocations.end()) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  g_allocated -= it->second;
  g_allocations.erase(it);
  std::free(host(ptr));
  return CUDA_SUCCESS;
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* out, size_t bytes, CUmemoryPool, CUstream s) {
  if (const CUresult rc = need_current_is(obj<Stream>(s)->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  return fake::cuMemAlloc(out, bytes);
}
CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream s) {
  if (const CUresult rc = need_current_is(obj<Stream>(s)->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  return fake::cuMemFree(ptr);
}
CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (const CUresult rc = need_current(); rc != CUDA_SUCCESS) {
    return rc;
  }
  const std::lock_guard lock(g_mu);
  *free_bytes = kTotalBytes - g_allocated;
  *total_bytes = kTotalBytes;
  return CUDA_SUCCESS;
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  return enqueue(s, [=] { std::memcpy(host(dst), host(src), bytes); });
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream s) {
  return enqueue(s, [=] { std::memcpy(host(dst), src, bytes); });
}
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes, CUstream s) {
  return enqueue(s, [=] { std::memcpy(dst, host(src), bytes); });
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream s) {
  return enqueue(s, [=] { std::memset(host(dst), value, count); });
}

CUresult cuModuleLoadData(CUmodule* out, const void* image) {
  count("cuModuleLoadData");
  if (const CUresult rc = need_current(); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (image == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = handle<CUmodule>(make<Module>(current()));
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction* out, CUmodule m, const char* name) {
  if (const CUresult rc = need_current_is(obj<Module>(m)->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (std::strcmp(name, "missing") == 0) {
    return CUDA_ERROR_NOT_FOUND;
  }
  *out = handle<CUfunction>(make<Function>(obj<Module>(m)->ctx));
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int, unsigned int, unsigned int bx,
                        unsigned int, unsigned int, unsigned int, CUstream s, void**, void**) {
  count("cuLaunchKernel");
  if (const CUresult rc = need_current_is(obj<Function>(f)->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (gx == 0 || bx == 0 || bx > 1024) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return enqueue(s, [] {});
}

CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  if (mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult rc = sync_call(s); rc != CUDA_SUCCESS) {
    return rc;
  }
  Stream* stream = obj<Stream>(s);
  stream->capturing = true;
  stream->invalidated = false;
  stream->captured.clear();
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph* out) {
  Stream* stream = obj<Stream>(s);
  if (const CUresult rc = need_current_is(stream->ctx); rc != CUDA_SUCCESS) {
    return rc;
  }
  if (!stream->capturing) {
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  stream->capturing = false;
  if (stream->invalidated) {
    *out = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *out = handle<CUgraph>(make<Graph>(std::move(stream->captured)));
  stream->captured.clear();
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* out, CUgraph g, unsigned long long) {
  *out = handle<CUgraphExec>(make<Graph>(obj<Graph>(g)->work));
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph) {
  count("cuGraphDestroy");
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec g, CUstream s) {
  const Graph* graph = obj<Graph>(g);
  return enqueue(s, [graph] {
    for (const auto& op : graph->work) {
      op();
    }
  });
}
CUresult cuGraphExecDestroy(CUgraphExec) { return CUDA_SUCCESS; }

namespace {

struct Entry {
  const char* name;
  int abi;
  void* fn;
};
// The static_cast makes each fake's signature match the PFN the backend uses.
#define TANDEM_FAKE_ENTRY(name, abi) \
  Entry{#name, abi, reinterpret_cast<void*>(static_cast<PFN_##name##_v##abi>(&fake::name))},
const Entry kEntries[] = {TANDEM_CUDA_ENTRY_POINTS(TANDEM_FAKE_ENTRY)};
#undef TANDEM_FAKE_ENTRY

}  // namespace
}  // namespace fake

extern "C" {

// The driver's real export name (cuda.h maps cuGetProcAddress to it).
__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn,
                                                                    int cuda_version, cuuint64_t flags,
                                                                    CUdriverProcAddressQueryResult* status) {
  {
    const std::lock_guard lock(fake::g_mu);
    fake::g_requested_version[symbol] = cuda_version;
    fake::g_requested_flags |= flags;
  }
  *pfn = nullptr;
  *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (cuda_version > 13000) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (const fake::Entry& e : fake::kEntries) {
    if (std::strcmp(e.name, symbol) != 0) {
      continue;
    }
    if (cuda_version < e.abi) {
      *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return CUDA_SUCCESS;
    }
    *pfn = e.fn;
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  return CUDA_SUCCESS;
}

// --- test hooks ---

__attribute__((visibility("default"))) long fake_cuda_calls(const char* name) {
  const std::lock_guard lock(fake::g_mu);
  const auto it = fake::g_calls.find(name);
  return it == fake::g_calls.end() ? 0 : it->second;
}
__attribute__((visibility("default"))) int fake_cuda_requested_version(const char* name) {
  const std::lock_guard lock(fake::g_mu);
  const auto it = fake::g_requested_version.find(name);
  return it == fake::g_requested_version.end() ? -1 : it->second;
}
__attribute__((visibility("default"))) unsigned long long fake_cuda_requested_flags() {
  const std::lock_guard lock(fake::g_mu);
  return fake::g_requested_flags;
}
__attribute__((visibility("default"))) unsigned long long fake_cuda_release_threshold() {
  const std::lock_guard lock(fake::g_mu);
  return fake::g_release_threshold;
}
// What another library would do: switch this thread's current context.
__attribute__((visibility("default"))) void fake_cuda_set_current(void* ctx) {
  if (fake::t_stack.empty()) {
    fake::t_stack.push_back(static_cast<fake::Context*>(ctx));
  } else {
    fake::t_stack.back() = static_cast<fake::Context*>(ctx);
  }
}
__attribute__((visibility("default"))) void* fake_cuda_current() { return fake::current(); }

}  // extern "C"
