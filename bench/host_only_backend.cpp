// SPDX-License-Identifier: Apache-2.0
#include "host_only_backend.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "bench_env.hpp"
#include "tandem/driver/backend.hpp"  // make_sim_backend
#include "tandem/driver/forwarding_backend.hpp"

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

// The driver's cuLaunchKernel runs microseconds of CPU work between two of
// tandem's launches and evicts much of what tandem's path touched from the
// core's first-level cache. TANDEM_BENCH_HOST_TOUCH_KB=N has every launch
// read and write N KiB of this thread's own buffer (one byte a line), so
// tandem's path finds its lines evicted as on the GPU; under cachegrind the
// D1 misses then attributed to tandem's functions count the lines it
// touches per launch. Default 0: nothing touched.
std::size_t touch_bytes() {
  const char* v = std::getenv("TANDEM_BENCH_HOST_TOUCH_KB");
  return (v ? std::strtoull(v, nullptr, 10) : 0) * 1024;
}

[[gnu::noinline]] void touch_driver_footprint(std::size_t bytes) noexcept {
  thread_local std::vector<unsigned char> buf;
  if (buf.size() < bytes) buf.resize(bytes);
  for (std::size_t i = 0; i < bytes; i += 64) buf[i] = static_cast<unsigned char>(buf[i] + 1);
}

// TANDEM_BENCH_HOST_FAKE_MEMORY=1 (diagnostic): stream-ordered allocations
// and frees return at once with addresses no memory backs (nothing reads
// them: this backend runs no kernel and copies nothing), instead of the
// sim's, whose every allocation writes its poison pattern. Then tandem's
// own allocation path (tracking, the drain of dropped frees, the drop) is
// what a host-only allocate + drop costs: to profile it (callgrind, perf)
// apart from the driver.
bool fake_memory() {
  const char* v = std::getenv("TANDEM_BENCH_HOST_FAKE_MEMORY");
  return v != nullptr && v[0] == '1';
}

// When each event's work completes, by event: an open-addressed table with
// exact keys (events are only ever added; a destroyed event's address that
// comes back reuses its slot). A slot is never shared: an event recorded
// behind a spin (completing seconds later) and one recorded on an idle
// stream must not overwrite each other's time.
class RecordTimes {
 public:
  // Recorded on a stream whose queued work starts at `start_ns`: complete
  // the event delay after it. False when the table is full.
  bool record(d::EventHandle e, std::uint64_t start_ns) noexcept {
    Slot* s = find(e.raw, true);
    if (s == nullptr) return false;
    s->start.store(start_ns, std::memory_order_release);
    return true;
  }
  // An event never recorded is complete, as in CUDA.
  [[nodiscard]] bool complete(d::EventHandle e) const noexcept {
    const Slot* s = find(e.raw, false);
    return s == nullptr || steady_ns() >= s->start.load(std::memory_order_acquire) + delay_;
  }

 private:
  // A power of two; 2^20 (16 MiB): host-only rates with several threads
  // (hundreds of thousands of submissions a second, TANDEM_BENCH_HOST_FAKE_MEMORY)
  // make more distinct events than 2^16, and a full table fails records.
  static constexpr std::size_t kSlots = std::size_t{1} << 20;
  struct Slot {
    std::atomic<void*> key{nullptr};
    std::atomic<std::uint64_t> start{0};
  };
  // The slots live behind a pointer: a lookup from a const method may
  // still claim a slot when `insert` asks for one.
  Slot* find(void* key, bool insert) const noexcept {
    const auto h =
        static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ULL);
    for (std::size_t i = 0; i < kSlots; ++i) {
      Slot& s = slots_[(h + i) & (kSlots - 1)];
      void* k = s.key.load(std::memory_order_acquire);
      if (k == key) return &s;
      if (k == nullptr) {
        if (!insert) return nullptr;
        if (s.key.compare_exchange_strong(k, key, std::memory_order_acq_rel) || k == key) return &s;
      }
    }
    return nullptr;
  }
  const std::uint64_t delay_ = event_delay_ns();
  std::unique_ptr<Slot[]> slots_ = std::make_unique<Slot[]>(kSlots);
};

// Streams held busy by a `spin` launch (the loaded state holds its
// submissions in flight behind one): until when, by stream. A fixed table
// scanned only while some stream spins; a stream without an entry is idle.
class BusyStreams {
 public:
  // Work queued on `s` now starts at this time (now, or when its spin ends).
  [[nodiscard]] std::uint64_t start_ns(d::StreamHandle s) const noexcept {
    const std::uint64_t now = steady_ns();
    if (used_.load(std::memory_order_acquire) == 0) return now;
    for (const Slot& e : slots_) {
      if (e.stream.load(std::memory_order_acquire) == s.raw) {
        const std::uint64_t until = e.until.load(std::memory_order_acquire);
        return until > now ? until : now;
      }
    }
    return now;
  }
  // A spin of `ns` queued on `s`: it runs after whatever `s` already holds.
  // False when the table is full (the launch is then refused).
  bool spin(d::StreamHandle s, std::uint64_t ns) noexcept {
    const std::uint64_t until = start_ns(s) + ns;
    for (Slot& e : slots_) {
      void* cur = e.stream.load(std::memory_order_acquire);
      if (cur == nullptr && e.stream.compare_exchange_strong(cur, s.raw, std::memory_order_acq_rel)) {
        used_.fetch_add(1, std::memory_order_acq_rel);
      }
      if (cur == nullptr || cur == s.raw) {
        e.until.store(until, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

 private:
  struct Slot {
    std::atomic<void*> stream{nullptr};
    std::atomic<std::uint64_t> until{0};
  };
  std::array<Slot, 64> slots_{};
  std::atomic<int> used_{0};
};

// The sim's memory, streams, events and kernels; what would reach the
// device returns at once. The sim's own queues hold only allocations and
// frees, so its stream synchronize stays.
class HostOnlyBackend final : public d::ForwardingBackend {
 public:
  HostOnlyBackend() : ForwardingBackend(d::make_sim_backend(d::SimConfig{})) {}

  std::string_view name() const noexcept override { return "host"; }
  std::string driver_version() const override { return "host-only (" + inner().driver_version() + ")"; }

  d::Result stream_query(d::ContextHandle, d::StreamHandle s) noexcept override {
    return busy_->start_ns(s) > steady_ns() ? d::Result{d::Status::not_ready, 0, "host-only spin"} : d::kOk;
  }
  d::Result stream_synchronize(d::ContextHandle ctx, d::StreamHandle s) noexcept override {
    while (busy_->start_ns(s) > steady_ns()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    return inner().stream_synchronize(ctx, s);
  }
  d::Result event_record(d::ContextHandle, d::EventHandle e, d::StreamHandle s) noexcept override {
    return times_->record(e, busy_->start_ns(s))
               ? d::kOk
               : d::Result{d::Status::out_of_memory, 0, "host-only: event table full"};
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
  d::Result download_async(d::ContextHandle, void*, d::DevicePtr, std::size_t,
                           d::StreamHandle) noexcept override {
    return d::kOk;
  }
  d::Result memset8_async(d::ContextHandle, d::DevicePtr, std::uint8_t, std::size_t,
                          d::StreamHandle) noexcept override {
    return d::kOk;
  }
  // Returns at once, except that a `spin` kernel (the catalog's: a buffer,
  // then its duration in ns) holds its stream busy for that long.
  d::Result launch(const d::LaunchRequest& r) noexcept override {
    if (touch_bytes_ != 0) touch_driver_footprint(touch_bytes_);
    if (!is_spin(r.symbol) || r.params == nullptr) return d::kOk;
    std::uint64_t ns = 0;
    std::memcpy(&ns, r.params[1], sizeof ns);
    return busy_->spin(r.stream, ns)
               ? d::kOk
               : d::Result{d::Status::invalid_value, 0, "host-only: too many spinning streams"};
  }
  // As the CUDA driver: launches ignore the declared accesses.
  [[nodiscard]] bool reads_declared_accesses() const noexcept override { return false; }
  d::Result graph_launch(d::ContextHandle, d::GraphHandle, d::StreamHandle) noexcept override {
    return d::kOk;
  }
  d::Result mem_alloc_async(d::ContextHandle ctx, d::PoolHandle p, std::size_t bytes, d::StreamHandle s,
                            d::DevicePtr& out) noexcept override {
    if (!fake_memory_) return inner().mem_alloc_async(ctx, p, bytes, s, out);
    // Never reused: 2^48 bytes of addresses outlast any benchmark.
    constexpr std::uint64_t kAlign = 256, kBase = std::uint64_t{1} << 40;
    out = kBase +
          next_fake_.fetch_add((bytes + kAlign - 1) / kAlign * kAlign + kAlign, std::memory_order_relaxed);
    return d::kOk;
  }
  d::Result mem_free_async(d::ContextHandle ctx, d::DevicePtr ptr, d::StreamHandle s) noexcept override {
    return fake_memory_ ? d::kOk : inner().mem_free_async(ctx, ptr, s);
  }
  d::Result mem_reuse_async(d::ContextHandle ctx, d::PoolHandle p, d::DevicePtr ptr, std::size_t bytes,
                            d::StreamHandle s) noexcept override {
    return fake_memory_ ? d::kOk : inner().mem_reuse_async(ctx, p, ptr, bytes, s);
  }

 private:
  // By name, remembered per thread for the last symbol (a name search per
  // launch would be most of what this backend costs).
  static bool is_spin(const d::KernelSymbol* k) noexcept {
    thread_local const d::KernelSymbol* last = nullptr;
    thread_local bool last_is_spin = false;
    if (k != last) {
      last = k;
      last_is_spin = k != nullptr && std::strstr(k->name, "spin") != nullptr;
    }
    return last_is_spin;
  }

  std::unique_ptr<RecordTimes> times_ = std::make_unique<RecordTimes>();
  std::unique_ptr<BusyStreams> busy_ = std::make_unique<BusyStreams>();
  const std::size_t touch_bytes_ = touch_bytes();
  const bool fake_memory_ = fake_memory();
  std::atomic<std::uint64_t> next_fake_{0};
};

}  // namespace

std::unique_ptr<tandem::driver::Backend> make_host_only_backend() {
  return std::make_unique<HostOnlyBackend>();
}

}  // namespace tandem_bench
