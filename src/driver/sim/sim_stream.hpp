// SPDX-License-Identifier: Apache-2.0
// sim_stream.hpp — one simulated stream (private to src/driver/sim): an
// in-order queue of operations run by its own worker thread, so submitted
// work completes later, on another thread, concurrently with other streams.
// While capturing, submissions are appended to a capture list instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "sim_clock.hpp"
#include "sim_events.hpp"
#include "sim_executor.hpp"
#include "sim_ops.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"

namespace tandem::driver::sim {

class Stream {
 public:
  // What a submission does while the stream is capturing.
  enum class DuringCapture : std::uint8_t { capture, forbid };

  Stream(std::uint64_t id, int device, Executor& executor, Events& events);
  ~Stream();  // closes and joins if the owner has not
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Starts the worker; throws std::system_error when the host cannot.
  void start();
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  [[nodiscard]] int device() const noexcept { return device_; }

  // ok, or not_permitted (capturing and `rule` forbids it).
  Status submit(Command command, DuringCapture rule) TANDEM_EXCLUDES(mu_);
  // All of `commands`, in order, contiguous in the queue (a graph launch).
  void submit_all(const std::vector<Command>& commands) TANDEM_EXCLUDES(mu_);

  // ok when the queue is empty and idle; not_permitted while capturing.
  // When ok and `seen` is given, it gets the stream's clock as it went idle:
  // what the host has now observed.
  Status synchronize(VectorClock* seen = nullptr) TANDEM_EXCLUDES(mu_);
  // ok | not_ready | not_permitted (capturing); `seen` as for synchronize.
  Status query(VectorClock* seen = nullptr) TANDEM_EXCLUDES(mu_);

  Status begin_capture() TANDEM_EXCLUDES(mu_);                         // not_permitted if already capturing
  Status end_capture(std::vector<Command>& out) TANDEM_EXCLUDES(mu_);  // invalid_value if not
  [[nodiscard]] bool capturing() const TANDEM_EXCLUDES(mu_);

  void set_delay(std::chrono::microseconds delay) TANDEM_EXCLUDES(mu_);
  void arm_fault();

  // No more submissions: the worker runs what is queued, then exits.
  void close() TANDEM_EXCLUDES(mu_);
  [[nodiscard]] bool finished() const TANDEM_EXCLUDES(mu_);
  // Waits for the worker to exit (close() first). Owner thread only.
  void join();

 private:
  // An op and the host's clock when it was submitted: the host's earlier
  // observations happen before it.
  struct Queued {
    Op op;
    ClockSnapshot host;
  };

  void worker_loop() TANDEM_EXCLUDES(mu_);
  void enqueue(Command command) TANDEM_REQUIRES(mu_);

  const std::uint64_t id_;
  const int device_;
  Executor& executor_;
  Events& events_;
  StreamFaults faults_;  // guarded by Events::mu_ (events_ does all access)

  mutable base::Mutex mu_;
  std::condition_variable work_cv_;  // under mu_: queue_ not empty, or closing_
  std::condition_variable idle_cv_;  // under mu_: queue_ empty and !running_
  std::deque<Queued> queue_ TANDEM_GUARDED_BY(mu_);
  bool running_ TANDEM_GUARDED_BY(mu_) = false;  // the worker is running an op
  bool closing_ TANDEM_GUARDED_BY(mu_) = false;
  bool finished_ TANDEM_GUARDED_BY(mu_) = false;  // the worker has left its loop
  bool capturing_ TANDEM_GUARDED_BY(mu_) = false;
  std::vector<Command> captured_ TANDEM_GUARDED_BY(mu_);
  std::chrono::microseconds delay_ TANDEM_GUARDED_BY(mu_){0};

  // What its next op has seen. The worker changes it only while running_
  // (set under mu_), so under mu_ with the stream idle anyone may read it.
  VectorClock clock_;
  ClockSnapshot host_joined_;  // the worker's own: the host clock last joined
  std::thread worker_;         // started and joined by the owner; never touched by the worker
};

}  // namespace tandem::driver::sim
