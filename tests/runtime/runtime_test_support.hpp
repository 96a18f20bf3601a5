// SPDX-License-Identifier: Apache-2.0
// runtime_test_support.hpp — shared pieces of the runtime unit and stress
// tests: test-local kernels (host references only, module = nullptr), gates
// that hold simulated work in flight deterministically, and a fixture that
// makes a fresh simulated platform per test.
//
// Synchronization rule of these tests: no sleeps. Work is held in flight by
// kernels blocked on a Gate the test opens; the test waits with
// LaunchFuture::wait, wait_for_retirement, condition variables, or (for
// state changes the runtime publishes only through counters) `eventually`,
// which polls a predicate with yields under a generous deadline. Simulated
// stream delays are emulated device time, not synchronization.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "sanitizers.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernel_params.hpp"
#include "tandem/launch.hpp"
#include "tandem/launch_future.hpp"
#include "tandem/stats.hpp"
#include "tandem/stream.hpp"
#include "tandem/testing/sim.hpp"
#include "tandem/view.hpp"

#if defined(TANDEM_TEST_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace tandem::test {

using namespace std::chrono_literals;

// Generous bound for anything that should happen "soon" (sanitizer builds on
// two shared cores are slow). Only ever reached when the runtime is broken.
inline constexpr auto kPatience = std::chrono::seconds(30);

// Objects allocated on this thread while it lives are not reported as leaks
// (LeakSanitizer); a no-op in other builds.
class IntentionalLeakScope {
 public:
#if defined(TANDEM_TEST_ASAN)
  IntentionalLeakScope() { __lsan_disable(); }
  ~IntentionalLeakScope() { __lsan_enable(); }
#else
  IntentionalLeakScope() {}   // user-provided: a scope object, never "unused"
  ~IntentionalLeakScope() {}  // NOLINT(modernize-use-equals-default)
#endif
  IntentionalLeakScope(const IntentionalLeakScope&) = delete;
  IntentionalLeakScope& operator=(const IntentionalLeakScope&) = delete;
};

// --- gates -------------------------------------------------------------------

// Holds kernels (or owner callbacks) until the test opens it; counts arrivals.
class Gate {
 public:
  Gate() = default;
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  ~Gate() {
    std::unique_lock lock(m_);
    open_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return inside_ == 0; });
  }

  void pass() {
    std::unique_lock lock(m_);
    ++arrived_;
    ++inside_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    --inside_;
    cv_.notify_all();
  }
  // True once `n` arrived (false after `timeout`: a broken runtime).
  bool wait_arrivals(int n, std::chrono::nanoseconds timeout = kPatience) {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, timeout, [&] { return arrived_ >= n; });
  }
  void open() {
    std::lock_guard lock(m_);
    open_ = true;
    cv_.notify_all();
  }
  int arrived() {
    std::lock_guard lock(m_);
    return arrived_;
  }
  std::uint64_t token() const { return reinterpret_cast<std::uintptr_t>(this); }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int inside_ = 0;
  bool open_ = false;
};

// Two kernels meet here: each waits (up to a bound) for the other. `met`
// says whether they ran at the same time.
class Rendezvous {
 public:
  void arrive(std::chrono::nanoseconds timeout) {
    std::unique_lock lock(m_);
    ++arrived_;
    cv_.notify_all();
    if (cv_.wait_for(lock, timeout, [&] { return arrived_ >= 2; })) ++met_;
  }
  int met() {
    std::lock_guard lock(m_);
    return met_;
  }
  std::uint64_t token() const { return reinterpret_cast<std::uintptr_t>(this); }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int met_ = 0;
};

// Kernels append tags here (in the order they run on the device).
class Journal {
 public:
  void add(std::uint32_t tag) {
    std::lock_guard lock(m_);
    tags_.push_back(tag);
  }
  std::vector<std::uint32_t> tags() {
    std::lock_guard lock(m_);
    return tags_;
  }
  std::uint64_t token() const { return reinterpret_cast<std::uintptr_t>(this); }

 private:
  std::mutex m_;
  std::vector<std::uint32_t> tags_;
};

// --- kernels (host references; the sim translated the pointer-led params) ---

template <class T>
BufferParam<T>& buf_at(void* const* params, int i) {
  return *static_cast<BufferParam<T>*>(params[i]);
}
template <class T>
T scalar_at(void* const* params, int i) {
  T v{};
  std::memcpy(&v, params[i], sizeof v);
  return v;
}
template <class T>
T* object_at(void* const* params, int i) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(scalar_at<std::uint64_t>(params, i)));
}

// (out u32[], value, gate or 0, journal or 0, tag): [waits at the gate,]
// fills `out` with `value`, [appends `tag` to the journal].
inline void fill_host(void* const* params, const driver::LaunchDims&) {
  if (Gate* g = object_at<Gate>(params, 2)) g->pass();
  auto& out = buf_at<std::uint32_t>(params, 0);
  const auto value = scalar_at<std::uint32_t>(params, 1);
  for (std::uint64_t i = 0; i < out.len; ++i) out.data[i] = value;
  if (Journal* j = object_at<Journal>(params, 3)) j->add(scalar_at<std::uint32_t>(params, 4));
}

// (buf, gate, thread-id slot or 0): waits at the gate; touches no bytes.
inline void hold_host(void* const* params, const driver::LaunchDims&) {
  if (auto* tid = object_at<std::atomic<std::thread::id>>(params, 2)) {
    tid->store(std::this_thread::get_id());
  }
  if (Gate* g = object_at<Gate>(params, 1)) g->pass();
}

// (in u32[], out u64[1]): out[0] = sum(in).
inline void sum_host(void* const* params, const driver::LaunchDims&) {
  auto& in = buf_at<const std::uint32_t>(params, 0);
  auto& out = buf_at<std::uint64_t>(params, 1);
  std::uint64_t s = 0;
  for (std::uint64_t i = 0; i < in.len; ++i) s += in.data[i];
  if (out.len > 0) out.data[0] = s;
}

// (buf u32[], delta): buf[i] += delta.
inline void add_host(void* const* params, const driver::LaunchDims&) {
  auto& b = buf_at<std::uint32_t>(params, 0);
  const auto delta = scalar_at<std::uint32_t>(params, 1);
  for (std::uint64_t i = 0; i < b.len; ++i) b.data[i] += delta;
}

// (buf, rendezvous): meets another kernel (reads nothing).
inline void meet_host(void* const* params, const driver::LaunchDims&) {
  object_at<Rendezvous>(params, 1)->arrive(std::chrono::seconds(5));
}

inline constexpr std::uint16_t kBufSize = sizeof(BufferParam<std::uint32_t>);
inline constexpr driver::ParamSlot kFillParams[] = {{driver::ParamKind::pointer_led, kBufSize},
                                                    {driver::ParamKind::scalar, 4},
                                                    {driver::ParamKind::scalar, 8},
                                                    {driver::ParamKind::scalar, 8},
                                                    {driver::ParamKind::scalar, 4}};
inline constexpr driver::ParamSlot kHoldParams[] = {{driver::ParamKind::pointer_led, kBufSize},
                                                    {driver::ParamKind::scalar, 8},
                                                    {driver::ParamKind::scalar, 8}};
inline constexpr driver::ParamSlot kSumParams[] = {{driver::ParamKind::pointer_led, kBufSize},
                                                   {driver::ParamKind::pointer_led, kBufSize}};
inline constexpr driver::ParamSlot kAddParams[] = {{driver::ParamKind::pointer_led, kBufSize},
                                                   {driver::ParamKind::scalar, 4}};
inline constexpr driver::ParamSlot kMeetParams[] = {{driver::ParamKind::pointer_led, kBufSize},
                                                    {driver::ParamKind::scalar, 8}};

inline const driver::KernelSymbol kFill{
    .name = "test_fill_u32", .module = nullptr, .host = &fill_host, .params = kFillParams, .param_count = 5};
inline const driver::KernelSymbol kHold{
    .name = "test_hold", .module = nullptr, .host = &hold_host, .params = kHoldParams, .param_count = 3};
inline const driver::KernelSymbol kSum{
    .name = "test_sum_u32", .module = nullptr, .host = &sum_host, .params = kSumParams, .param_count = 2};
inline const driver::KernelSymbol kAdd{
    .name = "test_add_u32", .module = nullptr, .host = &add_host, .params = kAddParams, .param_count = 2};
inline const driver::KernelSymbol kMeet{
    .name = "test_meet", .module = nullptr, .host = &meet_host, .params = kMeetParams, .param_count = 2};

inline constexpr driver::LaunchDims kOneThread{};

// A BufferParam of any view (null for an invalid one, so a launch with a
// moved-from view reaches the runtime's own check).
template <class T>
BufferParam<T> param_of(const View& v) {
  if (!v.valid()) return {nullptr, 0};
  return v.buffer_param<T>();
}

// --- launch helpers ------------------------------------------------------------

struct FillOpts {
  Gate* gate = nullptr;
  Journal* journal = nullptr;
  std::uint32_t tag = 0;
  Access access = Access::write;
};

inline LaunchFuture fill(StreamRef s, const View& v, std::uint32_t value, FillOpts o = {}) {
  BufferParam<std::uint32_t> p = param_of<std::uint32_t>(v);
  std::uint64_t gate = o.gate ? o.gate->token() : 0;
  std::uint64_t journal = o.journal ? o.journal->token() : 0;
  std::uint32_t tag = o.tag;
  void* params[] = {&p, &value, &gate, &journal, &tag};
  const ViewAccess acc[] = {{&v, o.access}};
  return launch(s, kFill, kOneThread, params, acc);
}

// A kernel that declares `access` on `v` and blocks at `gate` (if any).
inline LaunchFuture hold(StreamRef s, const View& v, Access access, Gate* gate,
                         std::atomic<std::thread::id>* ran_on = nullptr) {
  BufferParam<std::uint32_t> p = param_of<std::uint32_t>(v);
  std::uint64_t g = gate ? gate->token() : 0;
  std::uint64_t t = reinterpret_cast<std::uintptr_t>(ran_on);
  void* params[] = {&p, &g, &t};
  const ViewAccess acc[] = {{&v, access}};
  return launch(s, kHold, kOneThread, params, acc);
}

inline LaunchFuture hold_many(StreamRef s, std::initializer_list<ViewAccess> accesses, Gate* gate) {
  BufferParam<std::uint32_t> p{nullptr, 0};
  std::uint64_t g = gate ? gate->token() : 0;
  std::uint64_t t = 0;
  void* params[] = {&p, &g, &t};
  return launch(s, kHold, kOneThread, params, std::span<const ViewAccess>(accesses.begin(), accesses.size()));
}

inline LaunchFuture meet(StreamRef s, const View& v, Access access, Rendezvous& r) {
  BufferParam<std::uint32_t> p = param_of<std::uint32_t>(v);
  std::uint64_t t = r.token();
  void* params[] = {&p, &t};
  const ViewAccess acc[] = {{&v, access}};
  return launch(s, kMeet, kOneThread, params, acc);
}

inline LaunchFuture add(StreamRef s, const View& v, std::uint32_t delta) {
  BufferParam<std::uint32_t> p = param_of<std::uint32_t>(v);
  void* params[] = {&p, &delta};
  const ViewAccess acc[] = {{&v, Access::read_write}};
  return launch(s, kAdd, kOneThread, params, acc);
}

inline LaunchFuture sum(StreamRef s, const View& in, const View& out) {
  BufferParam<std::uint32_t> pin = param_of<std::uint32_t>(in);
  BufferParam<std::uint64_t> pout = param_of<std::uint64_t>(out);
  void* params[] = {&pin, &pout};
  const ViewAccess acc[] = {{&in, Access::read}, {&out, Access::write}};
  return launch(s, kSum, kOneThread, params, acc);
}

inline std::vector<std::uint32_t> read_u32(StreamRef s, const View& v) {
  const std::vector<std::byte> raw = read_back(s, v, kPatience);
  std::vector<std::uint32_t> out(raw.size() / 4);
  std::memcpy(out.data(), raw.data(), out.size() * 4);
  return out;
}

inline LaunchFuture upload_u32(StreamRef s, const View& v, const std::vector<std::uint32_t>& values) {
  return upload(s, v, std::as_bytes(std::span<const std::uint32_t>(values)));
}

inline std::vector<std::uint32_t> iota_u32(std::size_t n, std::uint32_t first = 0) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = first + static_cast<std::uint32_t>(i);
  return v;
}

// Polls `pred` (yielding) until it holds or `timeout` passes. For state the
// runtime publishes only through counters (e.g. a dropped stream's record
// being destroyed after its work retired).
inline bool eventually(const std::function<bool()>& pred, std::chrono::nanoseconds timeout = kPatience) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Runs `fn` on another thread and reports whether it returned within
// `timeout`. If it did not, `unblock` is called (to open gates) and the
// thread is joined anyway, so a broken runtime fails the test, not the run.
inline bool returns_within(const std::function<void()>& fn, std::chrono::nanoseconds timeout,
                           const std::function<void()>& unblock) {
  std::promise<void> done;
  std::future<void> f = done.get_future();
  std::thread t([&] {
    fn();
    done.set_value();
  });
  const bool ok = f.wait_for(timeout) == std::future_status::ready;
  if (!ok) unblock();
  t.join();
  return ok;
}

template <class Fn>
ErrorCode error_code_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "expected a tandem::Error, none was thrown";
  return ErrorCode::unsupported;
}

template <class Fn>
std::string error_message_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a tandem::Error, none was thrown";
  return {};
}

#define EXPECT_TANDEM_ERROR(code, stmt) \
  EXPECT_EQ(::tandem::test::error_code_of([&] { (void)(stmt); }), (code))

// --- fixture -------------------------------------------------------------------

struct Env {
  Context ctx;
  Stream a;
  Stream b;
};

class RuntimeFixture : public ::testing::Test {
 protected:
  virtual driver::SimConfig config() const { return {}; }

  void SetUp() override {
    platform_.emplace(Platform::sim(config()));
    ASSERT_NE(testing::sim_backend(platform()), nullptr);
  }

  void TearDown() override {
    open_all_gates();
    if (platform_) {
      EXPECT_TRUE(platform().wait_for_retirement(kPatience)) << "work still pending at the end of the test";
      EXPECT_EQ(sim().violation_count(), 0U) << violations_text();
    }
    platform_.reset();
  }

  Platform& platform() { return *platform_; }
  driver::SimBackend& sim() { return *testing::sim_backend(platform()); }
  Device device() { return platform().device(0); }

  Env env(ConflictPolicy policy = ConflictPolicy::order) { return env_sharing(policy, false); }
  // One completion event per submission (the default, said explicitly):
  // for tests of exact fault attribution.
  Env exact_env(ConflictPolicy policy = ConflictPolicy::order) { return env_sharing(policy, false); }
  // ContextOptions::share_completion_events on.
  Env shared_env(ConflictPolicy policy = ConflictPolicy::order) { return env_sharing(policy, true); }
  Env env_sharing(ConflictPolicy policy, bool share_completion_events) {
    ContextOptions o;
    o.conflict_policy = policy;
    o.share_completion_events = share_completion_events;
    return env_with(o);
  }
  Env env_with(const ContextOptions& o) {
    Context ctx = Context::create(device(), o);
    Stream a = Stream::create(ctx);
    Stream b = Stream::create(ctx);
    return Env{ctx, a, b};
  }

  Gate& gate() {
    std::lock_guard lock(gates_mu_);
    gates_.push_back(std::make_unique<Gate>());
    return *gates_.back();
  }
  void open_all_gates() {
    std::lock_guard lock(gates_mu_);
    for (auto& g : gates_) g->open();
  }

  // Everything submitted so far has retired (or is quarantined).
  void settle() { ASSERT_TRUE(platform().wait_for_retirement(kPatience)); }

  std::string violations_text() {
    std::string s;
    for (const auto& v : sim().violations()) {
      s += std::string(driver::violation_kind_name(v.kind)) + ": " + v.detail + "\n";
    }
    return s;
  }

  // Device memory made "elsewhere" (by the driver directly) and adopted.
  driver::DevicePtr foreign_alloc(const Context& ctx, std::size_t bytes) {
    driver::DevicePtr p = 0;
    const driver::Result r = platform().backend().mem_alloc(ctx.native(), bytes, p);
    EXPECT_TRUE(r.ok()) << platform().backend().describe(r);
    return p;
  }

  // Parks the runtime's retirement thread inside a foreign owner callback
  // (which retirement runs when the last lease of an adopted buffer
  // retires) until `hold` opens. Returns once the thread is parked. Used to
  // let device work finish before retirement looks at it.
  void park_retirement(const Env& e, Gate& hold) {
    const driver::DevicePtr p = foreign_alloc(e.ctx, 64);
    Gate& kernel = gate();
    {
      View f = adopt(e.ctx, p, DType::u32, 16, [&hold, &be = platform().backend(), h = e.ctx.native(), p] {
        hold.pass();
        (void)be.mem_free(h, p);
      });
      (void)hold_many(e.b, {{&f, Access::write}}, &kernel);
      ASSERT_TRUE(kernel.wait_arrivals(1));
    }  // the last view goes while the kernel holds the lease
    kernel.open();
    ASSERT_TRUE(hold.wait_arrivals(1)) << "retirement never released the adopted buffer";
  }

  std::optional<Platform> platform_;
  std::mutex gates_mu_;
  // Destroyed after TearDown (which opened them and waited for retirement).
  std::vector<std::unique_ptr<Gate>> gates_;
};

}  // namespace tandem::test
