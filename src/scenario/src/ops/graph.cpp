// SPDX-License-Identifier: Apache-2.0
// ops/graph.cpp — capture a step list into a graph, replay it.
#include "../engine.hpp"
#include "../json_reader.hpp"
#include "ops.hpp"
#include "tandem/errors.hpp"

namespace tandem::scenario::detail {

void read_replay(Reader& r, const json&, const std::string&, Step& s) {
  if (!s.id.empty()) r.submission_ids.push_back(s.id);
}

void exec_capture(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.graph);
  const Stream stream = e.session.stream(e.handles, s);
  auto record = std::make_shared<GraphRecord>();
  Capture cap{stream.id(), record.get(), {}};
  ThreadState inner{t.rec, &cap};
  Graph g = Graph::capture(stream, [&] {
    if (!e.run_steps(s.body, inner)) throw BodyEnded{};
  });
  record->graph = std::move(g);
  record->allocations.assign(cap.allocations.begin(), cap.allocations.end());
  e.handles.put_graph(s.graph, std::move(record));
}

void exec_replay(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.id);
  const std::shared_ptr<Handle> h = e.handles.graph(s.graph);
  const Stream stream = e.session.stream(e.handles, s);
  e.session.arm_fault(s, stream);
  const std::uint64_t t0 = e.clock.ticks();
  LaunchFuture f = h->graph->graph->replay(stream);
  e.submitted(s, t, f, 0, e.clock.ticks() - t0, true);
  if (e.shadow_on) {
    for (const auto& effect : h->graph->effects) effect(e.shadow);
  }
  e.handles.add_replay(*h->graph, f);
  e.name_future(s, std::move(f));
}

}  // namespace tandem::scenario::detail
