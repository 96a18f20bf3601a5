// SPDX-License-Identifier: Apache-2.0
// scenario_writer.hpp — a Recorder that writes what it saw as a
// tandem.scenario/1 file (docs/runtime.md "Recording"): handles get names,
// streams go to `streams`, the first recording thread's calls to `steps`
// and every other host thread's to `threads`.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tandem/recorder.hpp"

namespace tandem::detail {

class ScenarioWriter final : public Recorder {
 public:
  // The constructing thread is the recording's main thread (its calls go to
  // `steps`): TANDEM_RECORD makes the writer before main().
  explicit ScenarioWriter(std::string path) : path_(std::move(path)), main_(std::this_thread::get_id()) {}

  void on_stream_created(const Stream& stream) override;
  void on_view_derived(ViewOrigin origin, const ViewKey* parent, const View& made, const DeriveArgs& args,
                       const StreamRef* stream) override;
  void on_derive_failed(ViewOrigin origin, const ViewKey& parent, const DeriveArgs& args,
                        ErrorCode code) override;
  void on_view_dropped(const View& view) override;
  void on_launch(StreamRef stream, const driver::KernelSymbol& symbol, const driver::LaunchDims& dims,
                 void** params, std::span<const ViewAccess> accesses, std::uint64_t submission) override;
  void on_launch_failed(StreamRef stream, const driver::KernelSymbol& symbol, const driver::LaunchDims& dims,
                        void** params, std::span<const ViewAccess> accesses, ErrorCode code) override;
  void on_transfer(StreamRef stream, const View& view, char kind, std::span<const std::byte> bytes,
                   std::uint64_t submission) override;
  void on_copy(StreamRef stream, const View& src, const View& dst, std::uint64_t submission) override;
  void on_transfer_failed(StreamRef stream, const View& view, char kind, std::span<const std::byte> bytes,
                          ErrorCode code) override;
  void on_copy_failed(StreamRef stream, const View& src, const View& dst, ErrorCode code) override;
  void on_wait_submission(std::uint64_t submission) override;
  void on_wait_stream(StreamRef stream) override;
  void on_wait_retirement() override;
  void on_context_borrowed(const Context& ctx) override;
  void on_stream_borrowed(const Stream& stream) override;
  void on_capture_begun(StreamRef stream) override;
  void on_capture_ended(StreamRef stream, const Graph& graph) override;
  void on_capture_abandoned(StreamRef stream) override;
  void on_graph_replayed(const Graph& graph, StreamRef stream, std::uint64_t submission) override;
  void on_graph_replay_failed(const Graph& graph, StreamRef stream, ErrorCode code) override;
  void on_graph_dropped(std::uint64_t id) override;
  void on_allocate_failed(StreamRef stream, DType dtype, std::uint64_t len, ErrorCode code) override;
  void on_stats(const Context& ctx, const RuntimeStats& stats) override;
  void on_retirement_wait_timed_out(std::chrono::nanoseconds timeout) override;
  void on_sim_control(SimControl what, const StreamRef* stream, std::uint64_t value) override;
  void on_launch_refused(const RefusedLaunch& what, ErrorCode code) override;
  void on_view_query(const View& view, ViewQuery what, std::uint64_t answer) override;
  void on_use_refused(std::string_view op, ErrorCode code) override;
  void on_stream_dropped(std::uint64_t stream_id) override;

  // The scenario as JSON text; write_file() puts it at the path given.
  [[nodiscard]] std::string text();
  void write_file();

 private:
  struct Step {
    std::string body;              // `{"op": ...` without its closing brace
    std::uint64_t submission = 0;  // a launch whose future may be named
    bool bare_alloc = false;       // an alloc with no init yet: a zeroing memset next becomes its init
  };
  // Where the calling thread's steps go (under mu_): its graph capture's
  // body, `steps`, its `threads` entry, or nowhere (the main thread once
  // other threads began). outer_list() ignores a capture.
  std::vector<Step>* list();
  std::vector<Step>* outer_list();
  // Appends a step of the calling thread (under mu_).
  void add(std::string body, std::uint64_t submission = 0);
  // A submission on stream `stream_id`: it takes a completion_unknown fault
  // armed there (the step gets an id for the fault to name).
  void take_fault(std::uint64_t stream_id, std::uint64_t submission);
  // Steps as the file writes them (closed, ids added).
  std::vector<std::string> closed(const std::vector<Step>& steps) const;
  // `forget` steps for the handles still live at the end (leaked: a user
  // program's views never dropped, a scenario's forget), by the list that
  // made each; the `expect` and `sim` sections as text that follows
  // "threads" (empty when there is nothing to say).
  std::map<const std::vector<Step>*, std::vector<std::string>> forgets() const;
  std::string expect_section(bool leaks) const;
  std::string sim_section() const;
  std::string stream_name(std::uint64_t id);
  std::string new_name(const ViewKey& key, char prefix);
  std::optional<std::string> name_of(const ViewKey& key) const;
  // The key's newest name, no longer live; `reuse`: the list may name
  // something else so at once (else free_name once the step is written).
  std::optional<std::string> take_name(const ViewKey& key, bool reuse = true);
  void free_name(const std::string& name);
  // A launch not written (it cannot be replayed): counted in the description.
  void skip_launch(std::string_view kernel);
  // `{"op": "launch", ...` up to its args and scalars (lists of `"name": value`).
  std::string launch_head(std::string_view model, std::string_view kernel, StreamRef stream,
                          const std::string& args, const std::string& scalars);
  // The launch step (without its closing brace), or nullopt when it cannot be
  // replayed (counted in the description).
  std::optional<std::string> launch_body(StreamRef stream, const driver::KernelSymbol& symbol,
                                         const driver::LaunchDims& dims, void** params,
                                         std::span<const ViewAccess> accesses);
  // A launch refused above the runtime as asked; nullopt where a launch
  // step cannot say it (counted in the description).
  std::optional<std::string> refused_body(const RefusedLaunch& what);
  std::optional<std::string> transfer_body(StreamRef stream, const std::string& name, DType t, char kind,
                                           std::span<const std::byte> bytes, bool exact = false);
  std::string copy_body(StreamRef stream, const std::string& src, const std::string& dst);
  // A launch of a kernel without a catalog name as a declared_launch step:
  // its views and modes, replayed as leases with no body.
  std::optional<std::string> declared_body(StreamRef stream, const driver::KernelSymbol& symbol,
                                           const driver::LaunchDims& dims,
                                           std::span<const ViewAccess> accesses);
  // Allocations a launch wrote whose contents replay cannot reproduce: the
  // writes of a kernel replayed with no body, and of any launch that read
  // such contents.
  void note_contents(std::span<const ViewAccess> accesses, bool no_body);
  std::string derive_body(ViewOrigin origin, const std::string& id, const std::string& of,
                          const DeriveArgs& args, const View* made, const StreamRef* stream);

  std::string path_;
  std::mutex mu_;
  std::optional<std::thread::id> main_;
  bool others_started_ = false;
  std::map<std::thread::id, std::string> thread_names_;
  std::vector<Step> steps_;
  std::map<std::string, std::vector<Step>> threads_;
  std::map<std::uint64_t, std::string> streams_;  // stream id → name, in creation order of names
  std::vector<std::string> stream_order_;
  std::map<ViewKey, std::vector<std::string>> live_;
  std::set<std::uint64_t> waited_;
  std::set<std::uint64_t> named_;  // submissions a written step made
  std::uint64_t next_name_ = 0;
  std::string split_low_;  // the first half of a split in progress
  std::string split_of_;
  std::uint64_t unrecorded_launches_ = 0;
  std::set<std::string> unrecorded_kernels_;
  std::map<std::string, std::uint64_t> refused_uses_;  // by op: written as drops of "gone"
  std::uint64_t declared_launches_ = 0;                // written as declared_launch
  std::set<std::string> declared_kernels_;
  std::set<std::uint64_t> unknown_contents_;  // allocation ids (note_contents)
  std::uint64_t unchecked_reads_ = 0;         // read-backs of them, not written as checks
  std::optional<ConflictPolicy> policy_;
  std::map<std::string, std::vector<Step>*> made_in_;  // a handle's name → the list that made it
  // Names a list freed itself, by list and prefix, for it to reuse.
  std::map<std::pair<const std::vector<Step>*, char>, std::set<std::uint64_t>> free_names_;
  std::map<std::thread::id, std::vector<Step>> captures_;  // per capturing thread: the graph's body
  std::map<std::uint64_t, std::string> graphs_;            // live graph id → name
  std::map<std::uint64_t, std::string> contexts_;          // borrowed context id → name
  std::map<std::uint64_t, std::string> context_streams_;  // borrowed context id → its first borrowed stream
  std::uint64_t borrowed_streams_ = 0;
  // The "sim" section: stream delays by name, counted faults by kind (the
  // later arming wins, as in the engine), completion_unknown faults by the
  // submission id they name.
  std::uint64_t sim_memory_ = 0;  // the sim's capacity when not the default
  std::map<std::string, std::uint64_t> delays_us_;
  std::map<std::string, std::uint64_t> counted_faults_;
  std::set<std::uint64_t> unknown_armed_;  // stream ids
  std::set<std::uint64_t> faulted_;        // submissions that took completion_unknown
  // The counters each context last showed Context::stats().
  struct Seen {
    std::uint64_t live = 0, quarantined = 0, foreign = 0;
  };
  std::map<std::uint64_t, Seen> seen_;
};

}  // namespace tandem::detail
