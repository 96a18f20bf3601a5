// SPDX-License-Identifier: Apache-2.0
// raw_driver.hpp — the CUDA driver entry points the raw baselines call,
// straight from libcuda.
//
// They are resolved the way the cuda backend resolves its own (base name +
// ABI version through cuGetProcAddress), so a raw figure and a tracked
// figure reach the very same driver function. No cuda.h: the benchmark
// binary builds, and reports why it skips, where no toolkit or driver is.
#pragma once

#include <cstddef>
#include <string>

namespace tandem_bench {

struct RawDriver {
  using LaunchFn = int (*)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                           unsigned bz, unsigned shared, void* stream, void** params, void** extra);
  using CtxSetCurrentFn = int (*)(void* ctx);
  using EventRecordFn = int (*)(void* event, void* stream);
  using EventQueryFn = int (*)(void* event);
  using StreamSynchronizeFn = int (*)(void* stream);
  using AllocAsyncFn = int (*)(unsigned long long* ptr, std::size_t bytes, void* stream);
  using FreeAsyncFn = int (*)(unsigned long long ptr, void* stream);
  using AllocFromPoolAsyncFn = int (*)(unsigned long long* ptr, std::size_t bytes, void* pool, void* stream);
  using PoolCreateFn = int (*)(void** pool, const void* props);  // props: a CUmemPoolProps (RawPool)
  using PoolDestroyFn = int (*)(void* pool);
  using PoolSetAttributeFn = int (*)(void* pool, int attr, void* value);
  using PoolTrimToFn = int (*)(void* pool, std::size_t keep_bytes);
  using BeginCaptureFn = int (*)(void* stream, int mode);
  using EndCaptureFn = int (*)(void* stream, void** graph);
  using GraphInstantiateFn = int (*)(void** exec, void* graph, unsigned long long flags);
  using GraphLaunchFn = int (*)(void* exec, void* stream);
  using GraphDestroyFn = int (*)(void* graph);

  static constexpr int kCaptureThreadLocal = 1;  // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
  static constexpr int kNotReady = 600;          // CUDA_ERROR_NOT_READY
  static constexpr int kOutOfMemory = 2;         // CUDA_ERROR_OUT_OF_MEMORY

  LaunchFn launch = nullptr;
  CtxSetCurrentFn ctx_set_current = nullptr;
  EventRecordFn event_record = nullptr;
  EventQueryFn event_query = nullptr;
  StreamSynchronizeFn stream_synchronize = nullptr;
  AllocAsyncFn alloc_async = nullptr;
  FreeAsyncFn free_async = nullptr;
  // From a pool of one's own (the sustained and big-buffer loops: a pool
  // made like tandem's, driver::Backend::pool_create).
  AllocFromPoolAsyncFn alloc_from_pool_async = nullptr;
  // A pool of one's own, straight from libcuda (RawPool below).
  PoolCreateFn pool_create = nullptr;
  PoolDestroyFn pool_destroy = nullptr;
  PoolSetAttributeFn pool_set_attribute = nullptr;
  PoolTrimToFn pool_trim_to = nullptr;
  BeginCaptureFn begin_capture = nullptr;
  EndCaptureFn end_capture = nullptr;
  GraphInstantiateFn graph_instantiate = nullptr;
  GraphLaunchFn graph_launch = nullptr;
  GraphDestroyFn graph_destroy = nullptr;
  GraphDestroyFn graph_exec_destroy = nullptr;

  // Opens libcuda.so.1 and resolves every entry point. False, with `why`
  // naming the first one missing, when that is impossible.
  bool load(std::string& why);
};

// A stream-ordered pool made with tandem's settings, straight from libcuda:
// pinned device memory of `ordinal`, no export handles, release threshold
// UINT64_MAX (freed memory stays cached in the pool until trimmed), as the
// cuda backend's pool_create makes the runtime's pool. The raw allocation
// baselines allocate from it (cuMemAllocFromPoolAsync) so that both sides
// keep their freed memory: the device's default pool has threshold 0 and
// gives its memory back at every synchronize. Call it with the context
// current; trimmed and destroyed on destruction (the caller drains first).
class RawPool {
 public:
  RawPool(const RawDriver& d, int ordinal);
  RawPool(const RawPool&) = delete;
  RawPool& operator=(const RawPool&) = delete;
  ~RawPool();
  [[nodiscard]] void* raw() const { return pool_; }

 private:
  const RawDriver& d_;
  void* pool_ = nullptr;
};

}  // namespace tandem_bench
