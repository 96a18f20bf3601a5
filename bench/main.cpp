// SPDX-License-Identifier: Apache-2.0
// tandem_bench — the runtime against the raw CUDA driver, every pair
// measured in this one process so that ratios compare like with like
// (absolute figures differ by up to 25 % between runs on the H200).
//
//   tandem_bench [Google Benchmark flags]
//   scripts/bench OUTDIR     runs it with repetitions and writes bench.json
//
// The run's context (JSON "context") names the device, driver, backend and
// git revision; the exit status is 1 when tandem still holds allocations
// after every benchmark's state is released (a leak).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_env.hpp"

#ifndef TANDEM_GIT
#define TANDEM_GIT "unknown"
#endif

namespace {

void add_context() {
  using benchmark::AddCustomContext;
  AddCustomContext("tandem_git", TANDEM_GIT);
  std::string why;
  tandem_bench::Env* e = tandem_bench::Env::instance(why);
  if (e == nullptr) {
    AddCustomContext("tandem_backend", "none");
    AddCustomContext("tandem_device_error", why);
    return;
  }
  const tandem::Device dev = e->platform.device(0);
  AddCustomContext("tandem_backend", std::string(e->platform.backend_name()));
  AddCustomContext("tandem_device", dev.name());
  AddCustomContext("tandem_compute_capability", dev.compute_capability());
  AddCustomContext("tandem_driver", e->platform.driver_version());
  AddCustomContext("tandem_raw_driver", e->raw_why.empty() ? "libcuda.so.1" : e->raw_why);
}

}  // namespace

int main(int argc, char** argv) {
  // Before the driver starts: 32 hardware work queues instead of 8. The
  // loaded benchmarks hold 20 streams blocked behind long kernels; a
  // measured stream sharing a queue with one of them would wait behind it
  // (loaded_state.hpp).
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  add_context();

  tandem_bench::register_launch_benchmarks();
  tandem_bench::register_retirement_benchmarks();
  tandem_bench::register_memory_benchmarks();
  tandem_bench::register_release_benchmarks();
  tandem_bench::register_host_bytes_benchmarks();
  tandem_bench::register_graph_benchmarks();
  tandem_bench::register_bandwidth_benchmarks();
  tandem_bench::register_thread_benchmarks();
  tandem_bench::register_paired_benchmarks();
  tandem_bench::register_sustained_benchmarks();
  tandem_bench::register_loaded_benchmarks();  // last: see bench_env.hpp

  benchmark::RunSpecifiedBenchmarks();
  int rc = 0;
  try {
    if (const std::uint64_t live = tandem_bench::teardown_and_count_live(); live != 0) {
      std::fprintf(stderr, "tandem_bench: %llu allocations still live after the run (leak)\n",
                   static_cast<unsigned long long>(live));
      rc = 1;
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "tandem_bench: teardown failed: %s\n", ex.what());
    rc = 1;
  }
  benchmark::Shutdown();
  return rc;
}
