#include "driver_timing.hpp"

#include <atomic>
#include <thread>

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

class DriverTimingBackend final : public d::ForwardingBackend {
 public:
  explicit DriverTimingBackend(std::unique_ptr<d::Backend> inner)
      : ForwardingBackend(std::move(inner)), main_(std::this_thread::get_id()) {
    g_totals.store(&totals_, std::memory_order_release);
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

 private:
  template <class F>
  d::Result timed(DriverCall call, F f) noexcept {
    const std::uint64_t t0 = steady_ns();
    const d::Result r = f();
    const std::uint64_t dt = steady_ns() - t0;
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

bool driver_timing_on() { return g_totals.load(std::memory_order_acquire) != nullptr; }

DriverTimes driver_times() {
  DriverTimes out;
  const Totals* t = g_totals.load(std::memory_order_acquire);
  if (t == nullptr) return out;
  for (std::size_t i = 0; i < kDriverCalls; ++i) {
    out.main[i] = {t->main[i].calls.load(std::memory_order_relaxed), t->main[i].ns.load(std::memory_order_relaxed)};
    out.other[i] = {t->other[i].calls.load(std::memory_order_relaxed), t->other[i].ns.load(std::memory_order_relaxed)};
  }
  return out;
}

}  // namespace tandem_bench
