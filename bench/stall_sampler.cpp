// SPDX-License-Identifier: Apache-2.0
#include "stall_sampler.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#if defined(__linux__)
#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "bench_env.hpp"

namespace tandem_bench {

namespace {

constexpr int kFrames = 40;

}  // namespace

struct alignas(64) StallSampler::Lane {
  std::atomic<std::uint64_t> begun_ns{0};  // 0: not in a launch
  std::uint64_t sampled_ns = 0;            // the watchdog's: the launch already sampled
  std::atomic<int> tid{0};
  void* frames[kFrames] = {};
  std::atomic<int> frame_count{-1};
};

#if defined(__linux__)
namespace {

// The slots of the sampler in use (one at a time), for the signal handler,
// which finds the slot of the thread it interrupted by its tid.
std::atomic<StallSampler::Lane*> g_lanes{nullptr};
std::atomic<int> g_slots{0};

void on_sample_signal(int) {
  const int saved = errno;
  const int tid = static_cast<int>(::syscall(SYS_gettid));
  StallSampler::Lane* lanes = g_lanes.load(std::memory_order_acquire);
  const int n = g_slots.load(std::memory_order_acquire);
  for (int i = 0; lanes != nullptr && i < n; ++i) {
    if (lanes[i].tid.load(std::memory_order_relaxed) == tid) {
      lanes[i].frame_count.store(backtrace(lanes[i].frames, kFrames), std::memory_order_release);
      break;
    }
  }
  errno = saved;
}

}  // namespace
#endif

std::string first_line(const std::string& path) {
  std::string s;
  std::getline(std::ifstream(path), s);
  return s;
}

int thread_named(const std::string& name) {
#if defined(__linux__)
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  int found = 0;
  while (const dirent* ent = readdir(d)) {
    if (ent->d_name[0] == '.') continue;
    if (first_line(std::string("/proc/self/task/") + ent->d_name + "/comm") == name) {
      found = std::atoi(ent->d_name);
      break;
    }
  }
  closedir(d);
  return found;
#else
  (void)name;
  return 0;
#endif
}

RetireThread retire_thread() {
  RetireThread out;
#if defined(__linux__)
  const int tid = thread_named("tandem-retire");
  if (tid == 0) return out;
  const std::string stat = first_line("/proc/self/task/" + std::to_string(tid) + "/stat");
  // Fields after the command's closing parenthesis: 3 is state; utime and
  // stime are 14 and 15, the processor 39.
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return out;
  std::istringstream rest(stat.substr(paren + 1));
  std::vector<std::string> f{std::istream_iterator<std::string>(rest), {}};
  if (f.size() >= 37) {
    const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    out.cpu_s = (std::stod(f[11]) + std::stod(f[12])) / tick;
    out.cpu = std::stoi(f[36]);
  }
#endif
  return out;
}

// Slots 0..lanes-1 are the lanes; the last is the retirement thread.
StallSampler::StallSampler(int lanes, std::chrono::microseconds threshold)
    : lanes_(new Lane[static_cast<std::size_t>(lanes) + 1]),
      count_(lanes),
      threshold_ns_(static_cast<std::uint64_t>(threshold.count()) * 1000) {
#if defined(__linux__)
  void* warm[1];
  (void)backtrace(warm, 1);  // loads the unwinder now, not inside the handler
  lanes_[static_cast<std::size_t>(lanes)].tid.store(thread_named("tandem-retire"));
  g_lanes.store(lanes_.get(), std::memory_order_release);
  g_slots.store(lanes + 1, std::memory_order_release);
  struct sigaction sa {};
  sa.sa_handler = on_sample_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGURG, &sa, nullptr);
  watchdog_ = std::thread([this] { watch(); });
#endif
}

StallSampler::~StallSampler() {
  stop_.store(true);
  if (watchdog_.joinable()) watchdog_.join();
#if defined(__linux__)
  g_slots.store(0, std::memory_order_release);
  g_lanes.store(nullptr, std::memory_order_release);
#endif
}

void StallSampler::attach(int slot) {
#if defined(__linux__)
  lanes_[static_cast<std::size_t>(slot)].tid.store(static_cast<int>(::syscall(SYS_gettid)));
#else
  (void)slot;
#endif
}

void StallSampler::begin(int slot) noexcept {
  lanes_[static_cast<std::size_t>(slot)].begun_ns.store(steady_ns(), std::memory_order_relaxed);
}

void StallSampler::end(int slot) noexcept {
  lanes_[static_cast<std::size_t>(slot)].begun_ns.store(0, std::memory_order_relaxed);
}

std::vector<std::string> StallSampler::take_samples() {
  stop_.store(true);
  if (watchdog_.joinable()) watchdog_.join();
  return std::move(samples_);
}

void StallSampler::watch() {
  while (!stop_.load(std::memory_order_relaxed)) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    for (int i = 0; i < count_ && samples_.size() < kMaxSamples; ++i) {
      Lane& l = lanes_[static_cast<std::size_t>(i)];
      const std::uint64_t begun = l.begun_ns.load(std::memory_order_relaxed);
      const std::uint64_t now = steady_ns();
      if (begun == 0 || begun == l.sampled_ns || now < begun + threshold_ns_ || l.tid.load() == 0) continue;
      l.sampled_ns = begun;
      std::string text = "lane " + std::to_string(i) + " in one launch for " +
                         std::to_string((now - begun) / 1000) + " us: " + sample(i);
      if (lanes_[static_cast<std::size_t>(count_)].tid.load() != 0) {
        text += "\n    meanwhile the retirement thread: " + sample(count_);
      }
      samples_.push_back(std::move(text));
    }
  }
}

// The thread's state from /proc and its stack (it takes SIGURG and records
// its own backtrace; the thread is alive: lanes end only after take_samples).
std::string StallSampler::sample(int slot) {
  std::ostringstream out;
#if defined(__linux__)
  Lane& l = lanes_[static_cast<std::size_t>(slot)];
  const int tid = l.tid.load();
  const std::string task = "/proc/self/task/" + std::to_string(tid);
  const std::string stat = first_line(task + "/stat");
  const std::size_t paren = stat.rfind(')');
  out << "tid " << tid << ", state "
      << (paren != std::string::npos && paren + 2 < stat.size() ? stat.substr(paren + 2, 1) : "?")
      << ", wchan " << first_line(task + "/wchan") << ", syscall " << first_line(task + "/syscall");
  l.frame_count.store(-1, std::memory_order_relaxed);
  ::syscall(SYS_tgkill, getpid(), tid, SIGURG);
  const std::uint64_t give_up = steady_ns() + 20'000'000;
  int n = -1;
  while ((n = l.frame_count.load(std::memory_order_acquire)) < 0 && steady_ns() < give_up)
    std::this_thread::yield();
  if (n > 0) {
    char** names = backtrace_symbols(l.frames, n);
    for (int i = 2; i < n; ++i) out << "\n      " << (names ? names[i] : "?");  // 0, 1: the handler
    std::free(names);
  } else {
    out << "\n      (no stack: the thread did not take the signal within 20 ms)";
  }
#else
  (void)slot;
#endif
  return out.str();
}

}  // namespace tandem_bench
