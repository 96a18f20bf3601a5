// SPDX-License-Identifier: Apache-2.0
// graph_state.hpp — a captured graph and the references it holds.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "submit.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::detail {

struct ContextState;

// What a stream records while it captures (guarded by the stream's lock).
struct CaptureBuild {
  std::vector<AccessRequest> accesses;            // every access, with its mode; sorted once captured
  std::vector<AllocationState*> referenced;       // distinct; one graph reference each
  std::vector<std::shared_ptr<void>> keep_alive;  // host memory captured uploads read

  // Adds `a`'s accesses, taking a graph reference on each new allocation.
  void record(const AccessRequest* a, std::uint32_t n, std::shared_ptr<void> host);
  // Drops every graph reference (may free; call without runtime locks).
  void release() noexcept;
};

struct GraphState {
  GraphState(ContextState& ctx, driver::GraphHandle handle, CaptureBuild&& build);
  ~GraphState();  // runs when the last handle and the last replay are gone
  GraphState(const GraphState&) = delete;
  GraphState& operator=(const GraphState&) = delete;

  const std::uint64_t id;
  ContextState* const ctx;  // strong reference
  const driver::GraphHandle handle;
  CaptureBuild build;
};

// The object every copy of one Graph handle shares.
struct GraphHandles {
  explicit GraphHandles(std::shared_ptr<GraphState> s) noexcept : state(std::move(s)) {}
  ~GraphHandles();  // tells an active Recorder (on_graph_dropped)
  GraphHandles(const GraphHandles&) = delete;
  GraphHandles& operator=(const GraphHandles&) = delete;

  const std::shared_ptr<GraphState> state;
};

}  // namespace tandem::detail
