#include "host_only_backend.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "bench_env.hpp"
#include "tandem/driver/forwarding_backend.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem_bench {

namespace {

namespace d = tandem::driver;

// An event completes this long after its record, as a GPU's would after the
// empty kernel before it: retirement then lags the submitter as it does on
// the device, instead of settling each record the moment it is queued.
// TANDEM_BENCH_HOST_EVENT_US sets it (default 5).
std::uint64_t event_delay_ns() {
  const char* v = std::getenv("TANDEM_BENCH_HOST_EVENT_US");
  return (v ? std::strtoull(v, nullptr, 10) : 5) * 1000;
}

// When each event was last recorded, in a fixed table by handle: two events
// sharing a slot only make the older look pending longer, never done early.
class RecordTimes {
 public:
  void record(d::EventHandle e) noexcept { slot(e).store(steady_ns(), std::memory_order_relaxed); }
  [[nodiscard]] bool complete(d::EventHandle e) const noexcept {
    return steady_ns() >= slot(e).load(std::memory_order_relaxed) + delay_;
  }

 private:
  static constexpr std::size_t kSlots = 1 << 14;
  std::atomic<std::uint64_t>& slot(d::EventHandle e) const noexcept {
    const auto h = reinterpret_cast<std::uintptr_t>(e.raw);
    return slots_[(h >> 4) % kSlots];
  }
  const std::uint64_t delay_ = event_delay_ns();
  mutable std::array<std::atomic<std::uint64_t>, kSlots> slots_{};
};

// The sim's memory, streams, events and kernels; what would reach the
// device returns at once. The sim's own queues hold only allocations and
// frees, so its stream synchronize stays.
class HostOnlyBackend final : public d::ForwardingBackend {
 public:
  HostOnlyBackend() : ForwardingBackend(std::make_unique<d::SimBackend>(d::SimConfig{})) {}

  std::string_view name() const noexcept override { return "host"; }
  std::string driver_version() const override { return "host-only (" + inner().driver_version() + ")"; }

  d::Result stream_query(d::ContextHandle, d::StreamHandle) noexcept override { return d::kOk; }
  d::Result event_record(d::ContextHandle, d::EventHandle e, d::StreamHandle) noexcept override {
    times_->record(e);
    return d::kOk;
  }
  d::Result event_query(d::ContextHandle, d::EventHandle e) noexcept override {
    return times_->complete(e) ? d::kOk : d::Result{d::Status::not_ready, 0, "host-only event"};
  }
  d::Result event_synchronize(d::ContextHandle, d::EventHandle e) noexcept override {
    while (!times_->complete(e)) {
    }
    return d::kOk;
  }
  d::Result stream_wait_event(d::ContextHandle, d::StreamHandle, d::EventHandle) noexcept override {
    return d::kOk;
  }
  d::Result memcpy_async(d::ContextHandle, d::DevicePtr, d::DevicePtr, std::size_t,
                         d::StreamHandle) noexcept override {
    return d::kOk;
  }
  d::Result upload_async(d::ContextHandle, d::DevicePtr, const void*, std::size_t,
                         d::StreamHandle) noexcept override {
    return d::kOk;
  }
  d::Result download_async(d::ContextHandle, void*, d::DevicePtr, std::size_t, d::StreamHandle) noexcept override {
    return d::kOk;
  }
  d::Result memset8_async(d::ContextHandle, d::DevicePtr, std::uint8_t, std::size_t,
                          d::StreamHandle) noexcept override {
    return d::kOk;
  }
  d::Result launch(const d::LaunchRequest&) noexcept override { return d::kOk; }
  d::Result graph_launch(d::ContextHandle, d::GraphHandle, d::StreamHandle) noexcept override { return d::kOk; }

 private:
  std::unique_ptr<RecordTimes> times_ = std::make_unique<RecordTimes>();
};

}  // namespace

std::unique_ptr<tandem::driver::Backend> make_host_only_backend() { return std::make_unique<HostOnlyBackend>(); }

}  // namespace tandem_bench
