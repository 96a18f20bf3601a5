// SPDX-License-Identifier: Apache-2.0
// Run-time resolution of the CUDA driver entry points, and CUresult helpers.
#include "cuda_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>

namespace tandem::driver::cuda {

// PFN_<name>_v<abi> must be the type of what cuda.h means by `name` (after
// its renaming macros). If this fires after a toolkit upgrade, cuda.h now
// maps `name` to a newer ABI: update the version in TANDEM_CUDA_ENTRY_POINTS
// to the newest PFN_<name>_v<N> in cudaTypedefs.h and check the call sites.
#define TANDEM_CUDA_CHECK_ABI(name, abi)                                \
  static_assert(std::is_same_v<PFN_##name##_v##abi, decltype(&(name))>, \
                #name ": PFN_" #name "_v" #abi " is not the ABI cuda.h declares");
TANDEM_CUDA_ENTRY_POINTS(TANDEM_CUDA_CHECK_ABI)
TANDEM_CUDA_OPTIONAL_ENTRY_POINTS(TANDEM_CUDA_CHECK_ABI)
#undef TANDEM_CUDA_CHECK_ABI

namespace {

constexpr const char* kLibrary = "libcuda.so.1";

// Mirrors cuda.h's own cuGetProcAddress wrapper: per-thread default stream
// variants only when this file is compiled for them.
#if defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
constexpr cuuint64_t kProcFlags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
#else
constexpr cuuint64_t kProcFlags = CU_GET_PROC_ADDRESS_DEFAULT;
#endif

std::string dl_error_text() {
  const char* e = dlerror();  // NOLINT(concurrency-mt-unsafe): per thread in glibc
  return e != nullptr ? e : "no reason given";
}

const char* lookup_status_text(CUdriverProcAddressQueryResult s) {
  switch (s) {
    case CU_GET_PROC_ADDRESS_SUCCESS:
      return "found";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND:
      return "symbol not found";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
      return "no version with that ABI";
  }
  return "unknown lookup status";
}

// "the driver supports CUDA 12.4" when cuDriverGetVersion is already known.
std::string driver_supports_text(const CudaApi& api) {
  int version = 0;
  if (api.cuDriverGetVersion == nullptr || api.cuDriverGetVersion(&version) != CUDA_SUCCESS) {
    return "the driver's CUDA version is unknown";
  }
  return "the driver supports CUDA " + cuda_version_text(version);
}

// Looks up one entry point for exactly ABI version `abi`.
template <class Fn>
bool resolve(PFN_cuGetProcAddress_v12000 get_proc, const CudaApi& api, const char* name, int abi, Fn& out,
             std::string& why) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = get_proc(name, &fn, abi, kProcFlags, &found);
  if (rc == CUDA_SUCCESS && fn != nullptr && found == CU_GET_PROC_ADDRESS_SUCCESS) {
    out = reinterpret_cast<Fn>(fn);
    return true;
  }
  why = std::string("cuGetProcAddress(\"") + name + "\", CUDA " + cuda_version_text(abi) + " ABI) in " +
        kLibrary + " failed: ";
  if (rc == CUDA_ERROR_STUB_LIBRARY) {
    why += "CUDA_ERROR_STUB_LIBRARY (34): this is the toolkit's link stub, not a driver";
  } else if (rc == CUDA_ERROR_INVALID_VALUE || (rc == CUDA_SUCCESS && fn == nullptr)) {
    // The driver answers CUDA_ERROR_INVALID_VALUE when `abi` is newer than
    // itself, and success with a null pointer when it has no such ABI.
    why += (rc != CUDA_SUCCESS ? error_name(api, rc) : lookup_status_text(found)) + "; " +
           driver_supports_text(api) + ", tandem needs CUDA " + cuda_version_text(abi) + " or newer for " +
           name;
  } else {
    why += rc != CUDA_SUCCESS ? error_name(api, rc) : std::string(lookup_status_text(found));
  }
  return false;
}

}  // namespace

bool load_cuda_api(CudaApi& api, std::string& why) {
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    why = std::string(kLibrary) + " not found: " + dl_error_text();
    return false;
  }
  // The exported, versioned name: plain "cuGetProcAddress" is the CUDA 11.3
  // signature without the query-result out-parameter.
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    why = std::string(kLibrary) +
          " has no cuGetProcAddress_v2 (a driver older than CUDA 12.0?): " + dl_error_text();
    return false;
  }
#define TANDEM_CUDA_RESOLVE_ENTRY(name, abi) \
  if (!resolve(get_proc, api, #name, abi, api.name, why)) return false;
  TANDEM_CUDA_ENTRY_POINTS(TANDEM_CUDA_RESOLVE_ENTRY)
#undef TANDEM_CUDA_RESOLVE_ENTRY
  // Optional: a failed lookup leaves the member null (its calls answer
  // not_supported); it does not stop the backend from loading.
  std::string optional_why;
#define TANDEM_CUDA_RESOLVE_OPTIONAL(name, abi)                      \
  if (!resolve(get_proc, api, #name, abi, api.name, optional_why)) { \
    api.name = nullptr;                                              \
  }
  TANDEM_CUDA_OPTIONAL_ENTRY_POINTS(TANDEM_CUDA_RESOLVE_OPTIONAL)
#undef TANDEM_CUDA_RESOLVE_OPTIONAL
  return true;
}

std::string error_name(const CudaApi& api, int code) {
  const char* name = nullptr;
  if (api.cuGetErrorName == nullptr ||
      api.cuGetErrorName(static_cast<CUresult>(code), &name) != CUDA_SUCCESS || name == nullptr) {
    return "CUresult " + std::to_string(code);
  }
  return std::string(name) + " (" + std::to_string(code) + ")";
}

std::string error_text(const CudaApi& api, int code) {
  std::string text = error_name(api, code);
  const char* description = nullptr;
  if (api.cuGetErrorString != nullptr &&
      api.cuGetErrorString(static_cast<CUresult>(code), &description) == CUDA_SUCCESS &&
      description != nullptr) {
    text += ": ";
    text += description;
  }
  return text;
}

std::string gpu_uuid_text(const CUuuid& uuid) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      text += '-';  // 8-4-4-4-12 digits
    }
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    text += kHex[byte >> 4U];
    text += kHex[byte & 0xFU];
  }
  return text;
}

namespace {

// How tandem classifies a CUresult, one row per code it tells apart; every
// other code is Status::unknown. Looked up in order: status_of runs for
// failures only (a success never leaves check() in cuda_backend.cpp) and
// for not_ready, a poll's normal answer, which is the second row.
struct StatusRow {
  CUresult code;
  Status status;
};

constexpr StatusRow kStatusRows[] = {
    {CUDA_SUCCESS, Status::ok},
    {CUDA_ERROR_NOT_READY, Status::not_ready},
    {CUDA_ERROR_OUT_OF_MEMORY, Status::out_of_memory},

    // A bad argument: sizes, pointers, ordinals, launch dimensions or a
    // block too large for the kernel's registers.
    {CUDA_ERROR_INVALID_VALUE, Status::invalid_value},
    {CUDA_ERROR_INVALID_DEVICE, Status::invalid_value},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, Status::invalid_value},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, Status::invalid_value},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, Status::invalid_value},

    {CUDA_ERROR_INVALID_HANDLE, Status::invalid_handle},
    {CUDA_ERROR_INVALID_CONTEXT, Status::invalid_handle},

    // This device, driver or build cannot run it: no code for this GPU in
    // the fatbin, PTX newer than the driver, a kernel missing from its
    // module (NOT_FOUND from cuModuleGetFunction), an unsupported feature.
    {CUDA_ERROR_NOT_SUPPORTED, Status::not_supported},
    {CUDA_ERROR_NOT_FOUND, Status::not_supported},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, Status::not_supported},
    {CUDA_ERROR_INVALID_IMAGE, Status::not_supported},
    {CUDA_ERROR_INVALID_PTX, Status::not_supported},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, Status::not_supported},
    {CUDA_ERROR_JIT_COMPILER_NOT_FOUND, Status::not_supported},
    {CUDA_ERROR_JIT_COMPILATION_DISABLED, Status::not_supported},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, Status::not_supported},

    // Illegal in the current state, mostly during stream capture.
    {CUDA_ERROR_NOT_PERMITTED, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_MERGE, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_UNJOINED, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_ISOLATION, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, Status::not_permitted},
    {CUDA_ERROR_CAPTURED_EVENT, Status::not_permitted},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, Status::not_permitted},

    // Sticky errors: the context is corrupt or gone, and no query can prove
    // that earlier work finished. DEINITIALIZED is what calls return while
    // the driver shuts down at process exit.
    {CUDA_ERROR_DEINITIALIZED, Status::completion_unknown},
    {CUDA_ERROR_ECC_UNCORRECTABLE, Status::completion_unknown},
    {CUDA_ERROR_NVLINK_UNCORRECTABLE, Status::completion_unknown},
    {CUDA_ERROR_CONTAINED, Status::completion_unknown},
    {CUDA_ERROR_ILLEGAL_ADDRESS, Status::completion_unknown},
    {CUDA_ERROR_LAUNCH_TIMEOUT, Status::completion_unknown},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, Status::completion_unknown},
    {CUDA_ERROR_ASSERT, Status::completion_unknown},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, Status::completion_unknown},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, Status::completion_unknown},
    {CUDA_ERROR_MISALIGNED_ADDRESS, Status::completion_unknown},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, Status::completion_unknown},
    {CUDA_ERROR_INVALID_PC, Status::completion_unknown},
    {CUDA_ERROR_LAUNCH_FAILED, Status::completion_unknown},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, Status::completion_unknown},
    {CUDA_ERROR_EXTERNAL_DEVICE, Status::completion_unknown},
    {CUDA_ERROR_MPS_CONNECTION_FAILED, Status::completion_unknown},
    {CUDA_ERROR_MPS_RPC_FAILURE, Status::completion_unknown},
    {CUDA_ERROR_MPS_CLIENT_TERMINATED, Status::completion_unknown},

    // No usable device or driver.
    {CUDA_ERROR_NO_DEVICE, Status::no_device},
    {CUDA_ERROR_NOT_INITIALIZED, Status::no_device},
    {CUDA_ERROR_STUB_LIBRARY, Status::no_device},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, Status::no_device},
    {CUDA_ERROR_DEVICE_NOT_LICENSED, Status::no_device},
    {CUDA_ERROR_SYSTEM_NOT_READY, Status::no_device},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, Status::no_device},
    {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, Status::no_device},
};

// No code in two rows: the second would never be found (a switch refused
// a repeated case; a table needs the check).
constexpr bool rows_distinct() {
  constexpr std::size_t n = std::size(kStatusRows);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (kStatusRows[i].code == kStatusRows[j].code) return false;
    }
  }
  return true;
}
static_assert(rows_distinct(), "a CUresult in two rows of kStatusRows");

}  // namespace

Status status_of(int curesult) noexcept {
  for (const StatusRow& row : kStatusRows) {
    if (static_cast<int>(row.code) == curesult) return row.status;
  }
  return Status::unknown;
}

namespace {

// "580.159.04"-like: digits with at least one dot, nothing else.
bool looks_like_version(std::string_view token) {
  bool dot = false;
  for (const char c : token) {
    if (c == '.') {
      dot = true;
    } else if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return dot && token.front() != '.' && token.back() != '.';
}

}  // namespace

std::string kernel_module_version(std::string_view text) {
  // e.g. "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
  constexpr std::string_view kPrefix = "NVRM version:";
  const std::size_t at = text.find(kPrefix);
  if (at == std::string_view::npos) {
    return {};
  }
  std::string_view line = text.substr(at + kPrefix.size());
  line = line.substr(0, line.find('\n'));
  while (!line.empty()) {
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) {
      break;
    }
    line.remove_prefix(start);
    const std::size_t end = std::min(line.find_first_of(" \t"), line.size());
    if (const std::string_view token = line.substr(0, end); looks_like_version(token)) {
      return std::string(token);
    }
    line.remove_prefix(end);
  }
  return {};
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace tandem::driver::cuda
