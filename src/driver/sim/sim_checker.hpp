// SPDX-License-Identifier: Apache-2.0
// sim_checker.hpp — the simulated device's violation detector (private to
// src/driver/sim).
//
// Races are found by happens-before (sim_clock.hpp, sim_shadow.hpp): when an
// operation starts, each of its accesses is checked against the last write
// and the unordered reads of those bytes; one that its clock does not cover
// is a conflict, however long ago it ran:
//   - overlap, at least one side writing, no order   -> unordered_conflict
//   - the same, where one side is a free              -> use_after_free
//
// Timing is used only to keep the sim itself safe. Every operation, while it
// runs (from its start until it completes, including its stream delay), has
// its byte accesses registered in one shared active set; one that starts
// while another stream's running operation conflicts with it (overlap, a
// write or a free on either side) is skipped by the executor (a free still
// releases its block, but without poisoning bytes still in use), so a
// runtime's missing order never becomes a data race inside the sim. Such a
// pair is always unordered too, so it is reported once, by the order check.
// Operations on one stream never conflict (the stream orders them), and
// zero-byte accesses never conflict.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim_clock.hpp"
#include "sim_shadow.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/lock.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver::sim {

// Who is running: the stream and a short description ("launch 'saxpy'").
struct OpLabel {
  std::uint64_t stream = 0;
  std::string what;
  bool is_free = false;
};

// A violation found, before it is recorded.
struct Finding {
  Violation::Kind kind;
  std::string detail;
};

class Checker {
 public:
  void record(Violation::Kind kind, std::string detail) TANDEM_EXCLUDES(log_mu_);
  [[nodiscard]] std::vector<Violation> violations() const TANDEM_EXCLUDES(log_mu_);
  [[nodiscard]] std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }

  // Registers `accesses` of `op` (which must outlive the registration) and
  // records a violation for every conflict found. `epoch` and `clock` are
  // the operation's (clock covers epoch). Returns the registration token and,
  // through `overlaps`, how many operations of other streams it overlapped in
  // time (the executor does not perform it then).
  std::uint64_t enter(const OpLabel& op, const Epoch& epoch, const VectorClock& clock,
                      std::span<const Access> accesses, std::size_t& overlaps)
      TANDEM_EXCLUDES(active_mu_, log_mu_);
  void leave(std::uint64_t token) TANDEM_EXCLUDES(active_mu_);
  // Segments the order check remembers (bounded by the live blocks touched).
  [[nodiscard]] std::size_t remembered_segments() const TANDEM_EXCLUDES(active_mu_);

 private:
  struct Active {
    Access access;
    const OpLabel* op = nullptr;
    std::uint64_t token = 0;
  };

  // The happens-before check of one starting operation, into `found`;
  // `skipped`: it overlapped another stream's operation in time.
  void check_order(const OpLabel& op, const Epoch& epoch, const VectorClock& clock,
                   std::span<const Access> accesses, bool skipped, std::vector<Finding>& found)
      TANDEM_REQUIRES(active_mu_);

  mutable base::Mutex active_mu_;
  std::vector<Active> active_ TANDEM_GUARDED_BY(active_mu_);
  std::uint64_t next_token_ TANDEM_GUARDED_BY(active_mu_) = 1;
  Shadow shadow_ TANDEM_GUARDED_BY(active_mu_);  // checked in the order operations start

  mutable base::Mutex log_mu_;
  std::vector<Violation> log_ TANDEM_GUARDED_BY(log_mu_);
  std::atomic<std::uint64_t> count_{0};  // log_.size(), readable without log_mu_
};

// RAII registration of one running operation's accesses.
class ActiveScope {
 public:
  ActiveScope(Checker& checker, const OpLabel& op, const Epoch& epoch, const VectorClock& clock,
              std::span<const Access> accesses)
      : checker_(checker), token_(checker.enter(op, epoch, clock, accesses, overlaps_)) {}
  ~ActiveScope() { checker_.leave(token_); }
  ActiveScope(const ActiveScope&) = delete;
  ActiveScope& operator=(const ActiveScope&) = delete;

  // No other stream's operation overlapped this one when it started.
  [[nodiscard]] bool clean() const noexcept { return overlaps_ == 0; }

 private:
  Checker& checker_;
  std::size_t overlaps_ = 0;
  std::uint64_t token_;
};

}  // namespace tandem::driver::sim
