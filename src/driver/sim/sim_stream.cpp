// SPDX-License-Identifier: Apache-2.0
#include "sim_stream.hpp"

#include <utility>

namespace tandem::driver::sim {

// Lock order: Stream::mu_ may be held while calling into Events (binding a
// record or a wait); the worker runs operations holding no stream lock.

Stream::Stream(std::uint64_t id, int device, Executor& executor, Events& events)
    : id_(id), device_(device), executor_(executor), events_(events) {}

Stream::~Stream() {
  if (!worker_.joinable()) {
    return;
  }
  close();
  join();
}

void Stream::start() {
  worker_ = std::thread([this] { worker_loop(); });
}

void Stream::worker_loop() {
  for (;;) {
    Queued item;
    {
      base::Lock lock(mu_);
      while (queue_.empty() && !closing_) {
        lock.wait(work_cv_);
      }
      if (queue_.empty()) {
        break;  // closed and drained
      }
      item = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    if (item.host && item.host != host_joined_) {
      clock_.join(*item.host);
      host_joined_ = item.host;
    }
    executor_.run(item.op, id_, clock_);
    auto* marker = std::get_if<MarkerOp>(&item.op);
    if (marker != nullptr) {
      marker->record->clock = clock_;  // published by complete() below
    }
    base::Lock lock(mu_);
    running_ = false;
    // A record completes here, under mu_, together with the idle state: once
    // an event is seen complete, a query of its stream sees the work done too.
    if (marker != nullptr) {
      events_.complete(*marker->record);
    }
    if (queue_.empty()) {
      idle_cv_.notify_all();
    }
  }
  base::Lock lock(mu_);
  finished_ = true;
}

void Stream::enqueue(Command command) {
  const std::chrono::microseconds delay = delay_;
  Op op =
      std::visit(Overloaded{
                     [&](Work& w) -> Op {
                       return TimedWork{std::move(w), delay};
                     },
                     [&](RecordCommand& r) -> Op { return MarkerOp{events_.record(*r.event, id_, faults_)}; },
                     [&](WaitCommand& w) -> Op { return WaitOp{events_.latest(*w.event)}; },
                 },
                 command);
  queue_.push_back(Queued{std::move(op), executor_.host_clock().snapshot()});
  work_cv_.notify_one();
}

Status Stream::submit(Command command, DuringCapture rule) {
  base::Lock lock(mu_);
  if (closing_) {
    return Status::invalid_handle;
  }
  if (capturing_) {
    if (rule == DuringCapture::forbid) {
      return Status::not_permitted;
    }
    captured_.push_back(std::move(command));
    return Status::ok;
  }
  enqueue(std::move(command));
  return Status::ok;
}

void Stream::submit_all(const std::vector<Command>& commands) {
  base::Lock lock(mu_);
  for (const Command& c : commands) {
    if (capturing_) {
      captured_.push_back(c);
    } else {
      enqueue(c);
    }
  }
}

Status Stream::synchronize(VectorClock* seen) {
  base::Lock lock(mu_);
  if (capturing_) {
    return Status::not_permitted;
  }
  while (!queue_.empty() || running_) {
    lock.wait(idle_cv_);
  }
  if (seen != nullptr) {
    *seen = clock_;
  }
  return Status::ok;
}

Status Stream::query(VectorClock* seen) {
  base::Lock lock(mu_);
  if (capturing_) {
    return Status::not_permitted;
  }
  if (!queue_.empty() || running_) {
    return Status::not_ready;
  }
  if (seen != nullptr) {
    *seen = clock_;
  }
  return Status::ok;
}

Status Stream::begin_capture() {
  base::Lock lock(mu_);
  if (capturing_) {
    return Status::not_permitted;
  }
  capturing_ = true;
  return Status::ok;
}

Status Stream::end_capture(std::vector<Command>& out) {
  base::Lock lock(mu_);
  if (!capturing_) {
    return Status::invalid_value;
  }
  capturing_ = false;
  out = std::exchange(captured_, {});
  return Status::ok;
}

bool Stream::capturing() const {
  base::Lock lock(mu_);
  return capturing_;
}

void Stream::set_delay(std::chrono::microseconds delay) {
  base::Lock lock(mu_);
  delay_ = delay;
}

void Stream::arm_fault() { events_.arm(faults_); }

void Stream::close() {
  base::Lock lock(mu_);
  closing_ = true;
  capturing_ = false;
  captured_.clear();
  work_cv_.notify_one();
}

bool Stream::finished() const {
  base::Lock lock(mu_);
  return finished_;
}

void Stream::join() {
  if (worker_.joinable()) {
    worker_.join();
  }
}

}  // namespace tandem::driver::sim
