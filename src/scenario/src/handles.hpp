// SPDX-License-Identifier: Apache-2.0
// handles.hpp — what a scenario's handle names refer to while it runs.
//
// Names are global to a scenario (every thread sees them). A name holds a
// view (buffer, slice, tensor...), a launch future, a graph, a stream or a
// borrowed context;
// creating over a live name, or using a dropped or consumed one, is the
// step error invalid_handle (spec/scenario-format.md §2).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "shadow.hpp"
#include "tandem/graph.hpp"
#include "tandem/launch_future.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace tandem::scenario::detail {

// A captured graph and what the executor knows about it.
struct GraphRecord {
  std::optional<Graph> graph;
  // Allocations the runtime holds a graph reference on (the uniqueness
  // model counts them until the graph and its in-flight replays are gone).
  std::vector<std::uint64_t> allocations;
  // Replays not yet known to be over: a dropped graph keeps its references
  // until they retire.
  std::vector<LaunchFuture> replays;
  // The captured work's effects on the shadow model, applied per replay.
  std::vector<std::function<void(Shadow&)>> effects;
};

struct Handle {
  enum class Kind : std::uint8_t { view, future, graph, stream, context };
  Kind kind = Kind::view;
  View view;
  LaunchFuture future;
  std::shared_ptr<GraphRecord> graph;
  std::optional<Stream> stream;
  std::optional<Context> context;

  [[nodiscard]] std::string_view kind_name() const noexcept {
    switch (kind) {
      case Kind::view:
        return view.is_tensor() ? "tensor" : "buffer";
      case Kind::future:
        return "future";
      case Kind::graph:
        return "graph";
      case Kind::stream:
        return "stream";
      case Kind::context:
        return "context";
    }
    return "handle";
  }
};

// The executor's own count of what holds each allocation, to tell a wrong
// uniqueness answer from the runtime (a "uniqueness failure") from a right one.
struct AllocationModel {
  std::int64_t views = 0;
  std::int64_t graphs = 0;
  // Graph references whose release depends on replays still in flight:
  // while > 0 the true answer is unknown and no comparison is made.
  std::int64_t uncertain = 0;
};

}  // namespace tandem::scenario::detail
