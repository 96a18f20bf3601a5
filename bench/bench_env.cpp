// SPDX-License-Identifier: Apache-2.0
#include "bench_env.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "driver_timing.hpp"
#include "host_only_backend.hpp"
#include "tandem/errors.hpp"

namespace tandem_bench {

namespace {

std::optional<Env>& env_slot() {
  static std::optional<Env> e;
  return e;
}

std::vector<std::function<void()>>& teardown_hooks() {
  static std::vector<std::function<void()>> hooks;
  return hooks;
}

tandem::Platform open_platform() {
  const char* b = std::getenv("TANDEM_BENCH_BACKEND");
  const std::string_view kind = b ? b : "cuda";
  if (kind == "sim") return tandem::Platform::sim();
  std::unique_ptr<tandem::driver::Backend> backend;
  if (kind == "host") {
    backend = make_host_only_backend();
  } else if (kind == "cuda") {
    std::string why;
    backend = tandem::driver::load_cuda_backend(why);
    if (!backend) throw std::runtime_error("the cuda backend is not available: " + why);
  } else {
    throw std::runtime_error("TANDEM_BENCH_BACKEND must be cuda, sim or host, not '" + std::string(kind) +
                             "'");
  }
  // TANDEM_BENCH_DRIVER_TIMING=1 (diagnostic): driver_timing.hpp.
  if (env_flag("TANDEM_BENCH_DRIVER_TIMING")) backend = make_driver_timing_backend(std::move(backend));
  return tandem::Platform::with_backend(std::move(backend));
}

// TANDEM_BENCH_SHARE_EVENTS=0 or 1: the context shares completion events
// or records one per submission (ContextOptions::share_completion_events);
// unset, the runtime's default (on).
tandem::ContextOptions context_options() {
  tandem::ContextOptions o;
  if (const char* v = std::getenv("TANDEM_BENCH_SHARE_EVENTS")) {
    const std::string_view s(v);
    if (s != "0" && s != "1")
      throw std::runtime_error("TANDEM_BENCH_SHARE_EVENTS must be 0 or 1, not '" + std::string(s) + "'");
    o.share_completion_events = s == "1";
  }
  return o;
}

}  // namespace

Env::Env(tandem::Platform p)
    : platform(std::move(p)),
      ctx(tandem::Context::create(platform.device(0), context_options())),
      stream(tandem::Stream::create(ctx)) {
  lanes.reserve(kMaxLanes);
  for (int i = 0; i < kMaxLanes; ++i) lanes.push_back(tandem::Stream::create(ctx));
  // TANDEM_BENCH_IDLE_EVENTS=N (diagnostic): N driver events, each recorded
  // once on `stream`, kept idle for the whole run: whether the driver's
  // launch and event calls slow with the events a context holds.
  if (const char* v = std::getenv("TANDEM_BENCH_IDLE_EVENTS")) {
    tandem::driver::Backend& b = platform.backend();
    for (long i = std::strtol(v, nullptr, 10); i > 0; --i) {
      tandem::driver::EventHandle ev;
      if (!b.event_create(ctx.native(), ev).ok() || !b.event_record(ctx.native(), ev, stream.native()).ok()) {
        throw std::runtime_error("TANDEM_BENCH_IDLE_EVENTS: making the idle events failed");
      }
    }
    stream.synchronize();
  }
  if (platform.backend_name() != "cuda") {
    raw_why = "the raw driver baseline needs the cuda backend (TANDEM_BENCH_BACKEND=" +
              std::string(platform.backend_name()) + ")";
  } else if (!raw.load(raw_why) && raw_why.empty()) {
    raw_why = "the raw driver entry points could not be loaded";
  }
}

Env* Env::instance(std::string& why) {
  static std::string failure;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      env_slot().emplace(open_platform());
    } catch (const std::exception& ex) {
      failure = std::string("no device for the benchmarks: ") + ex.what();
    }
  }
  why = failure;
  return env_slot() ? &*env_slot() : nullptr;
}

Env* Env::get(benchmark::State& st) {
  std::string why;
  Env* e = instance(why);
  if (e == nullptr) st.SkipWithError(why.c_str());
  return e;
}

const RawDriver* Env::raw_or_skip(benchmark::State& st) const {
  if (raw_why.empty()) return &raw;
  st.SkipWithError(raw_why.c_str());
  return nullptr;
}

void Env::drain() const {
  stream.synchronize();
  if (!ctx.wait_for_retirement(std::chrono::seconds(60))) {
    throw std::runtime_error("work on the benchmark context did not retire within 60 s");
  }
}

void* Env::function(const tandem::kernels::KernelEntry& k) const {
  tandem::driver::FunctionHandle f;
  const tandem::driver::Result r = platform.backend().kernel_function(ctx.native(), *k.symbol, f);
  if (!r.ok()) throw std::runtime_error("kernel_function: " + platform.backend().describe(r));
  return f.raw;
}

void at_teardown(std::function<void()> fn) { teardown_hooks().push_back(std::move(fn)); }

std::uint64_t teardown_and_count_live() {
  auto& hooks = teardown_hooks();
  for (auto it = hooks.rbegin(); it != hooks.rend(); ++it) (*it)();
  hooks.clear();
  if (!env_slot()) return 0;
  Env& e = *env_slot();
  e.drain();
  e.ctx.trim();  // waits for the runtime's own frees to reach the device
  const std::uint64_t live = e.ctx.stats().live_allocations;
  // Closed here, inside main(): the slot was made before tandem's own
  // process-wide state, so at exit it would be destroyed after it.
  env_slot().reset();
  return live;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || std::string_view(v) == "0") return false;
  if (std::string_view(v) != "1") {
    throw std::runtime_error(std::string(name) + " must be 0 or 1, not '" + std::string(v) + "'");
  }
  return true;
}

std::int64_t scaled(std::int64_t n) {
  static const double scale = [] {
    const char* s = std::getenv("TANDEM_BENCH_SCALE");
    const double v = s ? std::strtod(s, nullptr) : 1.0;
    return v > 0 ? v : 1.0;
  }();
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(n) * scale));
}

void Samples::report(benchmark::State& st, const char* unit) {
  if (v_.empty()) return;
  std::sort(v_.begin(), v_.end());
  const std::string u(unit);
  st.counters["p50_" + u] = v_[v_.size() / 2];
  st.counters["p99_" + u] = v_[std::min(v_.size() - 1, v_.size() * 99 / 100)];
  st.counters["max_" + u] = v_.back();
}

LeakWatch::LeakWatch(const Env& e) : e_(e) {
  e.drain();  // earlier benchmarks' frees done: the baseline is steady
  const tandem::RuntimeStats s = e.ctx.stats();
  live_ = s.live_allocations;
  quarantined_ = s.quarantined_submissions;
  submitted_ = s.submissions_total;
  shared_ = s.shared_event_submissions;
  tail_markers_ = s.quiet_tail_markers;
}

void LeakWatch::report(benchmark::State& st) const {
  e_.drain();
  const tandem::RuntimeStats s = e_.ctx.stats();
  st.counters["leaked_allocations"] =
      static_cast<double>(s.live_allocations > live_ ? s.live_allocations - live_ : 0);
  st.counters["quarantined_submissions"] = static_cast<double>(
      s.quarantined_submissions > quarantined_ ? s.quarantined_submissions - quarantined_ : 0);
  const std::uint64_t submitted = s.submissions_total - submitted_;
  st.counters["shared_event_fraction"] =
      submitted ? static_cast<double>(s.shared_event_submissions - shared_) / static_cast<double>(submitted)
                : 0.0;
  st.counters["quiet_tail_markers"] = static_cast<double>(s.quiet_tail_markers - tail_markers_);
}

}  // namespace tandem_bench
