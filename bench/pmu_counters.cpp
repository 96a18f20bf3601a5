// SPDX-License-Identifier: Apache-2.0
#include "pmu_counters.hpp"

#include <cerrno>
#include <cstring>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tandem_bench {

namespace {

constexpr const char* kNames[kPmuEvents] = {"cycles", "instr", "l1d_miss", "llc_miss", "dtlb_miss"};

#if defined(__linux__)
perf_event_attr attr_of(PmuEvent e) {
  perf_event_attr a{};
  a.size = sizeof(a);
  a.exclude_kernel = 1;  // a process without CAP_PERFMON may count user mode only
  a.exclude_hv = 1;
  const auto cache = [](std::uint64_t id) {
    return id | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
  };
  switch (e) {
    case PmuEvent::cycles:
      a.type = PERF_TYPE_HARDWARE;
      a.config = PERF_COUNT_HW_CPU_CYCLES;
      break;
    case PmuEvent::instructions:
      a.type = PERF_TYPE_HARDWARE;
      a.config = PERF_COUNT_HW_INSTRUCTIONS;
      break;
    case PmuEvent::l1d_miss:
      a.type = PERF_TYPE_HW_CACHE;
      a.config = cache(PERF_COUNT_HW_CACHE_L1D);
      break;
    case PmuEvent::llc_miss:
      a.type = PERF_TYPE_HARDWARE;
      a.config = PERF_COUNT_HW_CACHE_MISSES;
      break;
    case PmuEvent::dtlb_miss:
      a.type = PERF_TYPE_HW_CACHE;
      a.config = cache(PERF_COUNT_HW_CACHE_DTLB);
      break;
  }
  return a;
}
#endif

}  // namespace

PmuCounts PmuCounts::since(const PmuCounts& earlier) const {
  PmuCounts d;
  for (std::size_t i = 0; i < kPmuEvents; ++i) {
    if (v[i] && earlier.v[i]) d.v[i] = *v[i] - *earlier.v[i];
  }
  return d;
}

PmuCounts& PmuCounts::operator+=(const PmuCounts& more) {
  for (std::size_t i = 0; i < kPmuEvents; ++i) {
    if (more.v[i]) v[i] = v[i].value_or(0) + *more.v[i];
  }
  return *this;
}

PmuCounters::PmuCounters() {
  fd_.fill(-1);
#if defined(__linux__)
  for (std::size_t i = 0; i < kPmuEvents; ++i) {
    perf_event_attr a = attr_of(static_cast<PmuEvent>(i));
    const long fd = syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1, -1, 0);
    if (fd < 0) {
      if (refused_.empty()) refused_ = std::string(kNames[i]) + ": " + std::strerror(errno);
      continue;
    }
    fd_[i] = static_cast<int>(fd);
  }
#else
  refused_ = "perf_event_open is Linux only";
#endif
}

PmuCounters::~PmuCounters() {
#if defined(__linux__)
  for (int fd : fd_) {
    if (fd >= 0) close(fd);
  }
#endif
}

bool PmuCounters::any() const noexcept {
  for (int fd : fd_) {
    if (fd >= 0) return true;
  }
  return false;
}

PmuCounts PmuCounters::read() const {
  PmuCounts c;
#if defined(__linux__)
  for (std::size_t i = 0; i < kPmuEvents; ++i) {
    std::uint64_t x = 0;
    if (fd_[i] >= 0 && ::read(fd_[i], &x, sizeof(x)) == static_cast<ssize_t>(sizeof(x))) c.v[i] = x;
  }
#endif
  return c;
}

void report_pmu(benchmark::State& st, const std::string& prefix, const PmuCounts& c, double per) {
  if (per <= 0) return;
  for (std::size_t i = 0; i < kPmuEvents; ++i) {
    if (c.v[i]) st.counters[prefix + "_" + kNames[i]] = static_cast<double>(*c.v[i]) / per;
  }
}

}  // namespace tandem_bench
