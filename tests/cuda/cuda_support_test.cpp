// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's pieces that need no GPU: loading must never crash on a
// machine without a driver, and the CUresult/text helpers behave.
#include <cuda.h>
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "cuda_api.hpp"
#include "tandem/driver/backend.hpp"

namespace tandem::driver {
namespace {

TEST(CudaSupport, LoadGivesABackendOrSaysWhyNot) {
  std::string why;
  const std::unique_ptr<Backend> backend = load_cuda_backend(why);
  if (backend == nullptr) {
    EXPECT_FALSE(why.empty()) << "load_cuda_backend returned nullptr without a reason";
    std::cout << "no CUDA backend here: " << why << "\n";
    return;
  }
  EXPECT_EQ(backend->name(), "cuda");
  int count = 0;
  ASSERT_TRUE(backend->device_count(count).ok());
  EXPECT_GE(count, 1);
  std::cout << "CUDA backend loaded: driver " << backend->driver_version() << ", " << count << " device(s)\n";
}

TEST(CudaSupport, LoadingTwiceIsHarmless) {
  std::string first;
  std::string second;
  const auto a = load_cuda_backend(first);
  const auto b = load_cuda_backend(second);
  EXPECT_EQ(a == nullptr, b == nullptr);
  EXPECT_EQ(first, second);
}

TEST(CudaSupport, StatusOfClassifiesCuResults) {
  using cuda::status_of;
  EXPECT_EQ(status_of(CUDA_SUCCESS), Status::ok);
  EXPECT_EQ(status_of(CUDA_ERROR_NOT_READY), Status::not_ready);
  EXPECT_EQ(status_of(CUDA_ERROR_OUT_OF_MEMORY), Status::out_of_memory);
  EXPECT_EQ(status_of(CUDA_ERROR_INVALID_VALUE), Status::invalid_value);
  EXPECT_EQ(status_of(CUDA_ERROR_INVALID_DEVICE), Status::invalid_value);
  EXPECT_EQ(status_of(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), Status::invalid_value);
  EXPECT_EQ(status_of(CUDA_ERROR_INVALID_HANDLE), Status::invalid_handle);
  EXPECT_EQ(status_of(CUDA_ERROR_INVALID_CONTEXT), Status::invalid_handle);
  EXPECT_EQ(status_of(CUDA_ERROR_NOT_SUPPORTED), Status::not_supported);
  EXPECT_EQ(status_of(CUDA_ERROR_NOT_FOUND), Status::not_supported);
  EXPECT_EQ(status_of(CUDA_ERROR_NO_BINARY_FOR_GPU), Status::not_supported);
  EXPECT_EQ(status_of(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), Status::not_supported);
  EXPECT_EQ(status_of(CUDA_ERROR_NOT_PERMITTED), Status::not_permitted);
  EXPECT_EQ(status_of(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), Status::not_permitted);
  EXPECT_EQ(status_of(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), Status::not_permitted);
  EXPECT_EQ(status_of(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD), Status::not_permitted);
  EXPECT_EQ(status_of(CUDA_ERROR_ILLEGAL_ADDRESS), Status::completion_unknown);
  EXPECT_EQ(status_of(CUDA_ERROR_LAUNCH_FAILED), Status::completion_unknown);
  EXPECT_EQ(status_of(CUDA_ERROR_ECC_UNCORRECTABLE), Status::completion_unknown);
  EXPECT_EQ(status_of(CUDA_ERROR_HARDWARE_STACK_ERROR), Status::completion_unknown);
  EXPECT_EQ(status_of(CUDA_ERROR_CONTEXT_IS_DESTROYED), Status::completion_unknown);
  EXPECT_EQ(status_of(CUDA_ERROR_DEINITIALIZED), Status::completion_unknown);
  EXPECT_EQ(status_of(CUDA_ERROR_NO_DEVICE), Status::no_device);
  EXPECT_EQ(status_of(CUDA_ERROR_STUB_LIBRARY), Status::no_device);
  EXPECT_EQ(status_of(CUDA_ERROR_UNKNOWN), Status::unknown);
  EXPECT_EQ(status_of(123456), Status::unknown);
  EXPECT_EQ(status_of(cuda::kNoDeviceCode), Status::unknown);
}

TEST(CudaSupport, ErrorNameWithoutTheDriverFallsBackToTheNumber) {
  const cuda::CudaApi unresolved{};
  EXPECT_EQ(cuda::error_name(unresolved, 700), "CUresult 700");
  EXPECT_EQ(cuda::error_text(unresolved, 700), "CUresult 700");
}

TEST(CudaSupport, GpuUuidTextIsNvidiaSmiForm) {
  CUuuid uuid{};
  for (int i = 0; i < 16; ++i) {
    uuid.bytes[i] = static_cast<char>(i == 0 ? 0xab : i);
  }
  EXPECT_EQ(cuda::gpu_uuid_text(uuid), "GPU-ab010203-0405-0607-0809-0a0b0c0d0e0f");
}

TEST(CudaSupport, KernelModuleVersionComesFromTheNvrmLine) {
  using cuda::kernel_module_version;
  EXPECT_EQ(kernel_module_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                  "580.159.04  Release Build  (dvs-builder@U22)  Thu Jan  1\n"
                                  "GCC version:  gcc version 12.3.0\n"),
            "580.159.04");
  EXPECT_EQ(kernel_module_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  "
                                  "Sat Aug 19 01:15:15 UTC 2023"),
            "535.104.05");
  EXPECT_EQ(kernel_module_version(""), "");
  EXPECT_EQ(kernel_module_version("something else entirely 1.2.3"), "");
  EXPECT_EQ(kernel_module_version("NVRM version: no number here\n1.2.3"), "");
}

TEST(CudaSupport, CudaVersionText) {
  EXPECT_EQ(cuda::cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda::cuda_version_text(12080), "12.8");
  EXPECT_EQ(cuda::cuda_version_text(11040), "11.4");
}

}  // namespace
}  // namespace tandem::driver
