// SPDX-License-Identifier: Apache-2.0
#include "queue_bound.hpp"

#include <algorithm>

#include "context_state.hpp"
#include "retirement.hpp"

namespace tandem::detail {

namespace {

// Under `s.mu`: the newest seq the device is known to have completed on
// `s`, from the probes (at most two queries), and whether it runs more
// than `cap` submissions behind the newest. A probe at or below what
// retirement has proven is not queried: its event may already serve a
// newer submission (events go back once proven: anchor->proven_seq is
// stored before), and none newer than that is ever given back.
struct Look {
  std::uint64_t done = 0;
  bool behind = false;
};

Look look_at_device(StreamState& s, std::uint32_t cap) TANDEM_REQUIRES(s.mu) {
  const std::uint64_t newest = s.submitted_seq.load(std::memory_order_relaxed);
  Look out;
  out.done = std::max(s.anchor->proven_seq.load(std::memory_order_acquire),
                      s.settled_seq.load(std::memory_order_acquire));
  // The newest probe at least `cap` back, and the newest of all.
  const StreamState::QueueProbe* limit = nullptr;
  const StreamState::QueueProbe* latest = nullptr;
  for (const StreamState::QueueProbe& p : s.queue_probes) {
    if (!p.event || p.seq <= out.done) continue;
    if (latest == nullptr || p.seq > latest->seq) latest = &p;
    if (newest - p.seq >= cap && (limit == nullptr || p.seq > limit->seq)) limit = &p;
  }
  driver::Backend& b = s.ctx->backend();
  const auto complete = [&](const StreamState::QueueProbe& p) {
    // An error is retirement's to quarantine: it does not hold submitters back.
    return b.event_query(s.ctx->handle, p.event).status != driver::Status::not_ready;
  };
  if (limit != nullptr) {
    if (!complete(*limit)) {
      out.behind = true;
      return out;
    }
    out.done = limit->seq;
  }
  if (latest != nullptr && latest != limit && complete(*latest)) out.done = latest->seq;
  return out;
}

}  // namespace

void bound_queue(StreamState& s, std::uint32_t cap) {
  std::uint64_t target = 0;
  {
    base::Guard g(s.mu);
    const Look look = look_at_device(s, cap);
    const std::uint64_t newest = s.submitted_seq.load(std::memory_order_relaxed);
    if (look.behind) {
      target = newest - (cap - cap / 4);
      bump(s.queue_waits, 1);
    }
    // Next look: a cap past what is known complete (or will be, once the
    // wait ends), and never before the next probe could be kept.
    const std::uint64_t known = look.behind ? target : look.done;
    s.queue_check_seq.store(std::max(known + cap + 1, newest + queue_probe_spacing(cap)),
                            std::memory_order_relaxed);
  }
  if (target != 0) s.retirement->wait_settled_to(s, target);
}

}  // namespace tandem::detail
