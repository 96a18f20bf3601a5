// SPDX-License-Identifier: Apache-2.0
// The CUDA backend against a fake libcuda.so.1 (fake_libcuda.cpp): checks the
// plumbing that needs no GPU — entry-point versions, context binding and its
// cache, module caching, error texts — on every machine.
//
// The fake is dlopened by path before load_cuda_backend runs; the backend's
// dlopen("libcuda.so.1") then finds it by its soname.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tandem/driver/backend.hpp"

namespace tandem::driver {
namespace {

// The fake's test hooks.
struct Fake {
  long (*calls)(const char*) = nullptr;
  int (*requested_version)(const char*) = nullptr;
  unsigned long long (*requested_flags)() = nullptr;
  unsigned long long (*release_threshold)() = nullptr;
  void (*set_current)(void*) = nullptr;
  void* (*current)() = nullptr;
};

template <class Fn>
void bind_hook(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  ASSERT_NE(out, nullptr) << name << ": " << dlerror();  // NOLINT(concurrency-mt-unsafe)
}

class CudaFakeDriverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    void* lib = dlopen(TANDEM_FAKE_LIBCUDA, RTLD_NOW | RTLD_GLOBAL);
    ASSERT_NE(lib, nullptr) << dlerror();  // NOLINT(concurrency-mt-unsafe)
    bind_hook(lib, "fake_cuda_calls", fake_.calls);
    bind_hook(lib, "fake_cuda_requested_version", fake_.requested_version);
    bind_hook(lib, "fake_cuda_requested_flags", fake_.requested_flags);
    bind_hook(lib, "fake_cuda_release_threshold", fake_.release_threshold);
    bind_hook(lib, "fake_cuda_set_current", fake_.set_current);
    bind_hook(lib, "fake_cuda_current", fake_.current);
    std::string why;
    backend_ = load_cuda_backend(why);
    ASSERT_NE(backend_, nullptr) << why;
  }
  static void TearDownTestSuite() { backend_.reset(); }

  void SetUp() override {
    ASSERT_NE(backend_, nullptr);
    ASSERT_TRUE(b().primary_context_retain(0, ctx_).ok());
    stream_ = new_stream(ctx_);
  }
  void TearDown() override {
    if (backend_ == nullptr || !ctx_) {
      return;
    }
    EXPECT_TRUE(b().stream_destroy(ctx_, stream_).ok());
    EXPECT_TRUE(b().primary_context_release(0).ok());
  }

  static Backend& b() { return *backend_; }
  static std::string describe(const Result& r) { return backend_->describe(r); }
  static long calls(const char* name) { return fake_.calls(name); }

  static StreamHandle new_stream(ContextHandle ctx) {
    StreamHandle s;
    const Result r = b().stream_create(ctx, s);
    EXPECT_TRUE(r.ok()) << describe(r);
    return s;
  }
  static FunctionHandle function(ContextHandle ctx, const KernelSymbol& symbol) {
    FunctionHandle fn;
    const Result r = b().kernel_function(ctx, symbol, fn);
    EXPECT_TRUE(r.ok()) << describe(r);
    return fn;
  }
  static Result launch(ContextHandle ctx, FunctionHandle fn, StreamHandle s) {
    LaunchRequest request;
    request.context = ctx;
    request.function = fn;
    request.dims.grid = {1, 1, 1};
    request.dims.block = {32, 1, 1};
    request.stream = s;
    return b().launch(request);
  }

  static inline std::unique_ptr<Backend> backend_;
  static inline Fake fake_;
  ContextHandle ctx_;
  StreamHandle stream_;
};

#define EXPECT_CU_OK(expr)                              \
  do {                                                  \
    const ::tandem::driver::Result r_ = (expr);         \
    EXPECT_TRUE(r_.ok()) << #expr ": " << describe(r_); \
  } while (false)

const std::uint8_t kFatbin[16] = {};
const ModuleImage kModule{kFatbin, sizeof kFatbin, "fake.cu"};
const ModuleImage kOtherModule{kFatbin, sizeof kFatbin, "other.cu"};
const KernelSymbol kKernel{"kernel_a", &kModule, nullptr, nullptr, 0};
const KernelSymbol kSibling{"kernel_b", &kModule, nullptr, nullptr, 0};
const KernelSymbol kMissing{"missing", &kOtherModule, nullptr, nullptr, 0};

TEST_F(CudaFakeDriverTest, AsksForEachEntryPointAtItsHeaderAbi) {
  EXPECT_EQ(fake_.requested_version("cuCtxCreate"), 12050);    // cuCtxCreate_v4
  EXPECT_EQ(fake_.requested_version("cuCtxGetDevice"), 2000);  // not the 13.0 two-argument one
  EXPECT_EQ(fake_.requested_version("cuMemAlloc"), 3020);      // cuMemAlloc_v2
  EXPECT_EQ(fake_.requested_version("cuGraphInstantiateWithFlags"), 11040);
  EXPECT_EQ(fake_.requested_version("cuLaunchKernel"), 4000);
  EXPECT_EQ(fake_.requested_version("cuMemAlloc_v2"), -1) << "base names only";
  EXPECT_EQ(fake_.requested_flags(), 0ULL) << "CU_GET_PROC_ADDRESS_DEFAULT";
}

TEST_F(CudaFakeDriverTest, DescribesTheDevice) {
  EXPECT_EQ(b().name(), "cuda");
  EXPECT_EQ(b().driver_version().rfind("13.0", 0), 0U) << b().driver_version();
  DeviceInfo info;
  EXPECT_CU_OK(b().device_info(0, info));
  EXPECT_EQ(info.name, "Fake H200");
  EXPECT_EQ(info.uuid, "GPU-f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff");
  EXPECT_EQ(info.pci_bus_id, "0000:1B:00.0");
  EXPECT_EQ(info.cc_major, 9);
  EXPECT_EQ(info.multiprocessors, 132);
  const Result bad = b().device_info(1, info);
  EXPECT_EQ(bad.status, Status::invalid_value);
  EXPECT_EQ(describe(bad), "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE (101): fake description");
}

TEST_F(CudaFakeDriverTest, RepeatedLaunchesMakeNoContextCalls) {
  const FunctionHandle fn = function(ctx_, kKernel);
  ASSERT_TRUE(launch(ctx_, fn, stream_).ok());
  const long set_before = calls("cuCtxSetCurrent");
  const long get_before = calls("cuCtxGetCurrent");
  const long launches_before = calls("cuLaunchKernel");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(launch(ctx_, fn, stream_).ok());
  }
  EXPECT_EQ(calls("cuLaunchKernel") - launches_before, 1000);
  EXPECT_EQ(calls("cuCtxSetCurrent") - set_before, 0);
  EXPECT_EQ(calls("cuCtxGetCurrent") - get_before, 0);
}

TEST_F(CudaFakeDriverTest, SwitchingContextsRebindsEachTime) {
  ContextHandle other;
  ASSERT_TRUE(b().context_create(0, other).ok());
  const StreamHandle other_stream = new_stream(other);
  const FunctionHandle fn = function(ctx_, kKernel);
  const FunctionHandle other_fn = function(other, kKernel);
  const long set_before = calls("cuCtxSetCurrent");
  for (int i = 0; i < 10; ++i) {
    EXPECT_CU_OK(launch(ctx_, fn, stream_));
    EXPECT_CU_OK(launch(other, other_fn, other_stream));
  }
  EXPECT_EQ(calls("cuCtxSetCurrent") - set_before, 20);
  EXPECT_CU_OK(b().stream_destroy(other, other_stream));
  EXPECT_CU_OK(b().context_destroy(other));
}

TEST_F(CudaFakeDriverTest, ContextCreateLeavesTheCurrentContextAlone) {
  EXPECT_CU_OK(b().stream_query(ctx_, stream_));  // bind the primary context
  ContextHandle other;
  ASSERT_TRUE(b().context_create(0, other).ok());
  EXPECT_EQ(fake_.current(), ctx_.raw);
  const long set_before = calls("cuCtxSetCurrent");
  EXPECT_CU_OK(b().stream_query(ctx_, stream_));
  EXPECT_EQ(calls("cuCtxSetCurrent") - set_before, 0);
  EXPECT_CU_OK(b().context_destroy(other));
}

TEST_F(CudaFakeDriverTest, AReusedContextAddressIsNotMistakenForTheDeadOne) {
  ContextHandle first;
  ASSERT_TRUE(b().context_create(0, first).ok());
  const StreamHandle s = new_stream(first);  // this thread is now bound to `first`
  EXPECT_CU_OK(b().stream_destroy(first, s));
  EXPECT_CU_OK(b().context_destroy(first));

  ContextHandle second;
  ASSERT_TRUE(b().context_create(0, second).ok());
  ASSERT_EQ(second, first) << "the fake reuses the address";
  // Make a stream in `second` on another thread, so this thread's cache
  // still holds the old binding when it next uses the address.
  StreamHandle s2;
  std::thread([&] { EXPECT_CU_OK(b().stream_create(second, s2)); }).join();
  EXPECT_CU_OK(b().stream_query(second, s2));  // needs a rebind to succeed
  EXPECT_CU_OK(b().stream_destroy(second, s2));
  EXPECT_CU_OK(b().context_destroy(second));
}

TEST_F(CudaFakeDriverTest, AForeignContextSwitchIsRepaired) {
  const FunctionHandle fn = function(ctx_, kKernel);
  ASSERT_TRUE(launch(ctx_, fn, stream_).ok());
  fake_.set_current(nullptr);  // another library, without restoring

  // Calls that create in "the current context" ask the driver: never fooled.
  StreamHandle s;
  EXPECT_CU_OK(b().stream_create(ctx_, s));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));

  fake_.set_current(nullptr);
  // Calls on handles trust the cache: the first may fail (this fake insists
  // on the right current context), and that failure forgets the binding.
  const Result first = launch(ctx_, fn, stream_);
  EXPECT_EQ(first.status, Status::invalid_handle) << describe(first);
  EXPECT_CU_OK(launch(ctx_, fn, stream_));
}

TEST_F(CudaFakeDriverTest, ThreadsKeepTheirOwnBindings) {
  ContextHandle other;
  ASSERT_TRUE(b().context_create(0, other).ok());
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const ContextHandle mine = t % 2 == 0 ? ctx_ : other;
      const StreamHandle s = new_stream(mine);
      const FunctionHandle fn = function(mine, kKernel);
      for (int i = 0; i < 200; ++i) {
        EXPECT_CU_OK(launch(mine, fn, s));
      }
      EXPECT_CU_OK(b().stream_destroy(mine, s));
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_CU_OK(b().context_destroy(other));
}

TEST_F(CudaFakeDriverTest, ModulesLoadOncePerContextAndDieWithIt) {
  const long before = calls("cuModuleLoadData");
  function(ctx_, kKernel);
  function(ctx_, kSibling);  // same module
  function(ctx_, kKernel);
  const long primary_loads = calls("cuModuleLoadData") - before;
  EXPECT_LE(primary_loads, 1);  // 0 when an earlier test loaded it

  ContextHandle other;
  ASSERT_TRUE(b().context_create(0, other).ok());
  function(other, kKernel);
  function(other, kSibling);
  EXPECT_EQ(calls("cuModuleLoadData") - before, primary_loads + 1);
  EXPECT_CU_OK(b().context_destroy(other));

  // A new context at the same address must load its own copy.
  ContextHandle again;
  ASSERT_TRUE(b().context_create(0, again).ok());
  ASSERT_EQ(again, other);
  function(again, kKernel);
  EXPECT_EQ(calls("cuModuleLoadData") - before, primary_loads + 2);
  EXPECT_CU_OK(b().context_destroy(again));
}

TEST_F(CudaFakeDriverTest, ReleasingThePrimaryContextToZeroForgetsItsModules) {
  function(ctx_, kKernel);
  // The fixture holds the only reference: drop it, then retain afresh.
  ASSERT_TRUE(b().primary_context_release(0).ok());
  ASSERT_TRUE(b().primary_context_retain(0, ctx_).ok());
  const long before = calls("cuModuleLoadData");
  const StreamHandle s = new_stream(ctx_);
  const FunctionHandle fn = function(ctx_, kKernel);
  EXPECT_EQ(calls("cuModuleLoadData") - before, 1);
  EXPECT_CU_OK(launch(ctx_, fn, s));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
  stream_ = new_stream(ctx_);  // the fixture's stream belonged to the old one
}

TEST_F(CudaFakeDriverTest, KernelErrorsSayWhatWasMissing) {
  static const ModuleImage no_code{nullptr, 0, "host_only.cu"};
  static const KernelSymbol host_only{"host_only", &no_code, nullptr, nullptr, 0};
  FunctionHandle fn;
  const Result none = b().kernel_function(ctx_, host_only, fn);
  EXPECT_EQ(none.status, Status::not_supported);
  EXPECT_NE(describe(none).find("no device code"), std::string::npos) << describe(none);

  const Result missing = b().kernel_function(ctx_, kMissing, fn);
  EXPECT_EQ(missing.status, Status::not_supported);
  EXPECT_EQ(describe(missing).rfind("cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (500)", 0), 0U)
      << describe(missing);
}

TEST_F(CudaFakeDriverTest, NullContextIsRejectedWithoutUnbindingTheThread) {
  EXPECT_CU_OK(b().stream_query(ctx_, stream_));
  StreamHandle s;
  EXPECT_EQ(b().stream_create(ContextHandle{}, s).status, Status::invalid_handle);
  EXPECT_EQ(fake_.current(), ctx_.raw);
}

TEST_F(CudaFakeDriverTest, PoolKeepsFreedMemoryCached) {
  PoolHandle pool;
  EXPECT_CU_OK(b().pool_create(ctx_, pool));
  EXPECT_EQ(fake_.release_threshold(), UINT64_MAX);
  DevicePtr ptr = 0;
  EXPECT_CU_OK(b().mem_alloc_async(ctx_, pool, 4096, stream_, ptr));
  EXPECT_NE(ptr, 0U);
  EXPECT_CU_OK(b().mem_free_async(ctx_, ptr, stream_));
  EXPECT_CU_OK(b().pool_trim(ctx_, pool, 0));
  EXPECT_CU_OK(b().pool_destroy(ctx_, pool));
}

TEST_F(CudaFakeDriverTest, TransfersMoveTheBytes) {
  constexpr std::size_t kBytes = 4096;
  DevicePtr a = 0;
  DevicePtr c = 0;
  EXPECT_CU_OK(b().mem_alloc(ctx_, kBytes, a));
  EXPECT_CU_OK(b().mem_alloc(ctx_, kBytes, c));
  std::vector<std::uint8_t> up(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) {
    up[i] = static_cast<std::uint8_t>(i * 7U);
  }
  std::vector<std::uint8_t> down(kBytes);
  EXPECT_CU_OK(b().upload_async(ctx_, a, up.data(), kBytes, stream_));
  EXPECT_CU_OK(b().memcpy_async(ctx_, c, a, kBytes, stream_));
  EXPECT_CU_OK(b().memset8_async(ctx_, c, 0xee, 16, stream_));
  EXPECT_CU_OK(b().download_async(ctx_, down.data(), c, kBytes, stream_));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, stream_));
  for (std::size_t i = 0; i < 16; ++i) {
    up[i] = 0xee;
  }
  EXPECT_EQ(up, down);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  EXPECT_CU_OK(b().mem_info(ctx_, free_bytes, total_bytes));
  EXPECT_LE(free_bytes + 2 * kBytes, total_bytes);
  EXPECT_CU_OK(b().mem_free(ctx_, a));
  EXPECT_CU_OK(b().mem_free(ctx_, c));
  const Result oom = b().mem_alloc(ctx_, std::size_t{1} << 50U, a);
  EXPECT_EQ(oom.status, Status::out_of_memory);
  EXPECT_EQ(describe(oom), "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
}

TEST_F(CudaFakeDriverTest, CaptureInstantiatesAndDropsTheTemplate) {
  DevicePtr buf = 0;
  EXPECT_CU_OK(b().mem_alloc(ctx_, 64, buf));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0, 64, stream_));
  EXPECT_CU_OK(b().capture_begin(ctx_, stream_));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0x5a, 64, stream_));
  const long destroyed_before = calls("cuGraphDestroy");
  GraphHandle graph;
  EXPECT_CU_OK(b().capture_end(ctx_, stream_, graph));
  EXPECT_EQ(calls("cuGraphDestroy") - destroyed_before, 1);
  std::uint8_t host[64] = {};
  EXPECT_CU_OK(b().download_async(ctx_, host, buf, 64, stream_));
  EXPECT_EQ(host[0], 0);
  for (int replay = 0; replay < 2; ++replay) {
    EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0, 64, stream_));
    EXPECT_CU_OK(b().graph_launch(ctx_, graph, stream_));
    EXPECT_CU_OK(b().download_async(ctx_, host, buf, 64, stream_));
    EXPECT_EQ(host[63], 0x5a);
  }
  EXPECT_CU_OK(b().graph_destroy(ctx_, graph));

  EXPECT_CU_OK(b().capture_begin(ctx_, stream_));
  EXPECT_EQ(b().stream_query(ctx_, stream_).status, Status::not_permitted);
  const Result end = b().capture_end(ctx_, stream_, graph);
  EXPECT_EQ(end.status, Status::not_permitted) << describe(end);
  EXPECT_CU_OK(b().mem_free(ctx_, buf));
}

// The fake implements none of the peer-access entry points: a driver that
// lacks them still loads (they are optional), and the calls that need them
// say so instead of crashing on a null pointer.
TEST_F(CudaFakeDriverTest, PeerAccessEntryPointsAreOptional) {
  EXPECT_EQ(fake_.requested_version("cuDeviceCanAccessPeer"), 4000);
  EXPECT_EQ(fake_.requested_version("cuCtxEnablePeerAccess"), 4000);
  EXPECT_EQ(fake_.requested_version("cuMemPoolSetAccess"), 11020);
  bool can = true;
  const Result r = b().device_can_access_peer(0, 1, can);
  EXPECT_EQ(r.status, Status::not_supported);
  EXPECT_FALSE(can);
  EXPECT_NE(b().describe(r).find("cuDeviceCanAccessPeer"), std::string::npos) << b().describe(r);
  EXPECT_EQ(b().context_enable_peer_access(ctx_, ctx_).status, Status::not_supported);
  PoolHandle pool;
  ASSERT_TRUE(b().pool_create(ctx_, pool).ok());
  EXPECT_EQ(b().pool_grant_access(ctx_, pool, 1).status, Status::not_supported);
  EXPECT_TRUE(b().pool_destroy(ctx_, pool).ok());
}

}  // namespace
}  // namespace tandem::driver
