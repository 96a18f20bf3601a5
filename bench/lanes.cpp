// SPDX-License-Identifier: Apache-2.0
#include "lanes.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <latch>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "prepared_launch.hpp"
#include "stall_sampler.hpp"

namespace tandem_bench {

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The first CPU of each physical core, in CPU order (sysfs topology; every
// CPU its own core where sysfs says nothing).
std::vector<int> first_cpu_per_core() {
  std::vector<int> out;
  std::set<std::pair<int, int>> seen;
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (int c = 0; c < n; ++c) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    int pkg = 0, core = c;
    std::ifstream(base + "physical_package_id") >> pkg;
    std::ifstream(base + "core_id") >> core;
    if (seen.insert({pkg, core}).second) out.push_back(c);
  }
  return out;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

}  // namespace

LaneRun run_lanes(Env& e, int threads, std::int64_t per_thread, bool tracked, RawLaneOptions raw,
                  LaneProbe probe, std::int64_t drain_every) {
  if (threads < 1 || threads > static_cast<int>(e.lanes.size())) throw std::runtime_error("bad thread count");
  if (drain_every < 0 || (drain_every > 0 && probe.detail)) {
    throw std::runtime_error("run_lanes: drain_every must be >= 0, and 0 with probe.detail");
  }
  tandem::driver::Backend& b = e.platform.backend();
  std::vector<tandem::driver::EventHandle> events(static_cast<std::size_t>(threads));
  if (!tracked && raw.event_every > 0) {
    for (auto& ev : events) {
      if (!b.event_create(e.ctx.native(), ev).ok()) throw std::runtime_error("cuEventCreate failed");
    }
  }
  std::atomic<bool> stop{false};
  std::optional<std::thread> querier;
  if (!tracked && raw.querier && raw.event_every > 0) {
    querier.emplace([&] {
      e.raw.ctx_set_current(e.ctx.native().raw);
      while (!stop.load(std::memory_order_relaxed)) {
        for (const auto& ev : events) e.raw.event_query(ev.raw);
        const auto until = Clock::now() + std::chrono::microseconds(2);
        while (Clock::now() < until) {
        }
      }
    });
  }
  std::latch prepared(threads + 1);  // every lane ready, and the main thread
  std::latch go(1);
  std::latch finished(threads);
  std::mutex m;
  LaneRun out;
  std::vector<Clock::time_point> submitted(static_cast<std::size_t>(threads));
  if (probe.detail) out.detail.resize(static_cast<std::size_t>(threads));
  std::optional<StallSampler> stalls;
  if (probe.detail) {
    const char* v = std::getenv("TANDEM_BENCH_STALL_US");  // default 5 ms
    stalls.emplace(threads, std::chrono::microseconds(v ? std::strtoll(v, nullptr, 10) : 5000));
  }
  const std::vector<int> cores = probe.pin ? first_cpu_per_core() : std::vector<int>{};
  // Rounds (drain_every > 0): the barrier's completion closes one round and
  // opens the next, while every lane waits at it.
  const auto lanes_n = static_cast<std::size_t>(threads);
  std::vector<Clock::time_point> round_done(lanes_n);
  std::vector<double> lane_rounds_s(lanes_n, 0.0);
  Clock::time_point round_start{};
  bool round_open = false;
  double rounds_s = 0;
  auto close_round = [&]() noexcept {
    const auto now = Clock::now();
    if (round_open) {
      const auto last = *std::max_element(round_done.begin(), round_done.end());
      rounds_s += std::chrono::duration<double>(last - round_start).count();
      for (std::size_t t = 0; t < lanes_n; ++t) {
        lane_rounds_s[t] +=
            std::chrono::duration<double>(std::max(round_done[t], round_start) - round_start).count();
      }
    }
    round_start = now;
    round_open = true;
  };
  std::barrier rounds(threads, close_round);
  auto fail = [&](const std::string& why) {
    const std::lock_guard<std::mutex> lock(m);
    if (out.error.empty()) out.error = why;
  };

  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::optional<PreparedLaunch> k;
      if (!cores.empty()) pin_to(cores[static_cast<std::size_t>(t) % cores.size()]);
      try {
        k.emplace(e, e.lanes[static_cast<std::size_t>(t)], KernelKind::simt_copy);
        if (!tracked) {
          if (!e.raw_why.empty()) throw std::runtime_error(e.raw_why);
          if (const int rc = e.raw.ctx_set_current(e.ctx.native().raw); rc != 0) {
            throw std::runtime_error("cuCtxSetCurrent: CUresult " + std::to_string(rc));
          }
        }
      } catch (const std::exception& ex) {
        fail(ex.what());
        k.reset();
      }
      // Launches [from, to) of this lane: tandem, or the driver with its
      // optional event records.
      auto launch_range = [&, t](PreparedLaunch& pl, std::int64_t from, std::int64_t to) {
        if (tracked) {
          for (std::int64_t i = from; i < to; ++i) (void)pl.tracked();
          return;
        }
        const int every = raw.event_every;
        void* ev = events[static_cast<std::size_t>(t)].raw;
        for (std::int64_t i = from; i < to; ++i) {
          pl.raw(e.raw);
          if (every > 0 && (i + 1) % every == 0) e.raw.event_record(ev, pl.native_stream());
        }
      };
      bool dropped = false;
      prepared.count_down();
      go.wait();
      if (k) {
        try {
          if (probe.detail) {
            LaneDetail& d = out.detail[static_cast<std::size_t>(t)];
            d.cpu_first = sched_getcpu();
            const double cpu0 = thread_cpu_s();
            stalls->attach(t);
            auto before = Clock::now();
            for (std::int64_t i = 0; i < per_thread; ++i) {
              stalls->begin(t);
              if (tracked) {
                (void)k->tracked();
              } else {
                k->raw(e.raw);
              }
              stalls->end(t);
              const auto after = Clock::now();
              const double us = std::chrono::duration<double, std::micro>(after - before).count();
              if (us >= LaneDetail::kStallUs) {
                ++d.stalls;
                d.stall_s += us * 1e-6;
              }
              d.longest_us = std::max(d.longest_us, us);
              before = after;
            }
            d.cpu_s = thread_cpu_s() - cpu0;
            d.cpu_last = sched_getcpu();
          } else if (drain_every > 0) {
            for (std::int64_t i = 0; i < per_thread;) {
              const std::int64_t end = std::min(per_thread, i + drain_every);
              rounds.arrive_and_wait();
              launch_range(*k, i, end);
              round_done[static_cast<std::size_t>(t)] = Clock::now();
              k->stream().synchronize();
              i = end;
            }
            rounds.arrive_and_drop();  // closes the last round
            dropped = true;
          } else {
            launch_range(*k, 0, per_thread);
          }
          submitted[static_cast<std::size_t>(t)] = Clock::now();
          k->stream().synchronize();
        } catch (const std::exception& ex) {
          fail(ex.what());
        }
      }
      if (drain_every > 0 && !dropped) rounds.arrive_and_drop();
      finished.count_down();
    });
  }
  prepared.arrive_and_wait();
  const auto t0 = Clock::now();
  go.count_down();
  finished.wait();
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (stalls) out.stall_samples = stalls->take_samples();  // before the lanes' threads end
  for (std::thread& th : pool) th.join();
  stop.store(true);
  if (querier) querier->join();
  for (const auto& ev : events) {
    if (ev) (void)b.event_destroy(e.ctx.native(), ev);
  }
  if (drain_every > 0) out.seconds = rounds_s;
  out.launches_per_s =
      out.seconds > 0 ? static_cast<double>(threads) * static_cast<double>(per_thread) / out.seconds : 0.0;
  if (out.error.empty() && drain_every > 0) {
    const auto [first, last] = std::minmax_element(lane_rounds_s.begin(), lane_rounds_s.end());
    out.fastest_lane_s = *first;
    out.slowest_lane_s = *last;
  } else if (out.error.empty()) {
    const auto [first, last] = std::minmax_element(submitted.begin(), submitted.end());
    out.fastest_lane_s = std::chrono::duration<double>(*first - t0).count();
    out.slowest_lane_s = std::chrono::duration<double>(*last - t0).count();
    for (std::size_t t = 0; t < out.detail.size(); ++t) {
      out.detail[t].submit_s = std::chrono::duration<double>(submitted[t] - t0).count();
    }
  }
  return out;
}

TogetherRun run_together(int threads, const std::function<void(int)>& prepare,
                         const std::function<void(int, Clock::time_point)>& body) {
  if (threads < 1) throw std::runtime_error("run_together: threads must be >= 1");
  std::latch prepared(threads + 1);  // every thread ready, and the main thread
  std::latch go(1);
  std::latch finished(threads);
  std::mutex m;
  TogetherRun out;
  Clock::time_point t0{};
  auto fail = [&](const char* why) {
    const std::lock_guard<std::mutex> lock(m);
    if (out.error.empty()) out.error = why;
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      bool ready = true;
      try {
        prepare(t);
      } catch (const std::exception& ex) {
        fail(ex.what());
        ready = false;
      }
      prepared.count_down();
      go.wait();  // t0 is written before go opens
      if (ready) {
        try {
          body(t, t0);
        } catch (const std::exception& ex) {
          fail(ex.what());
        }
      }
      finished.count_down();
    });
  }
  prepared.arrive_and_wait();
  t0 = Clock::now();
  go.count_down();
  finished.wait();
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  for (std::thread& th : pool) th.join();
  return out;
}

void measure_lanes(benchmark::State& st, Env& e, int threads, std::int64_t per_thread, bool tracked,
                   std::int64_t drain_every) {
  double seconds = 0;
  std::int64_t rounds = 0;
  for (auto _ : st) {
    const LaneRun r = run_lanes(e, threads, per_thread, tracked, {}, {}, drain_every);
    if (!r.error.empty()) throw std::runtime_error(r.error);
    st.SetIterationTime(r.seconds);
    seconds += r.seconds;
    ++rounds;
  }
  const double launches = static_cast<double>(rounds) * threads * static_cast<double>(per_thread);
  st.counters["launches_per_s"] = seconds > 0 ? launches / seconds : 0.0;
  st.counters["threads"] = threads;
}

}  // namespace tandem_bench
