// SPDX-License-Identifier: Apache-2.0
// session.hpp — what a run runs on: the platform, a context per device the
// scenario uses, its streams per repetition, and the simulated device's
// controls. Everything here is set up before the steps run and torn down
// after; during the body the steps only read it, except the per-stream
// last submission (`wait stream`), the vram marks and what steps borrow
// (borrowed.hpp), which have locks.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "borrowed.hpp"
#include "program.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/launch_future.hpp"
#include "tandem/scenario/run_options.hpp"
#include "tandem/stats.hpp"
#include "tandem/stream.hpp"

namespace tandem::driver {
class SimBackend;
}

namespace tandem::scenario::detail {

class HandleTable;
struct RunRecord;

inline constexpr auto kLongWait = std::chrono::minutes(10);

class Session {
 public:
  Session(const Scenario& sc, const Program& program) : sc_(sc), program_(program) {}

  // Opens the backend and a context per device. False, with the reason in
  // `rec`, when the backend or a device is not available.
  bool open(const RunOptions& opt, RunRecord& rec);
  void start_repetition(HandleTable& handles);
  void end_repetition();

  [[nodiscard]] bool opened() const noexcept { return platform_.has_value(); }
  [[nodiscard]] const Platform& platform() const { return *platform_; }
  [[nodiscard]] driver::SimBackend* sim() const noexcept { return sim_; }
  [[nodiscard]] Context& ctx_of(std::uint32_t device);  // a device the scenario uses
  [[nodiscard]] const std::map<std::uint32_t, Context>& contexts() const noexcept { return ctxs_; }
  [[nodiscard]] std::uint32_t stream_device(const Step& st) const;
  // The step's stream: its slot's, or the run's private default.
  [[nodiscard]] Stream stream(HandleTable& handles, const CompiledStep& st) const;
  // The same without a copy (a copy is two atomic read-modify-writes on
  // the stream's count): the session's own stream where it holds it for the
  // whole repetition, else one looked up into `keep`.
  [[nodiscard]] const Stream& stream_ref(HandleTable& handles, const CompiledStep& st,
                                         std::optional<Stream>& keep) const {
    if (st.stream == kNoSlot) return *default_stream_;
    if (!program_.drops_streams && !program_.borrowed_stream(st)) return streams_[st.stream_index];
    return keep.emplace(stream(handles, st));
  }
  // The context of the step's stream: a declared stream's device's, or a
  // borrowed stream's own (foreign memory goes there).
  [[nodiscard]] Context step_context(HandleTable& handles, const CompiledStep& st);

  // Interop (borrowed.hpp). borrow_stream: a driver stream made outside the
  // runtime in the step's `context` (a borrowed context's handle) or the
  // scenario device's, borrowed; a `sim.stream_delay_us` entry of its name
  // applies. borrow_context: a driver context of the scenario's device,
  // borrowed with the run's context options.
  [[nodiscard]] Stream borrow_stream(HandleTable& handles, const CompiledStep& st);
  [[nodiscard]] Context borrow_context(const CompiledStep& st);
  [[nodiscard]] Borrowed& borrowed() noexcept { return borrowed_; }

  [[nodiscard]] bool settle(std::chrono::nanoseconds timeout) const;  // every context's work
  [[nodiscard]] RuntimeStats total_stats() const;                     // summed over the contexts
  [[nodiscard]] std::uint64_t free_after_trim(std::uint32_t device);  // trims the pool first

  // Reads for checks go to an internal stream of the view's device.
  [[nodiscard]] StreamRef check_stream_for(const View& v) const;
  [[nodiscard]] std::vector<std::byte> read_view(const View& v) const;

  // The last submission on each stream (`wait stream`).
  void submitted_on(std::uint32_t stream_index, const LaunchFuture& f) {
    if (program_.waits_on_streams)
      track_last(stream_index, f);  // else nobody asks (inline: every submission)
  }
  [[nodiscard]] LaunchFuture last_on(std::uint32_t stream_index);

  // A completion_unknown fault aimed at this step fires once per repetition.
  void arm_fault(const CompiledStep& st, const Stream& s);

  // Free memory per device: when the run started, and as marked.
  std::map<std::uint32_t, std::uint64_t> start_free;  // set before the first repetition, then read-only
  void mark_vram(std::uint32_t device, std::uint64_t free_bytes);
  [[nodiscard]] std::uint64_t vram_mark(std::uint32_t device);

 private:
  // The newest submission on the stream, for `wait` steps that name it.
  void track_last(std::uint32_t stream_index, const LaunchFuture& f);
  struct StreamTrack {
    base::Mutex mu;
    LaunchFuture last TANDEM_GUARDED_BY(mu);
  };

  const Scenario& sc_;
  const Program& program_;
  std::optional<Platform> platform_;
  std::optional<Context> ctx_;             // of the scenario's `device`
  std::map<std::uint32_t, Context> ctxs_;  // one per device used, ctx_ among them
  driver::SimBackend* sim_ = nullptr;
  std::optional<Stream> default_stream_;
  std::vector<Stream> streams_;  // this repetition's, by declared order (read-only while steps run)
  std::map<std::uint32_t, Stream> check_streams_;  // per device
  std::vector<std::unique_ptr<StreamTrack>> tracks_;
  std::unique_ptr<std::atomic<bool>[]> fired_;  // per fault index
  ContextOptions options_;                      // every context's, the borrowed ones' too
  Borrowed borrowed_;
  base::Mutex marks_mu_;
  std::map<std::uint32_t, std::uint64_t> marks_ TANDEM_GUARDED_BY(marks_mu_);
};

}  // namespace tandem::scenario::detail
