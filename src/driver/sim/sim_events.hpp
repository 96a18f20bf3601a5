// SPDX-License-Identifier: Apache-2.0
// sim_events.hpp — events of the simulated device (private to src/driver/sim).
//
// Each event_record makes a new Record: a marker that the recording stream's
// worker completes when it reaches it. The event points at its latest Record
// (a re-record supersedes the earlier one, as in CUDA); a stream wait takes
// the latest Record at the time of the call and blocks that stream's worker
// until it completes.
//
// Injected faults (SimBackend::arm_completion_unknown): the next Record made
// on an armed stream is faulted and becomes the stream's pending fault. Every
// later Record on that stream shares the pending fault and reports
// completion_unknown until the faulted event itself has been queried
// ("observed"); Records made after that report normally.
//
// All mutable state here — Record::done, Fault::observed, Event::latest and
// StreamFaults — is guarded by Events::mu_ (one lock for all events of a
// backend; completion is broadcast on one condition variable).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>

#include "sim_clock.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::driver::sim {

struct Fault {
  bool observed = false;  // guarded by Events::mu_
};

struct Record {
  std::uint64_t stream = 0;      // immutable: where it was recorded
  bool faulted = false;          // immutable: this is the armed record itself
  std::shared_ptr<Fault> fault;  // immutable pointer: own or inherited fault
  bool done = false;             // guarded by Events::mu_
  // What the recording stream had seen when its worker reached the record:
  // written once by that worker before `done`, read only after `done`.
  VectorClock clock;
};

struct Event {
  std::shared_ptr<Record> latest;  // guarded by Events::mu_; null: never recorded
};

// Per-stream fault state, kept in the stream but guarded by Events::mu_.
struct StreamFaults {
  bool armed = false;
  std::shared_ptr<Fault> pending;
};

// What a query found, for the caller's message.
struct EventState {
  Status status = Status::ok;
  std::uint64_t stream = 0;                 // the stream of the record queried
  bool inherited = false;                   // completion_unknown because of an earlier event
  std::shared_ptr<const Record> completed;  // the record, when it has completed
};

class Events {
 public:
  // A new record of `event` on `stream`, now `event`'s latest.
  std::shared_ptr<Record> record(Event& event, std::uint64_t stream, StreamFaults& faults)
      TANDEM_EXCLUDES(mu_);
  std::shared_ptr<Record> latest(const Event& event) const TANDEM_EXCLUDES(mu_);
  void arm(StreamFaults& faults) TANDEM_EXCLUDES(mu_);

  void complete(Record& record) TANDEM_EXCLUDES(mu_);
  // Blocks until `record` completes; null waits for nothing.
  void wait(const std::shared_ptr<Record>& record) TANDEM_EXCLUDES(mu_);

  // Non-blocking; a faulted record queried here counts as observed.
  EventState query(const Event& event) TANDEM_EXCLUDES(mu_);
  // Blocks until the latest record (as of the call) completes.
  EventState synchronize(const Event& event) TANDEM_EXCLUDES(mu_);

 private:
  EventState state_of(const std::shared_ptr<Record>& record, bool observe) TANDEM_REQUIRES(mu_);

  mutable base::Mutex mu_;
  std::condition_variable completed_;  // signalled under mu_ when a Record completes
};

}  // namespace tandem::driver::sim
