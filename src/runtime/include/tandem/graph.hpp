// SPDX-License-Identifier: Apache-2.0
// tandem/graph.hpp — captured work that can be replayed (spec/runtime.md §8).
//
//   tandem::Graph g = tandem::Graph::capture(stream, [&] {
//     tandem::kernels::launch(stream, *axpy, args);  // recorded, not run
//   });
//   tandem::LaunchFuture f = g.replay(stream);        // a submission
//
// While capturing, submissions on that stream (from the capturing thread)
// are recorded into the graph instead of running: they take no leases and
// return an empty LaunchFuture. Each allocation they touch gets a graph
// reference with the access modes used: while the graph lives the
// allocation is not unique (the graph may touch it again) and stays alive
// even when every view is dropped. Each replay is a submission holding the
// captured leases, ordered or rejected like any other (§4). Dropping the
// last Graph handle with a replay in flight defers the graph's destruction,
// and the release of its references, until that replay retires.
//
// Capture covers one stream; allocating on a capturing stream, or
// capturing a stream that already captures, is Error(unsupported).
// Copying a Graph shares it.
#pragma once

#include <cstdint>
#include <memory>

#include "tandem/launch_future.hpp"
#include "tandem/stream.hpp"

namespace tandem {

namespace detail {
struct GraphState;
struct GraphHandles;
}  // namespace detail

class Graph {
 public:
  // Sync (host-side capture). If `body` throws, the capture is discarded
  // (references released) and the exception propagates.
  template <class Body>
  [[nodiscard]] static Graph capture(StreamRef stream, Body&& body) {
    begin_capture(stream);
    try {
      body();
    } catch (...) {
      abandon_capture(stream);
      throw;
    }
    return end_capture(stream);
  }

  // Async on `stream` (same context as the capture). Blocks only while the
  // device runs more than ContextOptions::max_queued_per_stream submissions
  // behind `stream` (tandem/launch.hpp says how).
  LaunchFuture replay(StreamRef stream) const;

  [[nodiscard]] std::uint64_t id() const noexcept;
  // Distinct allocations the graph holds a reference on.
  [[nodiscard]] std::size_t allocation_count() const noexcept;

  explicit Graph(std::shared_ptr<detail::GraphState> s);

 private:
  static void begin_capture(StreamRef stream);
  static Graph end_capture(StreamRef stream);
  static void abandon_capture(StreamRef stream) noexcept;

  [[nodiscard]] detail::GraphState* state() const noexcept;
  LaunchFuture replay_unrecorded(StreamRef stream) const;

  // What the handles share; replays hold the GraphState itself, so that
  // the last handle's drop is seen (a recording writes it) while a replay
  // is still in flight.
  std::shared_ptr<detail::GraphHandles> h_;
};

}  // namespace tandem
