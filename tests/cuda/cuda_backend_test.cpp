// SPDX-License-Identifier: Apache-2.0
// The CUDA driver backend on a real device. Every case skips, saying why,
// where load_cuda_backend finds no driver or no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tandem/driver/backend.hpp"

namespace tandem::driver {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20U;

class CudaBackendTest : public ::testing::Test {
 protected:
  // One backend and one retained primary context for the whole suite:
  // releasing the primary context to zero after every case would tear the
  // device state down and rebuild it each time.
  static void SetUpTestSuite() {
    backend_ = load_cuda_backend(why_);
    if (backend_ == nullptr) {
      return;
    }
    const Result r = backend_->primary_context_retain(0, ctx_);
    if (!r.ok()) {
      why_ = "primary_context_retain(0): " + backend_->describe(r);
      backend_.reset();
    }
  }
  static void TearDownTestSuite() {
    if (backend_ != nullptr) {
      EXPECT_TRUE(backend_->primary_context_release(0).ok());
    }
    backend_.reset();
  }

  void SetUp() override {
    if (backend_ == nullptr) {
      GTEST_SKIP() << "no CUDA backend: " << why_;
    }
  }

  Backend& b() { return *backend_; }
  static std::string describe(const Result& r) { return backend_->describe(r); }

  StreamHandle new_stream(ContextHandle ctx) {
    StreamHandle s;
    const Result r = b().stream_create(ctx, s);
    EXPECT_TRUE(r.ok()) << describe(r);
    return s;
  }
  EventHandle new_event(ContextHandle ctx) {
    EventHandle e;
    const Result r = b().event_create(ctx, e);
    EXPECT_TRUE(r.ok()) << describe(r);
    return e;
  }
  std::size_t free_bytes() {
    std::size_t free = 0;
    std::size_t total = 0;
    const Result r = b().mem_info(ctx_, free, total);
    EXPECT_TRUE(r.ok()) << describe(r);
    return free;
  }

  static inline std::unique_ptr<Backend> backend_;
  static inline std::string why_;
  static inline ContextHandle ctx_;
};

#define EXPECT_CU_OK(expr)                              \
  do {                                                  \
    const ::tandem::driver::Result r_ = (expr);         \
    EXPECT_TRUE(r_.ok()) << #expr ": " << describe(r_); \
  } while (false)
#define ASSERT_CU_OK(expr)                              \
  do {                                                  \
    const ::tandem::driver::Result r_ = (expr);         \
    ASSERT_TRUE(r_.ok()) << #expr ": " << describe(r_); \
  } while (false)

// --- devices and contexts -----------------------------------------------------------

TEST_F(CudaBackendTest, DeviceInfoIsSane) {
  EXPECT_EQ(b().name(), "cuda");
  EXPECT_TRUE(std::regex_match(b().driver_version(), std::regex(R"(\d+\.\d+( \(\d+(\.\d+)+\))?)")))
      << b().driver_version();

  int count = 0;
  ASSERT_CU_OK(b().device_count(count));
  ASSERT_GE(count, 1);

  DeviceInfo info;
  ASSERT_CU_OK(b().device_info(0, info));
  EXPECT_EQ(info.ordinal, 0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_TRUE(std::regex_match(
      info.uuid, std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
      << info.uuid;
  EXPECT_TRUE(
      std::regex_match(info.pci_bus_id, std::regex("[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-7]")))
      << info.pci_bus_id;
  EXPECT_GE(info.cc_major * 10 + info.cc_minor, 90) << "the reference GPU is sm_90 or newer";
  EXPECT_GT(info.total_bytes, std::size_t{1} << 30U);
  EXPECT_GT(info.multiprocessors, 0);
  std::cout << info.name << " " << info.uuid << " " << info.pci_bus_id << " sm_" << info.cc_major
            << info.cc_minor << " " << info.multiprocessors << " SMs, " << info.total_bytes / kMiB
            << " MiB, driver " << b().driver_version() << "\n";

  const Result bad = b().device_info(count, info);
  EXPECT_EQ(bad.status, Status::invalid_value) << describe(bad);
  EXPECT_NE(describe(bad).find("cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE"), std::string::npos)
      << describe(bad);
}

TEST_F(CudaBackendTest, PrimaryContextIsOnItsDevice) {
  int ordinal = -1;
  ASSERT_CU_OK(b().context_device(ctx_, ordinal));
  EXPECT_EQ(ordinal, 0);

  // Retaining again gives the same context; releasing that reference keeps
  // it alive for the suite's own.
  ContextHandle again;
  ASSERT_CU_OK(b().primary_context_retain(0, again));
  EXPECT_EQ(again, ctx_);
  ASSERT_CU_OK(b().primary_context_release(0));
  EXPECT_CU_OK(b().context_device(ctx_, ordinal));
}

TEST_F(CudaBackendTest, CreatedContextWorksBesideThePrimaryOne) {
  ContextHandle other;
  ASSERT_CU_OK(b().context_create(0, other));
  ASSERT_TRUE(other);
  EXPECT_NE(other, ctx_);
  int ordinal = -1;
  ASSERT_CU_OK(b().context_device(other, ordinal));
  EXPECT_EQ(ordinal, 0);

  // Alternate between the two on one thread: each call must switch.
  const StreamHandle s_other = new_stream(other);
  const StreamHandle s_primary = new_stream(ctx_);
  const EventHandle e_other = new_event(other);
  EXPECT_CU_OK(b().event_record(other, e_other, s_other));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s_primary));
  EXPECT_CU_OK(b().event_synchronize(other, e_other));
  EXPECT_CU_OK(b().event_destroy(other, e_other));
  EXPECT_CU_OK(b().stream_destroy(other, s_other));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s_primary));
  ASSERT_CU_OK(b().context_destroy(other));

  // The thread was last bound to `other`, now destroyed; a new context may
  // reuse its address. Both contexts must still be usable.
  ContextHandle third;
  ASSERT_CU_OK(b().context_create(0, third));
  const StreamHandle s_third = new_stream(third);
  EXPECT_CU_OK(b().stream_synchronize(third, s_third));
  EXPECT_CU_OK(b().stream_destroy(third, s_third));
  ASSERT_CU_OK(b().context_destroy(third));
  const StreamHandle s = new_stream(ctx_);
  EXPECT_CU_OK(b().stream_query(ctx_, s));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

TEST_F(CudaBackendTest, NullContextIsAnInvalidHandle) {
  StreamHandle s;
  const Result r = b().stream_create(ContextHandle{}, s);
  EXPECT_EQ(r.status, Status::invalid_handle) << describe(r);
  const Result q = b().stream_query(ContextHandle{}, s);
  EXPECT_EQ(q.status, Status::invalid_handle) << describe(q);
}

TEST_F(CudaBackendTest, ThreadsBindContextsIndependently) {
  ContextHandle other;
  ASSERT_CU_OK(b().context_create(0, other));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const ContextHandle ctx = (i + t) % 2 == 0 ? ctx_ : other;
        StreamHandle s;
        EventHandle e;
        int ordinal = -1;
        const bool ok = b().stream_create(ctx, s).ok() && b().event_create(ctx, e).ok() &&
                        b().event_record(ctx, e, s).ok() && b().event_synchronize(ctx, e).ok() &&
                        b().event_query(ctx, e).ok() && b().context_device(ctx, ordinal).ok() &&
                        ordinal == 0 && b().event_destroy(ctx, e).ok() && b().stream_destroy(ctx, s).ok();
        if (!ok) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_CU_OK(b().context_destroy(other));
}

// --- streams and events --------------------------------------------------------------

TEST_F(CudaBackendTest, StreamAndEventRecordQuerySynchronize) {
  const StreamHandle s = new_stream(ctx_);
  const EventHandle e = new_event(ctx_);
  EXPECT_CU_OK(b().event_query(ctx_, e));  // never recorded: complete

  DevicePtr buf = 0;
  ASSERT_CU_OK(b().mem_alloc(ctx_, 256 * kMiB, buf));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 1, 256 * kMiB, s));
  EXPECT_CU_OK(b().event_record(ctx_, e, s));
  const Result pending = b().event_query(ctx_, e);
  EXPECT_TRUE(pending.ok() || pending.status == Status::not_ready) << describe(pending);
  const Result busy = b().stream_query(ctx_, s);
  EXPECT_TRUE(busy.ok() || busy.status == Status::not_ready) << describe(busy);

  EXPECT_CU_OK(b().event_synchronize(ctx_, e));
  EXPECT_CU_OK(b().event_query(ctx_, e));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  EXPECT_CU_OK(b().stream_query(ctx_, s));

  EXPECT_CU_OK(b().mem_free(ctx_, buf));
  EXPECT_CU_OK(b().event_destroy(ctx_, e));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

TEST_F(CudaBackendTest, StreamWaitEventOrdersAcrossStreams) {
  constexpr std::size_t kBytes = 64 * kMiB;
  const StreamHandle writer = new_stream(ctx_);
  const StreamHandle reader = new_stream(ctx_);
  const EventHandle written = new_event(ctx_);
  DevicePtr buf = 0;
  ASSERT_CU_OK(b().mem_alloc(ctx_, kBytes, buf));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0, kBytes, writer));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, writer));

  // Several large fills on `writer`, then `reader` downloads after the event.
  for (int i = 0; i < 8; ++i) {
    EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0x11, kBytes, writer));
  }
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0x7e, kBytes, writer));
  EXPECT_CU_OK(b().event_record(ctx_, written, writer));
  EXPECT_CU_OK(b().stream_wait_event(ctx_, reader, written));
  std::vector<std::uint8_t> host(kBytes, 0);
  EXPECT_CU_OK(b().download_async(ctx_, host.data(), buf, kBytes, reader));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, reader));
  std::size_t wrong = 0;
  for (const std::uint8_t v : host) {
    wrong += v != 0x7e ? 1 : 0;
  }
  EXPECT_EQ(wrong, 0U);

  EXPECT_CU_OK(b().mem_free(ctx_, buf));
  EXPECT_CU_OK(b().event_destroy(ctx_, written));
  EXPECT_CU_OK(b().stream_destroy(ctx_, reader));
  EXPECT_CU_OK(b().stream_destroy(ctx_, writer));
}

// --- memory and transfers ------------------------------------------------------------

TEST_F(CudaBackendTest, PoolKeepsFreedMemoryUntilTrimmed) {
  constexpr std::size_t kBytes = 64 * kMiB;
  const StreamHandle s = new_stream(ctx_);
  PoolHandle pool;
  ASSERT_CU_OK(b().pool_create(ctx_, pool));

  // Warm up once so that driver bookkeeping made on first use is not counted.
  DevicePtr ptr = 0;
  ASSERT_CU_OK(b().mem_alloc_async(ctx_, pool, kBytes, s, ptr));
  EXPECT_CU_OK(b().mem_free_async(ctx_, ptr, s));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  EXPECT_CU_OK(b().pool_trim(ctx_, pool, 0));
  const std::size_t before = free_bytes();

  ASSERT_CU_OK(b().mem_alloc_async(ctx_, pool, kBytes, s, ptr));
  EXPECT_NE(ptr, 0U);
  EXPECT_CU_OK(b().memset8_async(ctx_, ptr, 0x5a, kBytes, s));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  const std::size_t allocated = free_bytes();
  EXPECT_GE(before - allocated, kBytes);
  EXPECT_LE(before - allocated, 2 * kBytes);

  EXPECT_CU_OK(b().mem_free_async(ctx_, ptr, s));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  EXPECT_GE(before - free_bytes(), kBytes) << "release threshold max: freed memory stays cached";

  EXPECT_CU_OK(b().pool_trim(ctx_, pool, 0));
  EXPECT_LE(before - std::min(before, free_bytes()), 4 * kMiB) << "trimmed back to the device";

  EXPECT_CU_OK(b().pool_destroy(ctx_, pool));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

TEST_F(CudaBackendTest, UploadDownloadRoundtrip) {
  constexpr std::size_t kBytes = 3 * kMiB + 17;
  const StreamHandle s = new_stream(ctx_);
  std::vector<std::uint8_t> up(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) {
    up[i] = static_cast<std::uint8_t>(i * 131U + 7U);
  }
  std::vector<std::uint8_t> down(kBytes, 0);
  DevicePtr a = 0;
  DevicePtr c = 0;
  ASSERT_CU_OK(b().mem_alloc(ctx_, kBytes, a));
  ASSERT_CU_OK(b().mem_alloc(ctx_, kBytes, c));
  EXPECT_CU_OK(b().upload_async(ctx_, a, up.data(), kBytes, s));
  EXPECT_CU_OK(b().memcpy_async(ctx_, c, a, kBytes, s));  // device to device
  EXPECT_CU_OK(b().download_async(ctx_, down.data(), c, kBytes, s));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  EXPECT_EQ(up, down);
  EXPECT_CU_OK(b().mem_free(ctx_, a));
  EXPECT_CU_OK(b().mem_free(ctx_, c));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

TEST_F(CudaBackendTest, Memset8FillsExactlyTheRange) {
  constexpr std::size_t kBytes = 1 * kMiB;
  const StreamHandle s = new_stream(ctx_);
  DevicePtr buf = 0;
  ASSERT_CU_OK(b().mem_alloc(ctx_, kBytes, buf));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0x00, kBytes, s));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf + 100, 0xab, 1000, s));
  std::vector<std::uint8_t> host(kBytes, 0xff);
  EXPECT_CU_OK(b().download_async(ctx_, host.data(), buf, kBytes, s));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  for (std::size_t i = 0; i < kBytes; ++i) {
    const std::uint8_t want = i >= 100 && i < 1100 ? 0xab : 0x00;
    ASSERT_EQ(host[i], want) << "at byte " << i;
  }
  EXPECT_CU_OK(b().mem_free(ctx_, buf));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

TEST_F(CudaBackendTest, ImpossibleAllocationIsOutOfMemoryAndNamesTheCall) {
  DevicePtr ptr = 0;
  const Result r = b().mem_alloc(ctx_, std::size_t{1} << 50U, ptr);  // 1 PiB
  EXPECT_EQ(r.status, Status::out_of_memory) << describe(r);
  EXPECT_EQ(describe(r).rfind("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): ", 0), 0U) << describe(r);
  // The failure forgot the thread's binding: the next call rebinds and works.
  const StreamHandle s = new_stream(ctx_);
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

// --- graphs ---------------------------------------------------------------------------

TEST_F(CudaBackendTest, CapturedMemsetReplaysTwice) {
  constexpr std::size_t kBytes = 4 * kMiB;
  const StreamHandle s = new_stream(ctx_);
  DevicePtr buf = 0;
  ASSERT_CU_OK(b().mem_alloc(ctx_, kBytes, buf));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0, kBytes, s));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));

  ASSERT_CU_OK(b().capture_begin(ctx_, s));
  EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0x5a, kBytes, s));
  GraphHandle graph;
  ASSERT_CU_OK(b().capture_end(ctx_, s, graph));
  ASSERT_TRUE(graph);

  std::vector<std::uint8_t> host(kBytes);
  EXPECT_CU_OK(b().download_async(ctx_, host.data(), buf, kBytes, s));
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  EXPECT_EQ(host[0], 0) << "capture records the memset without running it";

  for (int replay = 0; replay < 2; ++replay) {
    EXPECT_CU_OK(b().memset8_async(ctx_, buf, 0, kBytes, s));
    EXPECT_CU_OK(b().graph_launch(ctx_, graph, s));
    EXPECT_CU_OK(b().download_async(ctx_, host.data(), buf, kBytes, s));
    EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
    std::size_t wrong = 0;
    for (const std::uint8_t v : host) {
      wrong += v != 0x5a ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0U) << "replay " << replay;
  }

  EXPECT_CU_OK(b().graph_destroy(ctx_, graph));
  EXPECT_CU_OK(b().mem_free(ctx_, buf));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

TEST_F(CudaBackendTest, QueryingACapturingStreamIsNotPermitted) {
  const StreamHandle s = new_stream(ctx_);
  ASSERT_CU_OK(b().capture_begin(ctx_, s));
  const Result query = b().stream_query(ctx_, s);
  EXPECT_EQ(query.status, Status::not_permitted) << describe(query);
  GraphHandle graph;
  const Result end = b().capture_end(ctx_, s, graph);  // the query invalidated the capture
  EXPECT_EQ(end.status, Status::not_permitted) << describe(end);
  if (end.ok()) {
    EXPECT_CU_OK(b().graph_destroy(ctx_, graph));
  }
  EXPECT_CU_OK(b().stream_synchronize(ctx_, s));
  EXPECT_CU_OK(b().stream_destroy(ctx_, s));
}

// --- kernels --------------------------------------------------------------------------

TEST_F(CudaBackendTest, KernelWithoutDeviceCodeIsNotSupported) {
  static const ModuleImage no_code{nullptr, 0, "host_only.cu"};
  static const KernelSymbol symbol{"tandem_test_kernel", &no_code, nullptr, nullptr, 0};
  FunctionHandle fn;
  const Result r = b().kernel_function(ctx_, symbol, fn);
  EXPECT_EQ(r.status, Status::not_supported) << describe(r);
  EXPECT_NE(describe(r).find("without"), std::string::npos) << describe(r);
  EXPECT_FALSE(fn);
}

}  // namespace
}  // namespace tandem::driver
