// SPDX-License-Identifier: Apache-2.0
// session.cpp — platform, contexts and streams of a run.
#include "session.hpp"

#include "handle_table.hpp"
#include "run_record.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/scenario/device_json.hpp"
#include "tandem/testing/sim.hpp"

namespace tandem::scenario::detail {

namespace {

[[noreturn]] void fail(ErrorCode code, std::string message) { throw Error(code, std::move(message)); }

ojson runtime_json(const ContextOptions& co) {
  return {{"share_completion_events", co.share_completion_events},
          {"measure_retirement_latency", co.measure_retirement_latency},
          {"conflict_policy", conflict_policy_name(co.conflict_policy)},
          {"out_of_memory_wait_ms",
           std::chrono::duration_cast<std::chrono::milliseconds>(co.out_of_memory_wait).count()}};
}

// Arms the faults that count calls from now (completion_unknown is armed
// per step, arm_fault). Two faults of one kind: the later one wins.
// Through the runtime (testing::sim_control), so that a recording of the
// run carries them.
void arm_counted_faults(const std::vector<SimFault>& faults, const Platform& p) {
  for (const SimFault& f : faults) {
    switch (f.kind) {
      case SimFault::Kind::completion_unknown:
        break;
      case SimFault::Kind::alloc_fail:
        testing::sim_control(p, SimControl::alloc_fail, nullptr, f.nth);
        break;
      case SimFault::Kind::alloc_error:
        testing::sim_control(p, SimControl::alloc_error, nullptr, f.nth);
        break;
      case SimFault::Kind::launch_fail:
        testing::sim_control(p, SimControl::launch_fail, nullptr, f.nth);
        break;
      case SimFault::Kind::copy_fail:
        testing::sim_control(p, SimControl::copy_fail, nullptr, f.nth);
        break;
    }
  }
}

}  // namespace

bool Session::open(const RunOptions& opt, RunRecord& rec) {
  const BackendKind kind = opt.backend.value_or(sc_.backend);
  driver::SimConfig cfg;
  cfg.memory_bytes = sc_.sim.memory_bytes;
  // The sim presents as many devices as the scenario uses.
  const std::uint32_t highest = sc_.devices.empty() ? sc_.device : *sc_.devices.rbegin();
  cfg.devices = static_cast<int>(highest) + 1;
  try {
    platform_ = opt.platform ? *opt.platform : Platform::open(kind, cfg);
  } catch (const Error& e) {
    rec.errors.push_back(
        {"backend", "open", std::string(error_code_name(e.code())),
         "backend '" + std::string(backend_kind_name(kind)) + "' is not available: " + e.what(), 0});
    return false;
  }
  rec.backend = std::string(platform_->backend_name());
  if (static_cast<int>(highest) >= platform_->device_count()) {
    rec.errors.push_back({"device", "open", "out_of_range",
                          "device " + std::to_string(highest) + " does not exist: the scenario uses " +
                              std::to_string(sc_.devices.size()) + " device(s) up to ordinal " +
                              std::to_string(highest) + ", backend '" + rec.backend + "' has " +
                              std::to_string(platform_->device_count()) + " device(s)",
                          0});
    return false;
  }
  rec.device = device_json(platform_->device(static_cast<int>(sc_.device)));
  sim_ = testing::sim_backend(*platform_);
  if (!sim_ && (!sc_.sim.faults.empty() || !sc_.sim.stream_delay_us.empty())) {
    rec.notes.push_back("the scenario's sim settings (faults, stream delays) are ignored on backend '" +
                        rec.backend + "'");
  }
  ContextOptions& co = options_;
  co.conflict_policy = sc_.conflict_policy;
  co.measure_retirement_latency = true;  // the report's retire_latency_us
  // Otherwise the runtime users get (completion events shared: a faulted
  // submission gets one of its own, arm_fault).
  rec.runtime = runtime_json(co);
  for (const std::uint32_t d : sc_.devices) {
    Context c = Context::create(platform_->device(static_cast<int>(d)), co);
    // Before any step: on CUDA a kernel's first load waits for the kernels
    // running on the device, which would let a long kernel finish (and
    // retire) inside a later launch step and change what the steps observe.
    kernels::load_catalog(c);
    ctxs_.emplace(d, std::move(c));
  }
  ctx_ = ctxs_.at(sc_.device);
  // Resolved by the runtime (ContextOptions leaves it to the environment's
  // TANDEM_MULTI_STREAM_RELEASE).
  rec.runtime["multi_stream_release"] = std::string(multi_stream_release_name(ctx_->multi_stream_release()));
  // And TANDEM_MAX_QUEUED (docs/runtime.md, "The bound on the device's queue").
  rec.runtime["max_queued_per_stream"] = ctx_->max_queued_per_stream();
  for (std::size_t i = 0; i < program_.stream_count(); ++i)
    tracks_.push_back(std::make_unique<StreamTrack>());
  fired_ = std::make_unique<std::atomic<bool>[]>(program_.fault_ids.size());
  return true;
}

void Session::start_repetition(HandleTable& handles) {
  for (std::size_t i = 0; i < program_.fault_ids.size(); ++i) fired_[i].store(false);
  for (auto& t : tracks_) {
    base::Guard g(t->mu);
    t->last = {};
  }
  for (std::size_t i = 0; i < sc_.streams.size(); ++i) {
    const std::string& name = sc_.streams[i];
    Stream s = Stream::create(ctx_of(sc_.stream_devices.at(name)));
    if (sim_) {
      auto d = sc_.sim.stream_delay_us.find(name);
      if (d != sc_.sim.stream_delay_us.end())
        testing::sim_control(*platform_, SimControl::stream_delay_us, &s, d->second);
    }
    streams_.push_back(s);
    handles.put_stream(program_.stream_slots[i], std::move(s));
  }
  default_stream_ = Stream::create(*ctx_);
  for (auto& [d, c] : ctxs_) check_streams_.insert_or_assign(d, Stream::create(c));
  if (sim_) arm_counted_faults(sc_.sim.faults, *platform_);
}

void Session::end_repetition() {
  for (auto& t : tracks_) {
    base::Guard g(t->mu);
    t->last = {};
  }
  default_stream_.reset();
  streams_.clear();
  check_streams_.clear();
  if (sim_) {
    for (const SimControl c :
         {SimControl::alloc_fail, SimControl::alloc_error, SimControl::launch_fail, SimControl::copy_fail})
      testing::sim_control(*platform_, c, nullptr, 0);
  }
}

Context& Session::ctx_of(std::uint32_t device) {
  auto it = ctxs_.find(device);
  // The loader adds every device a step names to sc_.devices.
  if (it == ctxs_.end())
    fail(ErrorCode::out_of_range, "device " + std::to_string(device) + " is not used by the scenario");
  return it->second;
}

std::uint32_t Session::stream_device(const Step& st) const {
  if (!st.stream && sc_.streams.empty()) return sc_.device;
  auto it = sc_.stream_devices.find(st.stream ? *st.stream : sc_.streams.front());
  return it == sc_.stream_devices.end() ? sc_.device : it->second;
}

Stream Session::stream(HandleTable& handles, const CompiledStep& st) const {
  if (st.stream == kNoSlot) return *default_stream_;
  // A scenario that never drops a declared stream cannot find one gone: no
  // look-up. A borrowed one lives in the handle table only.
  if (!program_.drops_streams && !program_.borrowed_stream(st)) return streams_[st.stream_index];
  return handles.stream(st.stream);
}

Context Session::step_context(HandleTable& handles, const CompiledStep& st) {
  if (program_.borrowed_stream(st)) return handles.stream(st.stream).context();
  return ctx_of(stream_device(*st.step));
}

Stream Session::borrow_stream(HandleTable& handles, const CompiledStep& st) {
  const Step& step = *st.step;
  const Context ctx = st.context == kNoSlot ? *ctx_ : handles.context(st.context);
  Stream s = borrowed_.stream(ctx, step.id, step);
  if (sim_) {
    auto d = sc_.sim.stream_delay_us.find(step.id);
    if (d != sc_.sim.stream_delay_us.end())
      testing::sim_control(*platform_, SimControl::stream_delay_us, &s, d->second);
  }
  return s;
}

Context Session::borrow_context(const CompiledStep& st) {
  return borrowed_.context(platform_->device(static_cast<int>(sc_.device)), options_, st.step->id, *st.step);
}

bool Session::settle(std::chrono::nanoseconds timeout) const {
  // The platform's scope covers a copy submitted on one device's stream
  // that leases (and retires on) another device's allocation.
  return platform_->wait_for_retirement(timeout);
}

RuntimeStats Session::total_stats() const {
  RuntimeStats t;
  std::vector<const Context*> all;
  for (const auto& [d, c] : ctxs_) all.push_back(&c);
  const std::vector<Context> borrowed = borrowed_.held_contexts();
  for (const Context& c : borrowed) all.push_back(&c);
  for (const Context* c : all) {
    const RuntimeStats s = c->stats();
    t.live_allocations += s.live_allocations;
    t.live_bytes += s.live_bytes;
    t.quarantined_allocations += s.quarantined_allocations;
    t.quarantined_bytes += s.quarantined_bytes;
    t.quarantined_submissions += s.quarantined_submissions;
    t.foreign_owners_unreleased += s.foreign_owners_unreleased;
    t.allocations_total += s.allocations_total;
    t.frees_total += s.frees_total;
    t.pending_submissions += s.pending_submissions;
    t.active_leases += s.active_leases;
    t.retired_submissions += s.retired_submissions;
    t.submissions_total += s.submissions_total;
    t.uniqueness_checks += s.uniqueness_checks;
    t.streams += s.streams;
    t.awaiting_release_bytes += s.awaiting_release_bytes;
    t.released_unproven_bytes += s.released_unproven_bytes;
  }
  return t;
}

std::uint64_t Session::free_after_trim(std::uint32_t device) {
  Context& c = ctx_of(device);
  c.trim();
  return c.memory_info().free_bytes;
}

StreamRef Session::check_stream_for(const View& v) const {
  // A view of a borrowed context reads back in that context.
  if (borrowed_.any() && v.valid()) {
    if (std::optional<StreamRef> s = borrowed_.check_stream(v.context().id())) return *s;
  }
  // The view's own device (a stream of another is device_mismatch).
  auto it = check_streams_.find(static_cast<std::uint32_t>(v.device_ordinal()));
  return it != check_streams_.end() ? StreamRef(it->second) : StreamRef(*default_stream_);
}

std::vector<std::byte> Session::read_view(const View& v) const {
  StreamRef s = check_stream_for(v);
  try {
    return read_back(s, v, kLongWait);
  } catch (const ConflictError&) {
    // reject policy: the read conflicts with work still in flight on another
    // stream. A check waits for it rather than failing the scenario.
    if (!settle(kLongWait)) throw;
    return read_back(s, v, kLongWait);
  }
}

void Session::track_last(std::uint32_t stream_index, const LaunchFuture& f) {
  StreamTrack& t = *tracks_[stream_index];
  base::Guard g(t.mu);
  t.last = f;
}

LaunchFuture Session::last_on(std::uint32_t stream_index) {
  StreamTrack& t = *tracks_[stream_index];
  base::Guard g(t.mu);
  return t.last;
}

void Session::arm_fault(const CompiledStep& st, const Stream& s) {
  if (sim_ == nullptr || st.fault < 0) return;
  if (fired_[st.fault].exchange(true)) return;
  // Its own completion event, and the work before it proven apart: the
  // fault, armed for the next event recorded on the stream, stays with
  // exactly this submission although the context shares events.
  s.isolate_next_submission();
  testing::sim_control(*platform_, SimControl::completion_unknown, &s, 0);
}

void Session::mark_vram(std::uint32_t device, std::uint64_t free_bytes) {
  base::Guard g(marks_mu_);
  marks_[device] = free_bytes;
}

std::uint64_t Session::vram_mark(std::uint32_t device) {
  base::Guard g(marks_mu_);
  return marks_[device];
}

}  // namespace tandem::scenario::detail
