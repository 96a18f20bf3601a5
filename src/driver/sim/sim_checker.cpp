// SPDX-License-Identifier: Apache-2.0
#include "sim_checker.hpp"

#include <utility>

#include "sim_text.hpp"

namespace tandem::driver::sim {

namespace {

bool overlap(const Access& a, const Access& b) {
  if (a.bytes == 0 || b.bytes == 0) {
    return false;
  }
  return a.ptr < b.ptr + b.bytes && b.ptr < a.ptr + a.bytes;
}

// "launch 'k' on stream #2 writes [..)" / "free on the host frees [..)"
std::string describe_side(const OpLabel& op, const Access& a) {
  return op.what + " on " + stream_name(op.stream) + " " + (op.is_free ? "frees" : mode_verb(a.mode)) + " " +
         byte_range(a.ptr, a.bytes);
}

using Found = Finding;

Found classify(const OpLabel& new_op, const Access& new_access, const OpLabel& old_op,
               const Access& old_access) {
  const std::string now = describe_side(new_op, new_access);
  const std::string then = describe_side(old_op, old_access);
  // What the executor does about it (see Executor::run_work / free_block).
  const std::string outcome = new_op.is_free ? "; the block was released without poisoning"
                                             : "; " + new_op.what + " was not performed";
  if (new_op.is_free || old_op.is_free) {
    return {Violation::Kind::use_after_free,
            now + " while " + then + " (a free not ordered after the other stream's use)" + outcome};
  }
  return {Violation::Kind::unordered_conflict,
          now + " while " + then + " (no ordering between the two streams)" + outcome};
}

std::string past_verb(const Race& r) {
  if (r.earlier.is_free) {
    return "frees";
  }
  return r.earlier_writes ? "writes" : "reads";
}

Found classify_race(const OpLabel& op, const Access& mine, const Race& r, bool skipped) {
  const std::string now = describe_side(op, mine);
  const std::string then = *r.earlier.who + ", which " + past_verb(r) + " " + byte_range(r.lo, r.hi - r.lo);
  std::string outcome;
  if (skipped) {
    outcome =
        op.is_free ? "; the block was released without poisoning" : "; " + op.what + " was not performed";
  }
  const std::string detail = now + "; unordered with " + then +
                             " (no stream order, event wait or host synchronization between them)";
  if (op.is_free || r.earlier.is_free) {
    return {Violation::Kind::use_after_free, detail + " (a free not ordered after the other use)" + outcome};
  }
  return {Violation::Kind::unordered_conflict, detail + outcome};
}

}  // namespace

void Checker::record(Violation::Kind kind, std::string detail) {
  base::Lock lock(log_mu_);
  log_.push_back(Violation{kind, std::move(detail)});
  count_.store(log_.size(), std::memory_order_relaxed);
}

std::vector<Violation> Checker::violations() const {
  base::Lock lock(log_mu_);
  return log_;
}

std::uint64_t Checker::enter(const OpLabel& op, const Epoch& epoch, const VectorClock& clock,
                             std::span<const Access> accesses, std::size_t& overlaps) {
  std::vector<Found> timed;
  std::vector<Found> ordered;
  std::uint64_t token = 0;
  {
    base::Lock lock(active_mu_);
    token = next_token_++;
    for (const Access& mine : accesses) {
      for (const Active& other : active_) {
        if (other.op->stream == op.stream || !overlap(mine, other.access)) {
          continue;
        }
        if (!writes(mine.mode) && !writes(other.access.mode)) {
          continue;
        }
        timed.push_back(classify(op, mine, *other.op, other.access));
      }
    }
    check_order(op, epoch, clock, accesses, !timed.empty(), ordered);
    for (const Access& mine : accesses) {
      if (mine.bytes > 0) {
        active_.push_back(Active{mine, &op, token});
      }
    }
  }
  // Recorded outside active_mu_ so that the two locks are never nested. An
  // overlap in time is always unordered too; it is reported on its own only
  // if the order check somehow missed it.
  for (Found& f : ordered.empty() ? timed : ordered) {
    record(f.kind, std::move(f.detail));
  }
  overlaps = timed.size();
  return token;
}

void Checker::check_order(const OpLabel& op, const Epoch& epoch, const VectorClock& clock,
                          std::span<const Access> accesses, bool skipped, std::vector<Finding>& found) {
  const PastAccess me{epoch, std::make_shared<const std::string>(op.what + " on " + stream_name(op.stream)),
                      op.is_free};
  for (const Access& mine : accesses) {
    std::vector<Race> races;
    if (op.is_free) {
      shadow_.free(clock, mine.ptr, mine.bytes, races);
    } else {
      shadow_.access(me, clock, mine.ptr, mine.bytes, writes(mine.mode), races);
    }
    for (const Race& r : races) {
      found.push_back(classify_race(op, mine, r, skipped));
    }
  }
}

void Checker::leave(std::uint64_t token) {
  base::Lock lock(active_mu_);
  std::erase_if(active_, [token](const Active& a) { return a.token == token; });
}

}  // namespace tandem::driver::sim

namespace tandem::driver::sim {

std::size_t Checker::remembered_segments() const {
  base::Lock lock(active_mu_);
  return shadow_.segments();
}

}  // namespace tandem::driver::sim
