// SPDX-License-Identifier: Apache-2.0
// tandem/recorder.hpp — the hook every public runtime call passes through,
// so that a process's runtime calls can be written down (TANDEM_RECORD,
// docs/runtime.md "Recording") without the runtime knowing the format.
//
// One Recorder is installed process-wide. While none is (the normal case)
// each hooked call pays one relaxed atomic load and a predicted branch;
// the launch path is performance-judged, so nothing else happens there.
// Hooks run on the calling thread, after the call succeeded (or, where it
// says so, with the error it failed with), and must not call back into
// the runtime. They may run on many threads at once.
#pragma once

#include <cstdint>
#include <span>

#include "tandem/context.hpp"
#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/errors.hpp"
#include "tandem/graph.hpp"
#include "tandem/launch.hpp"
#include "tandem/refused_launch.hpp"
#include "tandem/stats.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"
#include "tandem/view_key.hpp"

namespace tandem {

// How a recorded view was made from another one (or from nothing).
enum class ViewOrigin : std::uint8_t {
  allocate,
  adopt,
  slice,
  peel,
  atomic,
  as_buffer,
  tensor_view,
  to_tensor,
  into_buffer,
  reinterpret,
  split_low,
  split_high
};

// Everything a derivation was asked, whichever fields its origin uses.
struct DeriveArgs {
  std::uint64_t offset = 0;                  // slice
  std::uint64_t len = 0;                     // slice, allocate
  std::uint64_t index = 0;                   // peel; split: the split point
  std::span<const std::int64_t> shape = {};  // to_tensor, tensor_view (may be empty)
  std::span<const DimRange> ranges = {};     // tensor_view (may be empty)
  DType dtype = DType::u8;                   // reinterpret: the new type
};

// A control of the simulated device (tandem/testing/sim.hpp) that the
// recording carries in its "sim" section.
enum class SimControl : std::uint8_t {
  stream_delay_us,     // value: the delay; `stream` is set
  completion_unknown,  // armed for the next submission on `stream`
  alloc_fail,          // value: n (the nth call from now fails; 0 disarms)
  alloc_error,
  launch_fail,
  copy_fail
};

// A question a program asked of a view (View::is_unique, View::view_count).
enum class ViewQuery : std::uint8_t { unique, views };

class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual void on_stream_created(const Stream& stream) = 0;
  // `parent` is the source's key taken before the call (a consuming
  // conversion empties the source). Null for allocate.
  virtual void on_view_derived(ViewOrigin origin, const ViewKey* parent, const View& made,
                               const DeriveArgs& args, const StreamRef* stream) = 0;
  // A conversion that failed with `code`; the source is left intact.
  virtual void on_derive_failed(ViewOrigin origin, const ViewKey& parent, const DeriveArgs& args,
                                ErrorCode code) = 0;
  virtual void on_view_dropped(const View& view) = 0;
  virtual void on_launch(StreamRef stream, const driver::KernelSymbol& symbol, const driver::LaunchDims& dims,
                         void** params, std::span<const ViewAccess> accesses, std::uint64_t submission) = 0;
  // A launch that threw Error(code): nothing was submitted.
  virtual void on_launch_failed(StreamRef stream, const driver::KernelSymbol& symbol,
                                const driver::LaunchDims& dims, void** params,
                                std::span<const ViewAccess> accesses, ErrorCode code) = 0;
  // kind 'u' upload, 'm' memset, 'd' download, 'c' a read_back once read; `bytes` is the data uploaded
  // (one element of a memset's pattern) or read ('c').
  virtual void on_transfer(StreamRef stream, const View& view, char kind, std::span<const std::byte> bytes,
                           std::uint64_t submission) = 0;
  virtual void on_copy(StreamRef stream, const View& src, const View& dst, std::uint64_t submission) = 0;
  virtual void on_wait_submission(std::uint64_t submission) = 0;
  virtual void on_wait_stream(StreamRef stream) = 0;
  virtual void on_wait_retirement() = 0;

  // The hooks below have empty defaults: a Recorder written before them
  // still builds.
  // Context::borrow and Stream::borrow: driver objects made outside the runtime.
  virtual void on_context_borrowed(const Context& /*ctx*/) {}
  virtual void on_stream_borrowed(const Stream& /*stream*/) {}
  // Graph capture on `stream`: every hooked call the capturing thread makes
  // until it ends belongs to the graph. Abandoned: the graph was never made.
  virtual void on_capture_begun(StreamRef /*stream*/) {}
  virtual void on_capture_ended(StreamRef /*stream*/, const Graph& /*graph*/) {}
  virtual void on_capture_abandoned(StreamRef /*stream*/) {}
  virtual void on_graph_replayed(const Graph& /*graph*/, StreamRef /*stream*/, std::uint64_t /*submission*/) {
  }
  virtual void on_graph_replay_failed(const Graph& /*graph*/, StreamRef /*stream*/, ErrorCode /*code*/) {}
  // The last Graph handle of graph `id` went away (replays in flight may
  // still hold the graph itself).
  virtual void on_graph_dropped(std::uint64_t /*id*/) {}
  // An allocation that threw Error(code): nothing was made.
  virtual void on_allocate_failed(StreamRef /*stream*/, DType /*dtype*/, std::uint64_t /*len*/,
                                  ErrorCode /*code*/) {}
  // A transfer that threw Error(code): nothing was submitted (kinds as on_transfer: 'u' or 'd').
  virtual void on_transfer_failed(StreamRef /*stream*/, const View& /*view*/, char /*kind*/,
                                  std::span<const std::byte> /*bytes*/, ErrorCode /*code*/) {}
  virtual void on_copy_failed(StreamRef /*stream*/, const View& /*src*/, const View& /*dst*/,
                              ErrorCode /*code*/) {}
  // The wait for retirement this thread reported last (on_wait_retirement)
  // returned false: `timeout` passed before retirement settled.
  virtual void on_retirement_wait_timed_out(std::chrono::nanoseconds /*timeout*/) {}
  // Context::stats(): what the process saw of the context's counters.
  virtual void on_stats(const Context& /*ctx*/, const RuntimeStats& /*stats*/) {}
  virtual void on_sim_control(SimControl /*what*/, const StreamRef* /*stream*/, std::uint64_t /*value*/) {}
  // A catalog launch that a layer above the runtime refused with `code`
  // before calling tandem::launch (record_refused_launch,
  // tandem/refused_launch.hpp): nothing was submitted. A launch the runtime
  // itself refuses comes to on_launch_failed instead, never to both.
  virtual void on_launch_refused(const RefusedLaunch& /*what*/, ErrorCode /*code*/) {}
  // The last handle of a stream (owned or borrowed) was dropped; its work
  // in flight retires as usual.
  virtual void on_stream_dropped(std::uint64_t /*stream_id*/) {}
  // A call refused because a handle it names is gone or of the wrong kind
  // (record_refused_use; a derivation from a moved-from view): nothing
  // reached the runtime.
  virtual void on_use_refused(std::string_view /*op*/, ErrorCode /*code*/) {}
  // The program asked `what` of `view` and got `answer` (1/0 for unique).
  virtual void on_view_query(const View& /*view*/, ViewQuery /*what*/, std::uint64_t /*answer*/) {}
};

// While one lives, the calling thread's runtime calls are not recorded: a
// tool's own housekeeping that a user program would not do (the scenario
// engine releasing, after its report, the handles it leaked on purpose).
class RecordingPause {
 public:
  RecordingPause() noexcept;
  ~RecordingPause();
  RecordingPause(const RecordingPause&) = delete;
  RecordingPause& operator=(const RecordingPause&) = delete;
};

// Installs `r` (null: none) for the whole process; returns the previous one.
// The caller keeps `r` alive until it is uninstalled and every hook already
// running has returned.
Recorder* install_recorder(Recorder* r) noexcept;

}  // namespace tandem
