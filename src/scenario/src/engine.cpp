// SPDX-License-Identifier: Apache-2.0
// engine.cpp — the run: setup, repetitions of the body (steps, then the
// threads), the end-of-run measurements and the outcome.
#include "engine.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

#include "element_codec.hpp"
#include "sha256.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/refused_launch.hpp"
#include "tandem/testing/sim.hpp"

namespace tandem::scenario::detail {

namespace {

constexpr std::uint64_t kKernelInitBytes = std::uint64_t{64} << 20;  // larger fills run a kernel
constexpr std::uint64_t kDefaultVramTolerance = std::uint64_t{64} << 20;

}  // namespace

Engine::Engine(const Scenario& sc, const RunOptions& opt)
    : scenario(sc),
      options(opt),
      program(compile(sc)),
      session(sc, program),
      shadow_on(sc.threads.empty() && program.uses_shadow),
      handles(program.slot_names, shadow_on ? &shadow : nullptr),
      recorder(opt.progress, op_table().size()) {
  if (!sc.threads.empty()) shadow.disable("the scenario has threads");
}

void Engine::exec(const CompiledStep& st, ThreadState& t) { st.row->exec(*this, st, t); }

bool Engine::run_steps(std::span<const CompiledStep> steps, ThreadState& t) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const CompiledStep& cs = steps[i];
    const Step& st = *cs.step;
    std::optional<std::string> code;
    std::string message;
    const std::uint64_t t0 = clock.ticks();
    HandleTable::clear_refusal();
    try {
      exec(cs, t);
    } catch (const BodyEnded&) {
      for (std::size_t k = i + 1; k < steps.size(); ++k) t.rec->skipped.push_back(steps[k].step->path);
      return false;
    } catch (const Error& e) {
      code = std::string(error_code_name(e.code()));
      message = e.what();
      // Refused by a name before any runtime call: the runtime's hooks saw
      // nothing, so a recording hears of it here.
      if (HandleTable::refused()) record_refused_use(op_name(st.op), e.code());
    } catch (const std::bad_alloc&) {
      code = "out_of_memory";
      message = "host memory exhausted";
    } catch (const std::exception& e) {
      code = "unsupported";
      message = e.what();
    }
    t.rec->step_took(st.op, clock.ticks() - t0);
    recorder.step_done();
    if (st.expect_error) {
      const std::string actual = code.value_or("success");
      ojson actual_json = actual;
      if (code && *code != *st.expect_error) actual_json = {{"code", actual}, {"message", message}};
      record_check(t, st, "expect_error", *st.expect_error, actual_json, code && *code == *st.expect_error);
      continue;
    }
    if (code) {
      recorder.error(*t.rec, st, *code, message, repetition_);
      for (std::size_t k = i + 1; k < steps.size(); ++k) t.rec->skipped.push_back(steps[k].step->path);
      return false;
    }
  }
  return true;
}

void Engine::submitted(const CompiledStep& st, ThreadState& t, const LaunchFuture& f, std::uint64_t bytes,
                       std::uint64_t ticks, bool launch) {
  t.rec->submit_ns.record_single_writer(ticks);  // this thread's own
  if (!f.valid()) return;                        // captured into a graph: not a submission (yet)
  t.rec->submissions.add(1);
  if (launch) t.rec->launches.add(1);
  t.rec->bytes_moved.add(bytes);
  session.submitted_on(st.stream_index, f);
}

void Engine::name_future(const CompiledStep& st, LaunchFuture f) {
  if (st.id == kNoSlot) return;
  handles.put_future(st.id, std::move(f));
}

void Engine::name_new_buffer(const CompiledStep& st, ThreadState& t, View v) {
  if (shadow_on && v.valid()) shadow.on_alloc(v.allocation_id(), v.extent_bytes());
  // Another thread may have taken the name meanwhile (then this fails), or
  // drop it once it is in (the handle is kept for the init).
  const std::shared_ptr<Handle> h = handles.put_view(st.id, std::move(v));
  init_contents(st, t, h->view);
}

void Engine::init_contents(const CompiledStep& st, ThreadState& t, const View& v) {
  const ValueForm& form = st.step->init;
  if (form.kind == ValueForm::Kind::none) return;
  const Stream s = session.stream(handles, st);
  const ViewLayout layout = ViewLayout::of(v);
  const std::uint64_t n = v.element_count();
  const std::uint64_t bytes = n * v.element_size();
  const std::uint64_t t0 = clock.ticks();
  LaunchFuture f;
  if (form.kind == ValueForm::Kind::zero) {
    f = memset_bytes(s, v, 0);
    if (shadow_on) shadow.fill_bytes(layout, 0);
  } else {
    const kernels::KernelEntry* k = nullptr;
    if (bytes > kKernelInitBytes && !shadow_on &&
        (form.kind == ValueForm::Kind::fill || form.kind == ValueForm::Kind::iota)) {
      k = kernels::find(kernels::Model::simt, form.kind == ValueForm::Kind::fill ? "fill" : "iota",
                        v.dtype());
    }
    if (k != nullptr) {  // a large buffer: fill it on the device instead of staging it on the host
      std::vector<kernels::Arg> args{kernels::Arg::of(v)};
      if (form.kind == ValueForm::Kind::fill) {
        args.push_back(kernels::Arg::value(form.fill));
      } else {
        args.push_back(kernels::Arg::value(form.iota_start));
        args.push_back(kernels::Arg::value(form.iota_step));
      }
      f = kernels::launch(s, *k, args);
    } else {
      const std::vector<std::byte> data = make_elements(v.dtype(), form, n);
      f = upload(s, v, data);
      if (shadow_on) shadow.write(layout, data);
    }
  }
  submitted(st, t, f, bytes, clock.ticks() - t0, false);
}

// `len: {"fraction_of_free": f}`: floor(free x f / element size) elements,
// where free is the step's device's free memory when the run started, not
// now: a loop that sized each buffer from the memory left at that moment
// would shrink its buffers while earlier ones are still held and so never
// show whether dropped memory can be reused. The first use of each step
// notes the figures in the report.
std::uint64_t Engine::alloc_len(const CompiledStep& cs) {
  const Step& st = *cs.step;
  if (!st.len_fraction_of_free) return st.len;
  const std::uint32_t device = session.stream_device(st);
  const std::uint64_t free_bytes = session.start_free.at(device);
  const std::uint64_t es = dtype_size(*st.dtype);
  const auto share = static_cast<std::uint64_t>(
      std::floor(static_cast<long double>(free_bytes) * static_cast<long double>(*st.len_fraction_of_free)));
  const std::uint64_t n = share / es;
  if (!cs.noted->exchange(true)) {
    std::ostringstream note;
    note << st.path << ".len: fraction_of_free " << *st.len_fraction_of_free << " of the " << free_bytes
         << " bytes free on device " << device << " when the run started = " << n << " x "
         << dtype_name(*st.dtype) << " (" << n * es << " bytes)";
    recorder.note(note.str());
  }
  return n;
}

// One repetition: `steps` on this thread, then every `threads` entry on a
// host thread of its own.
void Engine::run_body() {
  const std::vector<std::unique_ptr<ThreadRecord>>& recs = recorder.threads();
  ThreadState main{recs[0].get(), nullptr};
  run_steps(program.steps, main);
  std::vector<std::thread> threads;
  threads.reserve(program.threads.size());
  for (std::size_t k = 0; k < program.threads.size(); ++k) {
    threads.emplace_back([this, k, rec = recs[k + 1].get()] {
      ThreadState t{rec, nullptr};
      run_steps(program.threads[k].second, t);
    });
  }
  for (std::thread& th : threads) th.join();
}

RunResult Engine::run() {
  const auto start = Clock::now();
  RunRecord& rec = recorder.run();
  rec.tool = {{"name", "tandem"}, {"version", options.tool_version}, {"git", options.tool_git}};
  rec.scenario = {
      {"name", scenario.name},
      {"file", scenario.file},
      {"sha256", options.file_text.empty() ? ojson(nullptr) : ojson(sha256_hex(options.file_text))}};
  repetitions_ = options.repeat.value_or(scenario.repeat);
  rec.repetitions = repetitions_;
  if (options.progress) options.progress->repetitions.store(repetitions_);
  for (std::size_t i = 0; i <= program.threads.size(); ++i) (void)recorder.add_thread();
  RunResult out;
  out.outcome = Outcome::pass;
  try {
    if (!session.open(options, rec)) {
      rec.status = "error";
      out.outcome = Outcome::unavailable;
    } else {
      for (const std::uint32_t d : scenario.devices) {
        session.mark_vram(d, session.free_after_trim(d));
        rec.vram_devices[d].baseline_free = session.vram_mark(d);
        session.start_free[d] = session.vram_mark(d);
      }
      rec.vram.baseline_free = session.vram_mark(scenario.device);
      rec.setup_s = std::chrono::duration<double>(Clock::now() - start).count();
      std::optional<TimelineSampler> sampler;
      if (options.timeline) sampler.emplace(recorder.timeline(), [this] { return memory_sample(); });
      for (repetition_ = 1; repetition_ <= repetitions_; ++repetition_) {
        if (options.progress) options.progress->repetition.store(repetition_);
        session.start_repetition(handles);
        const auto body_start = Clock::now();
        run_body();
        body_time_ += Clock::now() - body_start;
        handles.clear();  // dropping never waits for the GPU
        session.end_repetition();
        release_borrowed();
        recorder.merge_repetition();
      }
      repetition_ = repetitions_;
      const auto settle_start = Clock::now();
      measure_end();
      if (sampler) sampler->stop();
      rec.settle_s = std::chrono::duration<double>(Clock::now() - settle_start).count();
    }
  } catch (const Error& e) {
    rec.status = "error";
    rec.errors.push_back({"run", "setup", std::string(error_code_name(e.code())), e.what(), repetition_});
    out.outcome = Outcome::error;
  } catch (const std::exception& e) {
    rec.status = "error";
    rec.errors.push_back({"run", "setup", "driver", e.what(), repetition_});
    out.outcome = Outcome::error;
  }
  rec.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  recorder.merge_repetition();
  if (rec.status != "error") out.outcome = conclude();
  // One latency histogram per context (device): the report gives them together.
  LatencyHistogram retire_ns;
  for (const auto& [d, c] : session.contexts()) {
    if (const LatencyHistogram* h = c.retire_latency()) retire_ns.add(*h);
  }
  out.report = recorder.report(&retire_ns, clock.ns_per_tick());
  // Only now, with the report written, do forgotten handles go (they must
  // not be destroyed while the run measures them). A recording of the run
  // leaves them leaked, as the run measured them.
  const RecordingPause housekeeping;
  handles.release_forgotten();
  if (session.opened()) (void)session.platform().wait_for_retirement(std::chrono::seconds(60));
  session.borrowed().release_late();
  return out;
}

// The timeline's figures now, summed over the contexts. Never throws (the
// sampler's thread must not): a failed read is a sample of zeros.
TimelineSample Engine::memory_sample() const noexcept {
  TimelineSample t;
  try {
    const RuntimeStats s = session.total_stats();
    t.live_bytes = s.live_bytes;
    t.in_flight_bytes = s.awaiting_release_bytes + s.released_unproven_bytes;
    t.pending_submissions = s.pending_submissions;
  } catch (...) {  // NOLINT(bugprone-empty-catch): zeros say "not read", the run goes on
  }
  return t;
}

// The end of a repetition that borrowed (borrowed.hpp): the run lets go of
// its own references, waits for retirement, and checks and destroys what
// it made. A wait for retirement also waits until the streams nobody
// refers to are destroyed (they hold their context), so one round is
// normally enough for the runtime to let go of every borrowed context; a
// few more are asked for before a context still held fails its check.
void Engine::release_borrowed() {
  Borrowed& b = session.borrowed();
  if (!b.any()) return;
  b.let_go();
  for (int round = 0; round < 4; ++round) {
    if (!session.settle(kLongWait) || b.runtime_let_go()) break;
  }
  ThreadRecord& main = *recorder.threads()[0];
  for (BorrowCheck& c : b.release())
    recorder.check(main, *c.step, c.what, std::move(c.expected), std::move(c.actual), c.ok, repetition_);
}

Outcome Engine::conclude() {
  RunRecord& rec = recorder.run();
  const bool device_error = std::any_of(rec.errors.begin(), rec.errors.end(),
                                        [](const ErrorRecord& e) { return e.code == "driver"; });
  const bool checks_ok =
      std::all_of(rec.checks.begin(), rec.checks.end(), [](const CheckRecord& c) { return c.ok; });
  if (device_error) {
    rec.status = "error";
    return Outcome::error;
  }
  if (!checks_ok || !rec.errors.empty()) {
    rec.status = "fail";
    return Outcome::fail;
  }
  rec.status = "pass";
  return Outcome::pass;
}

void Engine::measure_end() {
  RunRecord& rec = recorder.run();
  const bool settled = session.settle(kLongWait);
  if (!settled) rec.notes.push_back("retirement had not settled 10 minutes after the body ended");
  const RuntimeStats s = session.total_stats();
  rec.live_allocations = s.live_allocations;
  rec.live_bytes = s.live_bytes;
  rec.quarantined_allocations = s.quarantined_allocations;
  rec.quarantined_bytes = s.quarantined_bytes;
  rec.foreign_owners_unreleased = s.foreign_owners_unreleased;
  rec.retired = s.retired_submissions;
  rec.runtime_uniqueness_checks = s.uniqueness_checks;
  rec.uniqueness_checks = handles.uniqueness_checks();
  rec.uniqueness_failures = handles.uniqueness_failures();
  rec.body_seconds = std::chrono::duration<double>(body_time_).count();
  measure_vram_end();
  if (driver::SimBackend* sim = session.sim()) {
    for (const driver::Violation& v : sim->violations()) {
      rec.violations.push_back({{"kind", driver::violation_kind_name(v.kind)}, {"detail", v.detail}});
    }
  }
  expectations();
}

// Devices without an explicit `vram check`: report the whole run's delta
// for information (the default expectations cover leaks through the live
// allocation count, which does not depend on other users of the GPU).
void Engine::measure_vram_end() {
  RunRecord& rec = recorder.run();
  for (const std::uint32_t d : scenario.devices) {
    VramRecord& r = rec.vram_devices[d];
    if (r.checked) continue;
    try {
      const std::uint64_t free_now = session.free_after_trim(d);
      const auto delta = static_cast<std::int64_t>(r.baseline_free) - static_cast<std::int64_t>(free_now);
      r.final_free = free_now;
      r.delta = delta;
      r.tolerance = kDefaultVramTolerance;
      r.ok = static_cast<std::uint64_t>(delta < 0 ? -delta : delta) <= kDefaultVramTolerance;
      if (d == scenario.device) rec.vram = r;
    } catch (const Error& e) {
      rec.notes.push_back("final free-memory measurement of device " + std::to_string(d) +
                          " failed: " + e.what());
    }
  }
  if (scenario.devices.size() < 2) rec.vram_devices.clear();  // one device: the top-level figures say it all
}

// End-of-run expectations, per repetition (a body that leaks one buffer
// leaks `repeat` of them).
void Engine::expectations() {
  RunRecord& rec = recorder.run();
  recorder.merge_repetition();
  const std::uint64_t n = repetitions_;
  auto expect = [&](const char* key, std::uint64_t expected_per_run, std::uint64_t actual) {
    const std::uint64_t expected = expected_per_run * n;
    rec.checks.push_back({std::string("expect.") + key, key, expected, actual, expected == actual, n});
  };
  const Expectations& e = scenario.expect;
  expect("live_allocations", e.live_allocations, rec.live_allocations);
  expect("quarantined_allocations", e.quarantined_allocations, rec.quarantined_allocations);
  expect("foreign_owners_unreleased", e.foreign_owners_unreleased, rec.foreign_owners_unreleased);
  expect("violations", e.violations, rec.violations.size());
  expect("uniqueness_failures", e.uniqueness_failures, rec.uniqueness_failures);
}

}  // namespace tandem::scenario::detail

namespace tandem::scenario {

RunResult run(const Scenario& scenario, const RunOptions& options) {
  detail::Engine e(scenario, options);
  return e.run();
}

}  // namespace tandem::scenario
