// SPDX-License-Identifier: Apache-2.0
// Graph replay: N launches of the SIMT copy captured once, replayed per
// iteration. Raw: the driver's own stream capture and cuGraphLaunch; tracked:
// Graph::capture and Graph::replay (one submission whose leases are the
// captured accesses). Host-timed loops, as the launch benchmarks.
//
//   BM_RawGraphReplay/N   BM_TrackedGraphReplay/N   (N = nodes per graph)
#include <stdexcept>
#include <string>

#include "bench_env.hpp"
#include "prepared_launch.hpp"
#include "tandem/graph.hpp"

namespace tandem_bench {

namespace {

const std::int64_t kReplays = scaled(20000);

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + ": CUresult " + std::to_string(rc));
}

void BM_RawGraphReplay(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  const RawDriver* d = e->raw_or_skip(st);
  if (d == nullptr) return;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, KernelKind::simt_copy);
    e->drain();
    void* s = k.native_stream();
    void* graph = nullptr;
    void* exec = nullptr;
    check(d->begin_capture(s, RawDriver::kCaptureThreadLocal), "cuStreamBeginCapture");
    for (std::int64_t i = 0; i < st.range(0); ++i) (void)k.raw(*d);
    check(d->end_capture(s, &graph), "cuStreamEndCapture");
    check(d->graph_instantiate(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    check(d->graph_launch(exec, s), "cuGraphLaunch");
    for (auto _ : st) d->graph_launch(exec, s);
    e->drain();
    d->graph_exec_destroy(exec);
    d->graph_destroy(graph);
  });
}

void BM_TrackedGraphReplay(benchmark::State& st) {
  Env* e = Env::get(st);
  if (e == nullptr) return;
  guarded(st, [&] {
    PreparedLaunch k(*e, e->stream, KernelKind::simt_copy);
    const LeakWatch leaks(*e);
    {
      const tandem::Graph g = tandem::Graph::capture(e->stream, [&] {
        for (std::int64_t i = 0; i < st.range(0); ++i) (void)k.tracked();
      });
      for (auto _ : st) (void)g.replay(e->stream);
    }
    leaks.report(st);
  });
}

}  // namespace

void register_graph_benchmarks() {
  benchmark::RegisterBenchmark("BM_RawGraphReplay", BM_RawGraphReplay)
      ->Arg(1)
      ->Arg(8)
      ->Iterations(kReplays)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_TrackedGraphReplay", BM_TrackedGraphReplay)
      ->Arg(1)
      ->Arg(8)
      ->Iterations(kReplays)
      ->UseRealTime();
}

}  // namespace tandem_bench
