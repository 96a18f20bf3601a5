// SPDX-License-Identifier: Apache-2.0
// pool-probe.cu — issue 21, step 9 of results/pending/run.sh: why do pool allocations on the
// churn's submitting threads take 17-82 ms (s48 profiles), and do other threads stall behind them?
// The churn's shape without tandem: T threads, each on its own stream, loop {allocate 16 KiB from
// one explicit pool (release threshold max, as tandem's), launch a small kernel on it, free it
// D iterations later (tandem frees after retirement, so the pool holds D blocks a thread)}, while
// one more thread polls an event of the last launch (retirement's query). Prints, per run, the
// allocations over 1 ms (when, ms from the start, and how long), the longest allocation, launch and
// event query with when they ended. Usage: pool-probe THREADS ITER DEPTH PREGROW_MIB
// (PREGROW_MIB > 0: allocate and free that much from the pool before the threads start).
// Build: nvcc -O2 -std=c++17 -o pool-probe pool-probe.cu
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
Clock::time_point g_start;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - g_start).count();
}

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

__global__ void fill(float* p, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

struct Longest {
  std::mutex mu;
  double us = 0, at_ms = 0;
  void add(double took_us, double end_ms) {
    std::lock_guard<std::mutex> g(mu);
    if (took_us > us) us = took_us, at_ms = end_ms;
  }
};
Longest g_alloc, g_launch, g_query;
std::mutex g_slow_mu;
std::vector<std::pair<double, double>> g_slow;  // (end ms, took ms) of allocations over 1 ms
std::atomic<long> g_allocs{0};
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int depth = argc > 3 ? std::atoi(argv[3]) : 16;
  const long pregrow_mib = argc > 4 ? std::atol(argv[4]) : 0;
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CK(cudaMemPoolCreate(&pool, &props));
  unsigned long long thr = ~0ull;
  CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
  std::vector<cudaStream_t> streams(threads);
  for (auto& s : streams) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  fill<<<1, 32, 0, streams[0]>>>(nullptr, 0, 0.f);  // load the module before the clock starts
  CK(cudaStreamSynchronize(streams[0]));
  double pregrow_ms = 0;
  if (pregrow_mib > 0) {
    const auto t0 = Clock::now();
    void* p = nullptr;
    CK(cudaMallocFromPoolAsync(&p, static_cast<size_t>(pregrow_mib) << 20, pool, streams[0]));
    CK(cudaFreeAsync(p, streams[0]));
    CK(cudaStreamSynchronize(streams[0]));
    pregrow_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  }
  std::atomic<bool> done{false};
  std::atomic<cudaEvent_t> last{nullptr};
  g_start = Clock::now();
  std::thread poller([&] {
    cudaEvent_t e = nullptr;
    while (!done.load()) {
      if ((e = last.load()) == nullptr) continue;
      const auto t0 = Clock::now();
      (void)cudaEventQuery(e);
      const auto t1 = Clock::now();
      g_query.add(std::chrono::duration<double, std::micro>(t1 - t0).count(), ms_since(t1));
    }
  });
  std::vector<std::thread> ws;
  for (int w = 0; w < threads; ++w) {
    ws.emplace_back([&, w] {
      cudaStream_t s = streams[w];
      cudaEvent_t ev;
      CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
      if (w == 0) last.store(ev);
      std::vector<void*> ring(depth, nullptr);
      for (int i = 0; i < iters; ++i) {
        void*& slot = ring[i % depth];
        if (slot) CK(cudaFreeAsync(slot, s));
        const auto t0 = Clock::now();
        CK(cudaMallocFromPoolAsync(&slot, 4096 * sizeof(float), pool, s));
        const auto t1 = Clock::now();
        fill<<<16, 256, 0, s>>>(static_cast<float*>(slot), 4096, float(w));
        const auto t2 = Clock::now();
        if (w == 0) CK(cudaEventRecord(ev, s));
        const double a_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        g_allocs.fetch_add(1);
        g_alloc.add(a_us, ms_since(t1));
        g_launch.add(std::chrono::duration<double, std::micro>(t2 - t1).count(), ms_since(t2));
        if (a_us > 1000) {
          std::lock_guard<std::mutex> g(g_slow_mu);
          g_slow.emplace_back(ms_since(t1), a_us / 1000);
        }
      }
      for (void* p : ring)
        if (p) CK(cudaFreeAsync(p, s));
      CK(cudaStreamSynchronize(s));
    });
  }
  for (auto& t : ws) t.join();
  const double total_ms = ms_since(Clock::now());
  done = true;
  poller.join();
  size_t reserved = 0;
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved));
  std::printf(
      "threads %d iters %d depth %d pregrow %ld MiB (%.1f ms): total %.1f ms, allocs %ld, reserved high %zu "
      "MiB\n",
      threads, iters, depth, pregrow_mib, pregrow_ms, total_ms, g_allocs.load(), reserved >> 20);
  std::printf(
      "  longest alloc %.1f us at %.1f ms, launch %.1f us at %.1f ms, event query %.1f us at %.1f ms\n",
      g_alloc.us, g_alloc.at_ms, g_launch.us, g_launch.at_ms, g_query.us, g_query.at_ms);
  std::printf("  allocations over 1 ms (%zu):", g_slow.size());
  for (auto [at, took] : g_slow) std::printf(" %.1f@%.1f", took, at);
  std::printf("\n");
  return 0;
}
