// SPDX-License-Identifier: Apache-2.0
#include "raw_driver.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <stdexcept>

namespace tandem_bench {

namespace {

// CUresult cuGetProcAddress_v2(const char*, void**, int cudaVersion,
//                              cuuint64_t flags, CUdriverProcAddressQueryResult*)
using GetProcFn = int (*)(const char*, void**, int, std::uint64_t, int*);

template <class Fn>
bool resolve(void* lib, GetProcFn get_proc, const char* base, int abi, const char* exported, Fn& out,
             std::string& why) {
  void* p = nullptr;
  int status = 0;
  // Flags 0 = CU_GET_PROC_ADDRESS_DEFAULT, what the cuda backend passes.
  if (get_proc == nullptr || get_proc(base, &p, abi, 0, &status) != 0 || p == nullptr) {
    p = dlsym(lib, exported);  // a driver without cuGetProcAddress_v2: the exported name
  }
  if (p == nullptr) {
    why = std::string("libcuda.so.1 has no ") + base + " (CUDA " + std::to_string(abi) + " ABI)";
    return false;
  }
  out = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace

bool RawDriver::load(std::string& why) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    why = std::string("cannot open libcuda.so.1: ") + (e ? e : "unknown");
    return false;
  }
  auto get_proc = reinterpret_cast<GetProcFn>(dlsym(lib, "cuGetProcAddress_v2"));
  // ABI versions as in src/driver/cuda/cuda_api.hpp; the capture entry
  // with a mode argument is cuStreamBeginCapture's 10.1 ABI (exported _v2).
  return resolve(lib, get_proc, "cuLaunchKernel", 4000, "cuLaunchKernel", launch, why) &&
         resolve(lib, get_proc, "cuCtxSetCurrent", 4000, "cuCtxSetCurrent", ctx_set_current, why) &&
         resolve(lib, get_proc, "cuEventRecord", 2000, "cuEventRecord", event_record, why) &&
         resolve(lib, get_proc, "cuEventQuery", 2000, "cuEventQuery", event_query, why) &&
         resolve(lib, get_proc, "cuStreamSynchronize", 2000, "cuStreamSynchronize", stream_synchronize,
                 why) &&
         resolve(lib, get_proc, "cuMemAllocAsync", 11020, "cuMemAllocAsync", alloc_async, why) &&
         resolve(lib, get_proc, "cuMemFreeAsync", 11020, "cuMemFreeAsync", free_async, why) &&
         resolve(lib, get_proc, "cuMemAllocFromPoolAsync", 11020, "cuMemAllocFromPoolAsync",
                 alloc_from_pool_async, why) &&
         resolve(lib, get_proc, "cuMemPoolCreate", 11020, "cuMemPoolCreate", pool_create, why) &&
         resolve(lib, get_proc, "cuMemPoolDestroy", 11020, "cuMemPoolDestroy", pool_destroy, why) &&
         resolve(lib, get_proc, "cuMemPoolSetAttribute", 11020, "cuMemPoolSetAttribute", pool_set_attribute,
                 why) &&
         resolve(lib, get_proc, "cuMemPoolTrimTo", 11020, "cuMemPoolTrimTo", pool_trim_to, why) &&
         resolve(lib, get_proc, "cuStreamBeginCapture", 10010, "cuStreamBeginCapture_v2", begin_capture,
                 why) &&
         resolve(lib, get_proc, "cuStreamEndCapture", 10000, "cuStreamEndCapture", end_capture, why) &&
         resolve(lib, get_proc, "cuGraphInstantiateWithFlags", 11040, "cuGraphInstantiateWithFlags",
                 graph_instantiate, why) &&
         resolve(lib, get_proc, "cuGraphLaunch", 10000, "cuGraphLaunch", graph_launch, why) &&
         resolve(lib, get_proc, "cuGraphDestroy", 10000, "cuGraphDestroy", graph_destroy, why) &&
         resolve(lib, get_proc, "cuGraphExecDestroy", 10000, "cuGraphExecDestroy", graph_exec_destroy, why);
}

namespace {

// CUmemPoolProps (cuda.h, CUDA 11.2 on): allocType, handleTypes, location
// {type, id}, win32SecurityAttributes, then maxSize, usage and reserved
// bytes to 88 in all. Zero for everything not set, as the backend does.
struct MemPoolProps {
  int alloc_type = 1;     // CU_MEM_ALLOCATION_TYPE_PINNED
  int handle_types = 0;   // CU_MEM_HANDLE_TYPE_NONE
  int location_type = 1;  // CU_MEM_LOCATION_TYPE_DEVICE
  int location_id = 0;    // the device ordinal
  void* win32_security_attributes = nullptr;
  unsigned char rest[64] = {};  // maxSize 0 (the default), usage 0, reserved
};
static_assert(sizeof(MemPoolProps) == 88, "CUmemPoolProps is 88 bytes");
constexpr int kPoolAttrReleaseThreshold = 4;  // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD

}  // namespace

RawPool::RawPool(const RawDriver& d, int ordinal) : d_(d) {
  MemPoolProps props;
  props.location_id = ordinal;
  if (const int rc = d.pool_create(&pool_, &props); rc != 0) {
    throw std::runtime_error("cuMemPoolCreate: CUresult " + std::to_string(rc));
  }
  std::uint64_t threshold = UINT64_MAX;
  if (const int rc = d.pool_set_attribute(pool_, kPoolAttrReleaseThreshold, &threshold); rc != 0) {
    (void)d.pool_destroy(pool_);
    throw std::runtime_error("cuMemPoolSetAttribute(RELEASE_THRESHOLD): CUresult " + std::to_string(rc));
  }
}

RawPool::~RawPool() {
  (void)d_.pool_trim_to(pool_, 0);
  (void)d_.pool_destroy(pool_);
}

}  // namespace tandem_bench
