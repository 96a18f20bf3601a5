// SPDX-License-Identifier: Apache-2.0
// sim_test_support.hpp — what the suites of the simulated device share: tiny
// host-only test kernels (they reach test state through a Probe pointer
// passed as an 8-byte scalar parameter) and the fixture. No sleeps are used to
// synchronize: kernels block on gates the test opens, and the test waits with
// events, stream synchronization and condition variables.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver::sim_test {

using namespace std::chrono_literals;

// --- test kernels ------------------------------------------------------------

// Blocks kernels until the test opens it; counts the kernels that arrived.
class Gate {
 public:
  void arrive_and_wait() {
    std::unique_lock lock(m_);
    ++arrived_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  // True when `n` kernels arrived before `timeout` (a safety net for a
  // broken sim, not a synchronization device).
  bool wait_arrivals(int n, std::chrono::seconds timeout = 10s) {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, timeout, [&] { return arrived_ >= n; });
  }
  void open() {
    std::lock_guard lock(m_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  bool open_ = false;
};

struct Probe {
  std::atomic<int> runs{0};
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  Gate gate;
  Gate rendezvous;  // kernels meet here to prove they run at the same time
  std::atomic<int> met{0};
  std::mutex m;
  std::vector<int> order;             // guarded by m
  std::set<std::thread::id> threads;  // guarded by m
};

// What a pointer-led buffer parameter looks like on the device, and to the
// host reference after the sim translated it.
struct DeviceBuffer {
  DevicePtr ptr = 0;
  std::uint64_t len = 0;  // int32 elements
};
struct HostBuffer {
  std::int32_t* data;
  std::uint64_t len;
};

inline Probe* probe_at(void* const* params, int i) {
  static_assert(sizeof(void*) == sizeof(std::uint64_t));
  Probe* p = nullptr;  // the Probe's address, passed as a 64-bit scalar
  std::memcpy(&p, params[i], sizeof(std::uint64_t));
  return p;
}
inline HostBuffer& buffer_at(void* const* params, int i) { return *static_cast<HostBuffer*>(params[i]); }
inline std::int32_t int_at(void* const* params, int i) {
  std::int32_t v = 0;
  std::memcpy(&v, params[i], sizeof v);
  return v;
}

inline void count_host(void* const* params, const LaunchDims&) {
  Probe* p = probe_at(params, 0);
  {
    std::lock_guard lock(p->m);
    p->threads.insert(std::this_thread::get_id());
  }
  p->runs.fetch_add(1);
}

inline void gate_host(void* const* params, const LaunchDims&) {
  Probe* p = probe_at(params, 0);
  p->gate.arrive_and_wait();
  p->runs.fetch_add(1);
}

// (Probe*, buffer, value): waits at the gate, then fills the buffer.
inline void gate_fill_host(void* const* params, const LaunchDims&) {
  Probe* p = probe_at(params, 0);
  p->gate.arrive_and_wait();
  HostBuffer& b = buffer_at(params, 1);
  std::fill_n(b.data, b.len, int_at(params, 2));
  p->runs.fetch_add(1);
}

// (Probe*, buffer): runs, touching nothing.
inline void touch_host(void* const* params, const LaunchDims&) { probe_at(params, 0)->runs.fetch_add(1); }

// (buffer, delta): buffer[i] += delta.
inline void add_host(void* const* params, const LaunchDims&) {
  HostBuffer& b = buffer_at(params, 0);
  const std::int32_t delta = int_at(params, 1);
  for (std::uint64_t i = 0; i < b.len; ++i) {
    b.data[i] += delta;
  }
}

// (Probe*, index): appends index to the probe's order.
inline void order_host(void* const* params, const LaunchDims&) {
  Probe* p = probe_at(params, 0);
  std::lock_guard lock(p->m);
  p->order.push_back(int_at(params, 1));
}

// Counts kernels running at once; waits for a partner kernel to arrive.
inline void rendezvous_host(void* const* params, const LaunchDims&) {
  Probe* p = probe_at(params, 0);
  const int now = p->running.fetch_add(1) + 1;
  int seen = p->max_running.load();
  while (seen < now && !p->max_running.compare_exchange_weak(seen, now)) {
  }
  p->rendezvous.arrive_and_wait();  // opened by the test once both arrived
  p->running.fetch_sub(1);
}

inline constexpr ParamSlot kProbe[] = {{ParamKind::scalar, 8}};
inline constexpr ParamSlot kProbeBuffer[] = {{ParamKind::scalar, 8},
                                             {ParamKind::pointer_led, sizeof(DeviceBuffer)}};
inline constexpr ParamSlot kProbeBufferInt[] = {
    {ParamKind::scalar, 8}, {ParamKind::pointer_led, sizeof(DeviceBuffer)}, {ParamKind::scalar, 4}};
inline constexpr ParamSlot kBufferInt[] = {{ParamKind::pointer_led, sizeof(DeviceBuffer)},
                                           {ParamKind::scalar, 4}};
inline constexpr ParamSlot kProbeInt[] = {{ParamKind::scalar, 8}, {ParamKind::scalar, 4}};

inline const KernelSymbol kCount{.name = "count", .host = &count_host, .params = kProbe, .param_count = 1};
inline const KernelSymbol kGate{.name = "gate", .host = &gate_host, .params = kProbe, .param_count = 1};
inline const KernelSymbol kGateFill{
    .name = "gate_fill", .host = &gate_fill_host, .params = kProbeBufferInt, .param_count = 3};
inline const KernelSymbol kTouch{
    .name = "touch", .host = &touch_host, .params = kProbeBuffer, .param_count = 2};
inline const KernelSymbol kAdd{.name = "add", .host = &add_host, .params = kBufferInt, .param_count = 2};
inline const KernelSymbol kOrder{.name = "order", .host = &order_host, .params = kProbeInt, .param_count = 2};
inline const KernelSymbol kRendezvous{
    .name = "rendezvous", .host = &rendezvous_host, .params = kProbe, .param_count = 1};
inline const KernelSymbol kNoHost{.name = "device_only", .params = kProbe, .param_count = 1};

// --- fixture -------------------------------------------------------------------

inline ::testing::AssertionResult Ok(const Backend& b, const Result& r) {
  if (r.ok()) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << b.describe(r);
}

inline std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

class SimBackendTest : public ::testing::Test {
 protected:
  void SetUp() override { make_backend(SimConfig{}); }
  void TearDown() override {
    // A test that failed with a gate closed must not hang the drain.
    for (Probe* p : {&probe_, &holder_}) {
      p->gate.open();
      p->rendezvous.open();
    }
    sim_.reset();
  }

  void make_backend(SimConfig cfg) {
    sim_.reset();
    sim_ = std::make_unique<SimBackend>(cfg);
    ASSERT_TRUE(Ok(*sim_, sim_->primary_context_retain(0, ctx_)));
  }

  StreamHandle stream() {
    StreamHandle s;
    EXPECT_TRUE(Ok(*sim_, sim_->stream_create(ctx_, s)));
    return s;
  }
  EventHandle event() {
    EventHandle e;
    EXPECT_TRUE(Ok(*sim_, sim_->event_create(ctx_, e)));
    return e;
  }
  DevicePtr alloc(std::size_t bytes) {
    DevicePtr p = 0;
    EXPECT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, bytes, p)));
    return p;
  }
  void sync(StreamHandle s) { ASSERT_TRUE(Ok(*sim_, sim_->stream_synchronize(ctx_, s))); }

  Result launch(const KernelSymbol& k, StreamHandle s, std::vector<void*> params,
                std::vector<Access> accesses = {}) {
    FunctionHandle f;
    if (Result r = sim_->kernel_function(ctx_, k, f); !r.ok()) {
      return r;
    }
    LaunchRequest req;
    req.context = ctx_;
    req.function = f;
    req.symbol = &k;
    req.stream = s;
    req.params = params.data();
    req.accesses = accesses.data();
    req.access_count = static_cast<std::uint32_t>(accesses.size());
    return sim_->launch(req);
  }

  // Uploads `values` (int32) to a fresh allocation; returns its address.
  DevicePtr upload_ints(StreamHandle s, const std::vector<std::int32_t>& values) {
    const DevicePtr p = alloc(values.size() * sizeof(std::int32_t));
    EXPECT_TRUE(
        Ok(*sim_, sim_->upload_async(ctx_, p, values.data(), values.size() * sizeof(std::int32_t), s)));
    sync(s);
    return p;
  }
  std::vector<std::int32_t> download_ints(StreamHandle s, DevicePtr p, std::size_t n) {
    std::vector<std::int32_t> out(n);
    EXPECT_TRUE(Ok(*sim_, sim_->download_async(ctx_, out.data(), p, n * sizeof(std::int32_t), s)));
    sync(s);
    return out;
  }

  std::vector<Violation> violations_of(Violation::Kind kind) const {
    std::vector<Violation> out;
    for (const Violation& v : sim_->violations()) {
      if (v.kind == kind) {
        out.push_back(v);
      }
    }
    return out;
  }

  // Declared before sim_: kernels still queued when a test fails early can
  // reach them while the backend drains.
  Probe probe_;
  Probe holder_;
  std::uint64_t arg_ = reinterpret_cast<std::uintptr_t>(&probe_);
  std::uint64_t holder_arg_ = reinterpret_cast<std::uintptr_t>(&holder_);
  std::unique_ptr<SimBackend> sim_;
  ContextHandle ctx_;
};

}  // namespace tandem::driver::sim_test
