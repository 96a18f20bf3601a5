// SPDX-License-Identifier: Apache-2.0
#include "driver_timing.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_env.hpp"
#include "tandem/driver/forwarding_backend.hpp"

namespace tandem_bench {

namespace {

namespace d = tandem::driver;

struct Slot {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> ns{0};
};

struct Totals {
  std::array<Slot, kDriverCalls> main;
  std::array<Slot, kDriverCalls> other;
};

std::atomic<Totals*> g_totals{nullptr};

// TANDEM_BENCH_DRIVER_LOG=path (with TANDEM_BENCH_DRIVER_TIMING=1): every
// timed call, and the stream-ordered allocations and frees, one entry each
// (start, end, call, main thread or not, status), in a buffer sized once
// so that logging allocates nothing; driver_log_dump() writes it out.
struct LogEntry {
  std::uint64_t t0, t1;
  std::uint32_t call, main;
  std::int32_t status;
};
constexpr std::size_t kLogEntries = 2'000'000;
std::vector<LogEntry> g_log;
std::atomic<std::size_t> g_log_n{0};
std::atomic<bool> g_log_on{false};
std::thread::id g_log_main;

void log_add(std::uint32_t call, std::uint64_t t0, std::uint64_t t1, int status) {
  if (!g_log_on.load(std::memory_order_relaxed)) return;
  const std::size_t i = g_log_n.fetch_add(1, std::memory_order_relaxed);
  if (i < g_log.size()) g_log[i] = {t0, t1, call, std::this_thread::get_id() == g_log_main ? 1U : 0U, status};
}

class DriverTimingBackend final : public d::ForwardingBackend {
 public:
  explicit DriverTimingBackend(std::unique_ptr<d::Backend> inner)
      : ForwardingBackend(std::move(inner)), main_(std::this_thread::get_id()) {
    g_totals.store(&totals_, std::memory_order_release);
    if (std::getenv("TANDEM_BENCH_DRIVER_LOG") != nullptr) {
      g_log.resize(kLogEntries);
      g_log_main = main_;
      g_log_on.store(true, std::memory_order_release);
    }
  }
  ~DriverTimingBackend() override { g_totals.store(nullptr, std::memory_order_release); }
  DriverTimingBackend(const DriverTimingBackend&) = delete;
  DriverTimingBackend& operator=(const DriverTimingBackend&) = delete;

  d::Result launch(const d::LaunchRequest& r) noexcept override {
    return timed(DriverCall::launch, [&] { return inner().launch(r); });
  }
  d::Result event_record(d::ContextHandle c, d::EventHandle e, d::StreamHandle s) noexcept override {
    return timed(DriverCall::event_record, [&] { return inner().event_record(c, e, s); });
  }
  d::Result event_query(d::ContextHandle c, d::EventHandle e) noexcept override {
    return timed(DriverCall::event_query, [&] { return inner().event_query(c, e); });
  }
  d::Result stream_wait_event(d::ContextHandle c, d::StreamHandle s, d::EventHandle e) noexcept override {
    return timed(DriverCall::stream_wait_event, [&] { return inner().stream_wait_event(c, s, e); });
  }
  // Logged only (no totals).
  d::Result mem_free_async(d::ContextHandle c, d::DevicePtr p, d::StreamHandle s) noexcept override {
    std::uint64_t dt = 0;
    return logged(kLogFree, dt, [&] { return inner().mem_free_async(c, p, s); });
  }
  d::Result mem_alloc_async(d::ContextHandle c, d::PoolHandle p, std::size_t n, d::StreamHandle s,
                            d::DevicePtr& out) noexcept override {
    std::uint64_t dt = 0;
    return logged(kLogAlloc, dt, [&] { return inner().mem_alloc_async(c, p, n, s, out); });
  }

 private:
  // Runs `f`, logs it as `call` and sets `dt` to its duration.
  template <class F>
  static d::Result logged(std::uint32_t call, std::uint64_t& dt, F f) noexcept {
    const std::uint64_t t0 = steady_ns();
    const d::Result r = f();
    const std::uint64_t t1 = steady_ns();
    dt = t1 - t0;
    log_add(call, t0, t1, static_cast<int>(r.status));
    return r;
  }
  template <class F>
  d::Result timed(DriverCall call, F f) noexcept {
    std::uint64_t dt = 0;
    const d::Result r = logged(static_cast<std::uint32_t>(call), dt, f);
    auto& slots = std::this_thread::get_id() == main_ ? totals_.main : totals_.other;
    Slot& s = slots[static_cast<std::size_t>(call)];
    s.calls.fetch_add(1, std::memory_order_relaxed);
    s.ns.fetch_add(dt, std::memory_order_relaxed);
    return r;
  }

  const std::thread::id main_;
  Totals totals_;
};

}  // namespace

namespace {

// `a` with `b`'s counts added (sign 1) or taken away (sign -1), slot by slot.
DriverTimes combined(DriverTimes a, const DriverTimes& b, std::uint64_t sign) {
  for (auto [to, from] : {std::pair{&a.main, &b.main}, std::pair{&a.other, &b.other}}) {
    for (std::size_t i = 0; i < kDriverCalls; ++i) {
      (*to)[i].calls += sign * (*from)[i].calls;  // unsigned: -1 wraps to a subtraction
      (*to)[i].ns += sign * (*from)[i].ns;
    }
  }
  return a;
}

}  // namespace

DriverTimes DriverTimes::since(const DriverTimes& earlier) const {
  return combined(*this, earlier, static_cast<std::uint64_t>(-1));
}

DriverTimes& DriverTimes::operator+=(const DriverTimes& more) { return *this = combined(*this, more, 1); }

std::unique_ptr<d::Backend> make_driver_timing_backend(std::unique_ptr<d::Backend> inner) {
  return std::make_unique<DriverTimingBackend>(std::move(inner));
}

void driver_log_mark(std::uint32_t what) {
  const std::uint64_t t = steady_ns();
  log_add(what, t, t, 0);
}

void driver_log_dump() {
  const char* path = std::getenv("TANDEM_BENCH_DRIVER_LOG");
  if (path == nullptr || !g_log_on.load(std::memory_order_acquire)) return;
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) throw std::runtime_error(std::string("TANDEM_BENCH_DRIVER_LOG: cannot write ") + path);
  std::fprintf(f,
               "# t0_ns t1_ns call main status; calls: 0 launch 1 event_record 2 event_query "
               "3 stream_wait_event 10 mem_free_async 11 mem_alloc_async, marks 100 and up "
               "(driver_timing.hpp); main: 1 = the benchmark thread\n");
  const std::size_t n = std::min(g_log_n.load(), g_log.size());
  for (std::size_t i = 0; i < n; ++i) {
    const LogEntry& e = g_log[i];
    std::fprintf(f, "%llu %llu %u %u %d\n", static_cast<unsigned long long>(e.t0),
                 static_cast<unsigned long long>(e.t1), e.call, e.main, e.status);
  }
  std::fclose(f);
}

bool driver_timing_on() { return g_totals.load(std::memory_order_acquire) != nullptr; }

DriverTimes driver_times() {
  DriverTimes out;
  const Totals* t = g_totals.load(std::memory_order_acquire);
  if (t == nullptr) return out;
  for (std::size_t i = 0; i < kDriverCalls; ++i) {
    out.main[i] = {t->main[i].calls.load(std::memory_order_relaxed),
                   t->main[i].ns.load(std::memory_order_relaxed)};
    out.other[i] = {t->other[i].calls.load(std::memory_order_relaxed),
                    t->other[i].ns.load(std::memory_order_relaxed)};
  }
  return out;
}

}  // namespace tandem_bench
