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
#include <thread>
#include <vector>

#include "tandem/recorder.hpp"

namespace tandem::detail {

class ScenarioWriter final : public Recorder {
 public:
  explicit ScenarioWriter(std::string path) : path_(std::move(path)) {}

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
  void on_wait_submission(std::uint64_t submission) override;
  void on_wait_stream(StreamRef stream) override;
  void on_wait_retirement() override;

  // The scenario as JSON text; write_file() puts it at the path given.
  [[nodiscard]] std::string text();
  void write_file();

 private:
  struct Step {
    std::string body;              // `{"op": ...` without its closing brace
    std::uint64_t submission = 0;  // a launch whose future may be named
  };
  // Appends a step of the calling thread (under mu_).
  void add(std::string body, std::uint64_t submission = 0);
  std::string stream_name(std::uint64_t id);
  std::string new_name(const ViewKey& key, char prefix);
  std::optional<std::string> name_of(const ViewKey& key) const;
  std::optional<std::string> take_name(const ViewKey& key);
  // The launch step (without its closing brace), or nullopt when it cannot be
  // replayed (counted in the description).
  std::optional<std::string> launch_body(StreamRef stream, const driver::KernelSymbol& symbol,
                                         const driver::LaunchDims& dims, void** params,
                                         std::span<const ViewAccess> accesses);
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
  std::uint64_t declared_launches_ = 0;  // written as declared_launch
  std::set<std::string> declared_kernels_;
  std::set<std::uint64_t> unknown_contents_;  // allocation ids (note_contents)
  std::uint64_t unchecked_reads_ = 0;         // read-backs of them, not written as checks
  std::optional<ConflictPolicy> policy_;
};

}  // namespace tandem::detail
