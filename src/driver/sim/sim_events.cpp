// SPDX-License-Identifier: Apache-2.0
#include "sim_events.hpp"

namespace tandem::driver::sim {

std::shared_ptr<Record> Events::record(Event& event, std::uint64_t stream, StreamFaults& faults) {
  auto fresh = std::make_shared<Record>();
  fresh->stream = stream;
  base::Lock lock(mu_);
  // A superseded faulted record can never be queried again, so nothing could
  // ever observe its fault: treat it as observed rather than leave the
  // stream's later events failing forever. This also keeps the new record
  // of a re-recorded faulted event clean.
  if (const auto& old = event.latest; old && old->faulted) {
    old->fault->observed = true;
  }
  if (faults.armed) {
    faults.armed = false;
    fresh->faulted = true;
    fresh->fault = std::make_shared<Fault>();
    faults.pending = fresh->fault;
  } else if (faults.pending && !faults.pending->observed) {
    fresh->fault = faults.pending;
  } else {
    faults.pending.reset();
  }
  event.latest = fresh;
  return fresh;
}

std::shared_ptr<Record> Events::latest(const Event& event) const {
  base::Lock lock(mu_);
  return event.latest;
}

void Events::arm(StreamFaults& faults) {
  base::Lock lock(mu_);
  faults.armed = true;
}

void Events::complete(Record& record) {
  base::Lock lock(mu_);
  record.done = true;
  completed_.notify_all();
}

void Events::wait(const std::shared_ptr<Record>& record) {
  if (!record) {
    return;
  }
  base::Lock lock(mu_);
  while (!record->done) {
    lock.wait(completed_);
  }
}

EventState Events::state_of(const std::shared_ptr<Record>& record, bool observe) {
  if (!record) {
    return {};
  }
  EventState s{Status::ok, record->stream, false, record->done ? record : nullptr};
  if (!record->done) {
    s.status = Status::not_ready;
  } else if (record->faulted) {
    if (observe) {
      record->fault->observed = true;
    }
    s.status = Status::completion_unknown;
  } else if (record->fault && !record->fault->observed) {
    s.status = Status::completion_unknown;
    s.inherited = true;
  }
  return s;
}

EventState Events::query(const Event& event) {
  base::Lock lock(mu_);
  return state_of(event.latest, true);
}

EventState Events::synchronize(const Event& event) {
  base::Lock lock(mu_);
  const std::shared_ptr<Record> record = event.latest;
  while (record && !record->done) {
    lock.wait(completed_);
  }
  return state_of(record, false);
}

}  // namespace tandem::driver::sim
