// SPDX-License-Identifier: Apache-2.0
#include "loaded_state.hpp"

#include <malloc.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "tandem/kernels/catalog.hpp"

namespace tandem_bench {

namespace {

namespace k = tandem::kernels;

constexpr tandem::driver::LaunchDims kOneBlock{{1, 1, 1}, {32, 1, 1}, 0};

// Bytes glibc has handed out, over all arenas (mmapped chunks included).
double heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

const k::KernelEntry& entry(k::Model m, const char* name, tandem::DType t) {
  const k::KernelEntry* e = k::find(m, name, t);
  if (e == nullptr) throw std::runtime_error(std::string("the catalog has no ") + name + " kernel");
  return *e;
}

// `spin` holding `holder` (it leases `bytes`) busy for `hold_ns`.
tandem::LaunchFuture launch_spin(const tandem::Stream& holder, const tandem::View& bytes,
                                 std::uint64_t hold_ns) {
  static const k::KernelEntry& spin = entry(k::Model::simt, "spin", tandem::DType::u8);
  auto p = bytes.buffer_param<std::uint8_t>();
  void* params[] = {&p, &hold_ns};
  const tandem::ViewAccess acc[] = {{&bytes, tandem::Access::read_write}};
  return tandem::launch(holder, *spin.symbol, kOneBlock, params, acc);
}

// One f32 copy, src -> dst, on `holder`.
tandem::LaunchFuture launch_copy(const tandem::Stream& holder, const tandem::View& src,
                                 const tandem::View& dst) {
  static const k::KernelEntry& copy = entry(k::Model::simt, "copy", tandem::DType::f32);
  auto ps = src.buffer_param<float>();
  auto pd = dst.buffer_param<float>();
  void* params[] = {&ps, &pd};
  const tandem::ViewAccess acc[] = {{&src, tandem::Access::read}, {&dst, tandem::Access::write}};
  return tandem::launch(holder, *copy.symbol, kOneBlock, params, acc);
}

std::unique_ptr<LoadedState>& slot() {
  static std::unique_ptr<LoadedState> s;
  return s;
}

}  // namespace

LoadedState& LoadedState::empty(Env& e) {
  static std::string failure;  // building it failed once: every benchmark that needs it says why, at once
  if (!failure.empty()) throw std::runtime_error(failure);
  if (!slot()) {
    try {
      slot() = std::make_unique<LoadedState>(e);
    } catch (const std::exception& ex) {
      failure = std::string("the loaded state: ") + ex.what();
      throw std::runtime_error(failure);
    }
    at_teardown([] { slot().reset(); });
  }
  if (slot()->loaded()) slot()->unload();
  return *slot();
}

LoadedState& LoadedState::ready(Env& e, std::chrono::milliseconds need) {
  static std::string failure;  // loading failed once: every loaded benchmark says why, at once
  if (!failure.empty()) throw std::runtime_error(failure);
  LoadedState& s = slot() ? *slot() : empty(e);
  if (!s.loaded() || Clock::now() + need > s.hold_until_) {
    try {
      s.load(kHold);
    } catch (const std::exception& ex) {
      failure = std::string("the loaded state: ") + ex.what();
      throw std::runtime_error(failure);
    }
  }
  return s;
}

LoadedState::LoadedState(Env& e) : e_(e) {
  holders_.reserve(kHolderStreams);
  for (int i = 0; i < kHolderStreams; ++i) {
    holders_.push_back(tandem::Stream::create(e.ctx));
    // 500 held a stream, past the default bound on the device's queue
    // (256): the holders alone go unbounded, the measured streams keep it.
    holders_.back().set_max_queued(0);
    holder_bytes_.push_back(tandem::allocate(holders_.back(), tandem::DType::u8, 256));
  }
  live_.reserve(kLiveAllocations);
  flight_.reserve(kInFlight);
  e.drain();
  warm_kernels();
}

void LoadedState::load(std::chrono::milliseconds hold) {
  if (!loaded()) {
    e_.drain();
    const bool first = heap_per_allocation_ == 0;
    const double h0 = heap_bytes();
    for (std::size_t i = 0; i < kLiveAllocations; ++i) {
      live_.push_back(tandem::allocate(e_.stream, tandem::DType::f32, 1));
    }
    // Every birth done: the holders' launches need no stream waits.
    e_.drain();
    if (first) heap_per_allocation_ = (heap_bytes() - h0) / static_cast<double>(kLiveAllocations);
  }
  arm(hold);
}

void LoadedState::unload() {
  for (const tandem::Stream& h : holders_) h.synchronize();  // the hold is over (a device wait)
  flight_.clear();
  live_.clear();
  hold_until_ = {};
  e_.drain();  // retired, and the allocations freed
}

LoadedState::~LoadedState() {
  try {
    for (const tandem::Stream& h : holders_) h.synchronize();
  } catch (const std::exception&) {  // the views are dropped anyway: retirement frees them later
  }
  flight_.clear();
  live_.clear();
  holder_bytes_.clear();
}

// The first launch of a kernel in a context loads its module, and the
// driver may wait for the device to do that: queued behind the spins, the
// first copy blocked for the whole hold (a run of only the loaded
// benchmarks, where nothing had launched a copy before). Both kernels run
// once here, on an idle device.
void LoadedState::warm_kernels() {
  const tandem::View a = tandem::allocate(holders_.front(), tandem::DType::f32, 1);
  const tandem::View b = tandem::allocate(holders_.front(), tandem::DType::f32, 1);
  (void)launch_spin(holders_.front(), holder_bytes_.front(), 0);
  (void)launch_copy(holders_.front(), a, b);
  holders_.front().synchronize();
}

void LoadedState::arm(std::chrono::milliseconds hold) {
  for (const tandem::Stream& h : holders_) h.synchronize();  // the last hold is over (a device wait)
  flight_.clear();                                           // their retirement is the runtime's business now

  const bool first = heap_per_submission_ == 0;
  const double h0 = heap_bytes();
  const auto t0 = Clock::now();
  const auto hold_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(hold).count());
  for (std::size_t i = 0; i < holders_.size(); ++i) (void)launch_spin(holders_[i], holder_bytes_[i], hold_ns);
  const std::size_t per_stream = kInFlight / holders_.size();
  std::optional<std::size_t> blocked_at;  // the first launch that waited for the device
  for (std::size_t j = 0; j < kInFlight; ++j) {
    const auto l0 = Clock::now();
    flight_.push_back(
        launch_copy(holders_[std::min(j / per_stream, holders_.size() - 1)], live_[2 * j], live_[2 * j + 1]));
    if (!blocked_at && Clock::now() - l0 > std::chrono::milliseconds(50)) blocked_at = j;
  }
  const auto armed = Clock::now() - t0;
  if (first) heap_per_submission_ = (heap_bytes() - h0) / static_cast<double>(kInFlight);
  hold_until_ = t0 + hold;
  if (armed > hold / 2 || blocked_at) {
    // Which queue was full: tandem's bound (a holder stream left bounded) or the driver's.
    const std::uint64_t waits = e_.ctx.stats().queue_waits;
    throw std::runtime_error(
        "queueing the " + std::to_string(kInFlight) + " held submissions took " +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(armed).count()) + " ms: " +
        (waits > 0
             ? "tandem's bound on the device's queue made " + std::to_string(waits) + " submissions wait"
             : std::string("the driver blocked")) +
        (blocked_at ? " at submission " + std::to_string(*blocked_at % per_stream) + " of a holder stream"
                    : "") +
        ", the load cannot be held");
  }
  if (const std::size_t n = in_flight(); n != kInFlight) {
    throw std::runtime_error("only " + std::to_string(n) + " of " + std::to_string(kInFlight) +
                             " held submissions stayed in flight");
  }
}

std::size_t LoadedState::in_flight() const {
  std::size_t n = 0;
  for (const tandem::LaunchFuture& f : flight_) n += f.done() ? 0 : 1;
  return n;
}

void LoadedState::check_held(benchmark::State& st, std::size_t at_start) const {
  const std::size_t at_end = in_flight();
  st.counters["live_allocations"] = static_cast<double>(e_.ctx.stats().live_allocations);
  st.counters["inflight_at_start"] = static_cast<double>(at_start);
  st.counters["inflight_at_end"] = static_cast<double>(at_end);
  if (at_end < kInFlight) {
    throw std::runtime_error("the held submissions retired during the measurement (" +
                             std::to_string(at_end) + " of " + std::to_string(kInFlight) +
                             " left; or a measured stream waited behind them): not a figure under load");
  }
}

}  // namespace tandem_bench
