// SPDX-License-Identifier: Apache-2.0
// program.hpp — a scenario compiled once before it runs: handle names become
// slot indices, streams indices, launches a plan with their parameters laid
// out and scalars packed, fault targets flags. Running a step then does no
// string or map lookup; names are read only to build an error message.
//
// A compiled step is run by one host thread at a time (the thread whose
// list holds it), so its scratch state (a launch's last resolution and
// argument vectors) needs no lock.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "op_table.hpp"
#include "shadow.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/scenario/scenario.hpp"

namespace tandem::scenario::detail {

using Slot = std::uint32_t;
inline constexpr Slot kNoSlot = std::numeric_limits<Slot>::max();

struct Handle;

// A launch step's kernel: the catalog's parameters, which slot each view
// parameter reads and the packed scalars. The entry is resolved against the
// views' shapes at run time (handles are dynamic) and kept while they repeat.
struct LaunchPlan {
  std::span<const kernels::ParamSpec> params;
  std::vector<Slot> view_slots;        // per parameter; kNoSlot for scalars
  std::vector<kernels::Arg> args;      // scalars packed; views set per run
  std::vector<ShadowArg> shadow_args;  // scalars set; views per run
  std::optional<driver::Dim3> grid, block;
  kernels::TileShape tile;
  bool has_tile = false;
  // Scratch of the one thread that runs the step.
  std::vector<kernels::ArgShape> shapes;
  std::vector<std::shared_ptr<Handle>> held;
  std::vector<kernels::ArgShape> resolved_shapes;
  const kernels::KernelEntry* resolved = nullptr;
  // The last binding, kept in a run without `threads`: while the handle
  // table's epoch stays `bound_epoch`, every slot holds the same handle, so
  // `args` (pointing into those handles' views), `resolved` and
  // `bound_bytes` still hold and the step neither looks up nor holds them
  // (the slots do, and only this thread could change them).
  std::uint64_t bound_epoch = kNotBound;
  std::uint64_t bound_bytes = 0;
  std::vector<const Handle*> bound;  // per view parameter, in order
  static constexpr std::uint64_t kNotBound = std::numeric_limits<std::uint64_t>::max();
};

// A declared_launch step: the slot of each view it declares, in order, and
// the thread's scratch for the call.
struct DeclaredPlan {
  std::vector<Slot> slots;
  driver::LaunchDims dims;
  std::vector<std::shared_ptr<Handle>> held;
  std::vector<ViewAccess> accesses;
};

struct CompiledStep {
  const Step* step = nullptr;
  const OpRow* row = nullptr;
  Slot id = kNoSlot, of = kNoSlot, from = kNoSlot, src = kNoSlot, dst = kNoSlot, buf = kNoSlot,
       graph = kNoSlot, a = kNoSlot, b = kNoSlot;
  std::array<Slot, 2> ids{kNoSlot, kNoSlot};
  Slot stream = kNoSlot;  // the stream's slot; kNoSlot = the run's private default stream
  // Per-stream bookkeeping: the declared streams in order, then the
  // borrowed ones (Scenario::borrowed_streams), the default stream last.
  std::uint32_t stream_index = 0;
  Slot context = kNoSlot;  // borrow_stream: the borrowed context's slot; kNoSlot = the scenario's
  int fault = -1;          // index of the completion_unknown fault aimed at this step's id
  std::unique_ptr<LaunchPlan> launch;
  std::unique_ptr<DeclaredPlan> declared;
  std::vector<CompiledStep> body;            // capture, loop
  std::unique_ptr<std::atomic<bool>> noted;  // alloc with fraction_of_free: figures written once
};

struct Program {
  std::vector<std::string> slot_names;      // slot -> handle name
  std::vector<Slot> stream_slots;           // declared streams, in order
  std::vector<Slot> borrowed_stream_slots;  // Scenario::borrowed_streams, in order
  std::vector<std::string> fault_ids;       // completion_unknown targets, by fault index
  std::vector<CompiledStep> steps;
  std::vector<std::pair<std::string, std::vector<CompiledStep>>> threads;  // by name, sorted
  // Some `check contents` compares with "shadow": only then does the run
  // keep the host model (it replays every kernel on the host).
  bool uses_shadow = false;
  // Some `wait` names a stream: only then is each stream's last submission kept.
  bool waits_on_streams = false;
  // Some drop or forget names a declared stream: only then can a step find
  // its stream gone, and streams are looked up in the handle table.
  bool drops_streams = false;
  [[nodiscard]] std::size_t stream_count() const noexcept {
    return stream_slots.size() + borrowed_stream_slots.size() + 1;  // + default
  }
  // Whether the step's stream is a borrowed one (looked up in the handle table).
  [[nodiscard]] bool borrowed_stream(const CompiledStep& c) const noexcept {
    return c.stream != kNoSlot && c.stream_index >= stream_slots.size();
  }
};

// Never fails on a validated scenario (the loader checked every name a
// step uses; kernels are resolved by name here, by shapes at run time).
[[nodiscard]] Program compile(const Scenario& sc);

}  // namespace tandem::scenario::detail
