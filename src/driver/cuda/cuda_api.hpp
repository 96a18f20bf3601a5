// SPDX-License-Identifier: Apache-2.0
// cuda_api.hpp — the CUDA driver entry points tandem calls, resolved at run
// time (private to src/driver/cuda).
//
// tandem never links libcuda: the same binary must start on machines with no
// driver and run the simulated device there. load_cuda_api() dlopens
// libcuda.so.1 and asks cuGetProcAddress for each entry point below.
//
// Versions. cuda.h renames most entry points with macros (cuMemAlloc ->
// cuMemAlloc_v2, cuCtxCreate -> cuCtxCreate_v4, ...), and cuGetProcAddress
// takes the *base* name plus "the CUDA version whose ABI you want". Each entry
// therefore names that ABI version explicitly, X(name, abi):
//   - the member has type PFN_<name>_v<abi> from <cudaTypedefs.h>;
//   - the lookup passes cudaVersion = abi, so the driver returns exactly that
//     ABI (not "the newest one up to CUDA_VERSION", which differs from the
//     header's prototype for cuCtxGetDevice: at 13000 the driver returns the
//     two-argument cuCtxGetDevice_v2 while cuda.h 13.0 declares the
//     one-argument function), and a driver older than `abi` fails the lookup
//     with a clear message instead of handing back a different signature;
//   - cuda_api.cpp static_asserts that PFN_<name>_v<abi> is the type of the
//     function cuda.h means by `name` (decltype(&name) after the header's
//     renaming), so a toolkit upgrade that moves a default version breaks
//     the build here rather than the ABI at run time.
//
// Stream flavour: the lookups pass CU_GET_PROC_ADDRESS_DEFAULT (legacy default
// stream), or the per-thread flag when compiled with
// CUDA_API_PER_THREAD_DEFAULT_STREAM, exactly like cuda.h's own wrapper. It
// only matters for the null stream: tandem's own streams are non-blocking.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>
#include <string_view>

#include "tandem/driver/types.hpp"

// Every driver entry point tandem uses, listed once. Keep cuGetErrorName,
// cuGetErrorString and cuDriverGetVersion first: later lookup failures use
// them to explain themselves.
#define TANDEM_CUDA_ENTRY_POINTS(X)     \
  X(cuGetErrorName, 6000)               \
  X(cuGetErrorString, 6000)             \
  X(cuDriverGetVersion, 2020)           \
  X(cuInit, 2000)                       \
  /* devices */                         \
  X(cuDeviceGet, 2000)                  \
  X(cuDeviceGetCount, 2000)             \
  X(cuDeviceGetName, 2000)              \
  X(cuDeviceGetUuid, 11040)             \
  X(cuDeviceGetPCIBusId, 4010)          \
  X(cuDeviceGetAttribute, 2000)         \
  X(cuDeviceTotalMem, 3020)             \
  /* contexts */                        \
  X(cuDevicePrimaryCtxRetain, 7000)     \
  X(cuDevicePrimaryCtxRelease, 11000)   \
  X(cuDevicePrimaryCtxGetState, 7000)   \
  X(cuCtxCreate, 12050)                 \
  X(cuCtxDestroy, 4000)                 \
  X(cuCtxSetCurrent, 4000)              \
  X(cuCtxGetCurrent, 4000)              \
  X(cuCtxPopCurrent, 4000)              \
  X(cuCtxGetDevice, 2000)               \
  /* streams and events */              \
  X(cuStreamCreate, 2000)               \
  X(cuStreamDestroy, 4000)              \
  X(cuStreamSynchronize, 2000)          \
  X(cuStreamQuery, 2000)                \
  X(cuStreamWaitEvent, 3020)            \
  X(cuEventCreate, 2000)                \
  X(cuEventDestroy, 4000)               \
  X(cuEventRecord, 2000)                \
  X(cuEventQuery, 2000)                 \
  X(cuEventSynchronize, 2000)           \
  /* memory */                          \
  X(cuMemPoolCreate, 11020)             \
  X(cuMemPoolDestroy, 11020)            \
  X(cuMemPoolSetAttribute, 11020)       \
  X(cuMemPoolTrimTo, 11020)             \
  X(cuMemAllocFromPoolAsync, 11020)     \
  X(cuMemFreeAsync, 11020)              \
  X(cuMemAlloc, 3020)                   \
  X(cuMemFree, 3020)                    \
  X(cuMemGetInfo, 3020)                 \
  /* transfers */                       \
  X(cuMemcpyAsync, 4000)                \
  X(cuMemcpyHtoDAsync, 3020)            \
  X(cuMemcpyDtoHAsync, 3020)            \
  X(cuMemsetD8Async, 3020)              \
  /* kernels */                         \
  X(cuModuleLoadData, 2000)             \
  X(cuModuleGetFunction, 2000)          \
  X(cuLaunchKernel, 4000)               \
  /* graphs */                          \
  X(cuStreamBeginCapture, 10010)        \
  X(cuStreamEndCapture, 10000)          \
  X(cuGraphInstantiateWithFlags, 11040) \
  X(cuGraphDestroy, 10000)              \
  X(cuGraphLaunch, 10000)               \
  X(cuGraphExecDestroy, 10000)

// Entry points tandem can do without: a driver lacking them still loads, and
// the calls that need them answer not_supported (multi-GPU peer access).
#define TANDEM_CUDA_OPTIONAL_ENTRY_POINTS(X) \
  X(cuDeviceCanAccessPeer, 4000)             \
  X(cuCtxEnablePeerAccess, 4000)             \
  X(cuMemPoolSetAccess, 11020)

namespace tandem::driver::cuda {

// The resolved function table. Member names go through cuda.h's renaming
// macros like any other use (`api.cuMemAlloc` is the member cuMemAlloc_v2),
// so declarations and calls always agree; `#name` in the X-macro is never
// renamed, which is why the base name reaches cuGetProcAddress.
struct CudaApi {
#define TANDEM_CUDA_DECLARE_ENTRY(name, abi) PFN_##name##_v##abi name = nullptr;
  TANDEM_CUDA_ENTRY_POINTS(TANDEM_CUDA_DECLARE_ENTRY)
  TANDEM_CUDA_OPTIONAL_ENTRY_POINTS(TANDEM_CUDA_DECLARE_ENTRY)  // null when the driver lacks them
#undef TANDEM_CUDA_DECLARE_ENTRY
};

// Opens libcuda.so.1 and fills `api`. On failure returns false and sets `why`
// to what was asked and what was found. Never dlcloses: once cuInit ran the
// driver owns threads and atexit handlers inside the library, so the handle
// is deliberately kept for the life of the process.
bool load_cuda_api(CudaApi& api, std::string& why);

// "CUDA_ERROR_NO_DEVICE (100)", or "CUresult 12345" for a code the driver
// does not name. Uses `api.cuGetErrorName` when resolved.
std::string error_name(const CudaApi& api, int code);

// error_name plus the driver's description:
// "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected".
std::string error_text(const CudaApi& api, int code);

// nvidia-smi's form of a device UUID: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string gpu_uuid_text(const CUuuid& uuid);

// How tandem classifies a CUresult (see Status in types.hpp).
Status status_of(int curesult) noexcept;

// The kernel module's version ("580.159.04") from the text of
// /proc/driver/nvidia/version; empty when it is not there.
std::string kernel_module_version(std::string_view proc_version_text);

// "13.0" for 13000.
std::string cuda_version_text(int version);

// Result.raw for failures tandem detects itself, before any driver call.
// CUresults are never negative.
inline constexpr int kNoDeviceCode = -1;  // the kernel's module has no fatbin

}  // namespace tandem::driver::cuda
