#include "host_only_backend.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tandem/driver/sim_backend.hpp"

namespace tandem_bench {

namespace {

namespace d = tandem::driver;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

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
  void record(d::EventHandle e) noexcept { slot(e).store(now_ns(), std::memory_order_relaxed); }
  [[nodiscard]] bool complete(d::EventHandle e) const noexcept {
    return now_ns() >= slot(e).load(std::memory_order_relaxed) + delay_;
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

class HostOnlyBackend final : public d::Backend {
 public:
  HostOnlyBackend() : sim_(d::SimConfig{}) {}

  std::string_view name() const noexcept override { return "host"; }
  std::string driver_version() const override { return "host-only (" + sim_.driver_version() + ")"; }
  std::string describe(const d::Result& r) const override { return sim_.describe(r); }

  d::Result device_count(int& out) noexcept override { return sim_.device_count(out); }
  d::Result device_info(int o, d::DeviceInfo& out) noexcept override { return sim_.device_info(o, out); }
  d::Result primary_context_retain(int o, d::ContextHandle& out) noexcept override {
    return sim_.primary_context_retain(o, out);
  }
  d::Result primary_context_release(int o) noexcept override { return sim_.primary_context_release(o); }
  d::Result context_create(int o, d::ContextHandle& out) noexcept override { return sim_.context_create(o, out); }
  d::Result context_destroy(d::ContextHandle c) noexcept override { return sim_.context_destroy(c); }
  d::Result context_device(d::ContextHandle c, int& o) noexcept override { return sim_.context_device(c, o); }
  d::Result device_can_access_peer(int o, int p, bool& out) noexcept override {
    return sim_.device_can_access_peer(o, p, out);
  }
  d::Result context_enable_peer_access(d::ContextHandle c, d::ContextHandle p) noexcept override {
    return sim_.context_enable_peer_access(c, p);
  }
  d::Result pool_grant_access(d::ContextHandle c, d::PoolHandle p, int peer) noexcept override {
    return sim_.pool_grant_access(c, p, peer);
  }

  d::Result stream_create(d::ContextHandle c, d::StreamHandle& out) noexcept override {
    return sim_.stream_create(c, out);
  }
  d::Result stream_destroy(d::ContextHandle c, d::StreamHandle s) noexcept override {
    return sim_.stream_destroy(c, s);
  }
  // The sim's own queue holds only allocations and frees here (events
  // recorded on it complete by their time, not by it).
  d::Result stream_synchronize(d::ContextHandle c, d::StreamHandle s) noexcept override {
    return sim_.stream_synchronize(c, s);
  }
  d::Result stream_query(d::ContextHandle, d::StreamHandle) noexcept override { return d::kOk; }

  d::Result event_create(d::ContextHandle c, d::EventHandle& out) noexcept override {
    return sim_.event_create(c, out);
  }
  d::Result event_destroy(d::ContextHandle c, d::EventHandle e) noexcept override {
    return sim_.event_destroy(c, e);
  }
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

  d::Result pool_create(d::ContextHandle c, d::PoolHandle& out) noexcept override { return sim_.pool_create(c, out); }
  d::Result pool_destroy(d::ContextHandle c, d::PoolHandle p) noexcept override { return sim_.pool_destroy(c, p); }
  d::Result pool_trim(d::ContextHandle c, d::PoolHandle p, std::size_t keep) noexcept override {
    return sim_.pool_trim(c, p, keep);
  }
  d::Result mem_alloc_async(d::ContextHandle c, d::PoolHandle p, std::size_t bytes, d::StreamHandle s,
                            d::DevicePtr& out) noexcept override {
    return sim_.mem_alloc_async(c, p, bytes, s, out);
  }
  d::Result mem_free_async(d::ContextHandle c, d::DevicePtr ptr, d::StreamHandle s) noexcept override {
    return sim_.mem_free_async(c, ptr, s);
  }
  d::Result mem_alloc(d::ContextHandle c, std::size_t bytes, d::DevicePtr& out) noexcept override {
    return sim_.mem_alloc(c, bytes, out);
  }
  d::Result mem_free(d::ContextHandle c, d::DevicePtr ptr) noexcept override { return sim_.mem_free(c, ptr); }
  d::Result mem_info(d::ContextHandle c, std::size_t& free_bytes, std::size_t& total) noexcept override {
    return sim_.mem_info(c, free_bytes, total);
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

  d::Result kernel_function(d::ContextHandle c, const d::KernelSymbol& k, d::FunctionHandle& out) noexcept override {
    return sim_.kernel_function(c, k, out);
  }
  d::Result launch(const d::LaunchRequest&) noexcept override { return d::kOk; }

  d::Result capture_begin(d::ContextHandle c, d::StreamHandle s) noexcept override { return sim_.capture_begin(c, s); }
  d::Result capture_end(d::ContextHandle c, d::StreamHandle s, d::GraphHandle& out) noexcept override {
    return sim_.capture_end(c, s, out);
  }
  d::Result graph_launch(d::ContextHandle, d::GraphHandle, d::StreamHandle) noexcept override { return d::kOk; }
  d::Result graph_destroy(d::ContextHandle c, d::GraphHandle g) noexcept override { return sim_.graph_destroy(c, g); }

 private:
  d::SimBackend sim_;
  std::unique_ptr<RecordTimes> times_ = std::make_unique<RecordTimes>();
};

}  // namespace

std::unique_ptr<tandem::driver::Backend> make_host_only_backend() { return std::make_unique<HostOnlyBackend>(); }

}  // namespace tandem_bench
