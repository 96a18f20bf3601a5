// SPDX-License-Identifier: Apache-2.0
// stream_state.hpp — an in-order queue on one context, and its pending
// submissions in submission order (spec/runtime.md §2, §6).
//
// References: one per user Stream handle, one held by the retirement
// service. When only the retirement service's is left and nothing is
// pending, retirement destroys the stream — so a stream dropped with work
// pending still retires that work, and the dropping thread never waits.
//
// Untracked work: allocations (cuMemAllocAsync) and frees of dropped
// allocations are enqueued on a stream without a completion event of their
// own. `untracked_seq` says where the newest one sits in the stream's order:
// every submission with seq >= untracked_seq was enqueued after it, so that
// submission's event proves it done. What must follow such work
// (Context::trim, a stream about to be destroyed) waits for such an event,
// queuing an internal marker submission when none exists yet.
//
// Releases (spec/runtime.md §6): an allocation whose last view is dropped
// while all its leases are on this stream is pushed here (push_release);
// the next thread that holds the stream's lock for a driver call (a
// submitter, an allocation, or the retirement thread once the stream is
// quiet) enqueues its free on this stream, behind that work
// (drain_releases), and notes the seq of the submission that follows it
// (`unproven`): when that submission settles, its verdict is the free's
// (retirement finishes the release: freed, or quarantined). The pool reuses
// the memory on this stream at once, and on others once the free ran; an
// allocation of the same size on this stream takes the block itself
// (drain_releases' `wanted`), without the pool.
//
// The context's release stream (ContextState::release_stream, `internal`)
// takes the releases of memory leased on several of the context's streams
// (MultiStreamRelease::release_stream). Its drain first makes it wait on
// the event covering each lease stream's newest leased submission
// (order_after_leases), then frees; markers queued on it prove the frees,
// as on any stream. No submission ever runs on it, so only the retirement
// thread and allocating threads drain it, and a user's stream never waits
// on it. Lock order: its `mu` comes before the allocations' tracker locks
// (the drain takes them; nothing that holds a tracker lock takes its `mu`),
// which come before the user streams' (the lease streams').
//
// Allocations need more: another stream's first use must wait for the
// allocation and for nothing enqueued after it (two reads on two streams
// never wait for each other). So the submission that first follows new
// allocations (`unmarked_allocation`) records its `birth_mark` event before
// its work, or is a marker queued for the purpose: the allocations born
// before seq N are ordered by the birth mark of submission N.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "submission.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/spin_lock.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::detail {

struct ContextState;
struct CaptureBuild;
class Retirement;
struct StreamState;

// What an allocation keeps of the stream it was born on. The stream may be
// destroyed first (its handles dropped, its work retired); the anchor says
// whether it still exists and how far its work is proven complete.
struct StreamAnchor {
  // Takes a reference on `context` (null: none, the release stream's).
  explicit StreamAnchor(ContextState* context) noexcept;
  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }

  // A user stream's anchor holds a reference on the stream's context until
  // it goes: an allocation born on the stream holds the anchor, and so
  // needs no context reference of its own (AllocationState: two locked
  // read-modify-writes fewer per allocation). Null for the release
  // stream's, whose reference on the context weighs differently
  // (ContextState::release) and on which nothing is born.
  ContextState* const ctx;

  std::atomic<std::uint32_t> refs{1};  // the stream's, plus one per allocation born on it
  // Every operation enqueued on the stream before the submission with this
  // seq is proven done on the device (its event completed normally).
  std::atomic<std::uint64_t> proven_seq{0};
  // Held while using `stream` from outside its own handles (a free, an
  // ordering marker); the stream is destroyed only after clearing it.
  base::SpinLock mu;
  StreamState* stream TANDEM_GUARDED_BY(mu) = nullptr;

 private:
  ~StreamAnchor() = default;
  // The last reference went: deletes the anchor, then releases `ctx`.
  void destroy() noexcept;
};

// Submission records kept for reuse (without events): a stack, reused
// newest first, so the records a stream cycles through are about as many as
// it has pending, whatever it once had. A stream that once held thousands in
// flight (a burst behind a long kernel) keeps them here, but reusing them
// oldest first would walk all of them: every launch would touch a record
// last used thousands of launches ago, out of cache. (On the H200 a stream
// left with thousands of idle records and events launched 7-9 % slower than
// a fresh one; this order alone did not change that, Context::trim took half
// of it: results/h200/stream-state-7735357.) It grows (doubling, up to kMaxCapacity) when records come back
// to a full stack: a stream holds about as many records as it once had pending between two sweeps (a 1 ms
// sweep gap at ~200 ns a launch is ~5,000), and a smaller pool would free the surplus at every sweep and
// allocate it again at the next launches.
class RecordStack {
 public:
  static constexpr std::uint32_t kInitialCapacity = 256;  // powers of two
  // 16,384, or TANDEM_RECORD_POOL_MAX (tuning; a power of two from 256).
  static const std::uint32_t kMaxCapacity;
  RecordStack() : slots_(new Submission*[kInitialCapacity]), capacity_(kInitialCapacity) {}
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] std::uint32_t size() const noexcept { return count_; }
  Submission* pop() noexcept { return slots_[--count_]; }
  // The record pop() returns next (not empty()).
  [[nodiscard]] Submission* top() const noexcept { return slots_[count_ - 1]; }
  // False when full at kMaxCapacity, or when growing found no memory: the
  // caller keeps `s`.
  bool push(Submission* s) noexcept {
    if (count_ == capacity_ && !grow()) return false;
    slots_[count_++] = s;
    return true;
  }

 private:
  bool grow() noexcept {
    if (capacity_ >= kMaxCapacity) return false;
    std::unique_ptr<Submission*[]> bigger(new (std::nothrow) Submission*[std::size_t{2} * capacity_]);
    if (!bigger) return false;
    std::copy(slots_.get(), slots_.get() + count_, bigger.get());
    slots_ = std::move(bigger);
    capacity_ *= 2;
    return true;
  }

  std::unique_ptr<Submission*[]> slots_;
  std::uint32_t capacity_;
  std::uint32_t count_ = 0;
};

struct StreamState {
  // Registers the stream with the retirement service (which takes the
  // first reference) and returns it with one more reference for the caller.
  // `internal`: the context's release stream (see the top of this file).
  static StreamState* create(ContextState& ctx, driver::StreamHandle handle, bool owned,
                             bool internal = false);

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept;
  void untrack_pending_leases() noexcept;  // mutants only (tandem/base/mutant.hpp)
  // Retirement only: true once no user handle is left and nothing pends.
  [[nodiscard]] bool abandoned() const noexcept {
    return refs.load(std::memory_order_acquire) == 1 && pending() == 0;
  }
  // Queue length (markers included). Seqs are contiguous, so it is the
  // distance between two counters that each have a single writer: no
  // read-modify-write on a line both sides touch. seq_cst: the sleep/wake
  // handshake with the retirement thread reads it (retirement.hpp).
  [[nodiscard]] std::uint64_t pending() const noexcept {
    const std::uint64_t settled = settled_seq.load(std::memory_order_seq_cst);
    return submitted_seq.load(std::memory_order_seq_cst) - settled;
  }
  // Retirement only, once abandoned(): makes the stream unreachable through
  // its anchor, unless untracked work on it must first be proven done (then
  // it queues a marker and returns false, as when another thread queued one
  // meanwhile). After true, destroy() may run.
  bool detach() noexcept;
  // Retirement only, holding `mu` (or once nothing else can reach the
  // queue): unlinks the sentinel, if any, when it is the whole queue, and
  // lets go of settled records a future holds that were unlinked without
  // the lock (a walker holding `mu` may have been reading them).
  void drop_unlinked_locked() noexcept TANDEM_REQUIRES(mu);
  // A settled record whose future still holds it: its events go back to the
  // free list now (as give_back does) and its queue reference later.
  void give_back_events(const Submission& r) noexcept;
  // Retirement only, after detach(): destroys the driver stream (if owned)
  // and this object.
  void destroy() noexcept;

  // Recycled events and submission records (submit path, under `mu`).
  // Making an event is the exception: cuEventCreate takes a lock of the
  // driver for writing, and while other threads launch (each holding it
  // for reading) it waits for a moment none does: 5-65 ms on the H200 with
  // 8 threads launching. So events come back to `free_events` as their
  // submissions settle, records in the pool own none, and a stream that
  // shares events covers a submission rather than make one (submit.cpp).
  driver::EventHandle take_event() TANDEM_REQUIRES(mu);
  // Whether take_event() has one without making it (takes back what
  // retirement returned first).
  bool has_free_event() TANDEM_REQUIRES(mu);
  // An idle event back to the free list, or, past kMaxFreeEvents, to
  // `surplus_events` for the retirement thread to destroy (destroying one
  // on the submit path could stall like cuEventCreate does).
  void free_event(driver::EventHandle e) TANDEM_REQUIRES(mu);
  // Retirement, outside the stream's lock otherwise: destroys the surplus.
  void destroy_surplus_events() noexcept;
  // Context::trim, holding the anchor's lock too (as destroy_surplus_events
  // does), and destroy(): deletes the idle records and swaps the idle and surplus events
  // into `idle` and `surplus` (empty on entry), for the caller to destroy
  // once both locks are released. What pends keeps its own.
  void shed_idle(std::vector<driver::EventHandle>& idle, std::vector<driver::EventHandle>& surplus) noexcept
      TANDEM_REQUIRES(mu);
  Submission* take_submission() TANDEM_REQUIRES(mu);
  void recycle(Submission* s) noexcept TANDEM_REQUIRES(mu);
  // Takes back a record retired with nothing else referring to it (its
  // state still `pending`, its keep-alive released), its events to
  // `free_events`; returns it instead when the pool is full, for the caller
  // to delete once the lock is released.
  Submission* reuse_settled(Submission* s) noexcept TANDEM_REQUIRES(mu);
  // Retirement, without `mu`: hands settled records (as for reuse_settled)
  // and their events back, as lists of handles, where take_submission finds
  // them. Neither side walks the records to pass them: a record's lines are
  // read by the submitter only when it reuses it, and retirement writes
  // none of them (each line it wrote would have to come back from its core;
  // a linked stack of returned records did that, one line a record, all at
  // once in the launch that took the stack back).
  void give_back(Submission* const* records, std::size_t n) noexcept;
  // Moves what retirement gave back into the pool and the free events.
  void take_back_returned() noexcept TANDEM_REQUIRES(mu);
  // Appends a submission (seq assigned, events recorded) to the queue.
  void enqueue_locked(Submission* sub) noexcept TANDEM_REQUIRES(mu);
  // The bound on the device's queue for this stream from the next
  // submission on (queue_bound.hpp; 0: none).
  void set_queue_cap_locked(std::uint32_t cap) noexcept TANDEM_REQUIRES(mu);

  // An event that completes only after every operation enqueued on this
  // stream before the submission numbered `seq`: the newest pending
  // submission's when it was enqueued late enough and has its own event,
  // else that of a marker queued now (`queued_marker` set: the caller
  // notifies retirement once it holds no lock). None while capturing or
  // when recording failed.
  driver::EventHandle event_after(std::uint64_t seq, bool& queued_marker) TANDEM_REQUIRES(mu);
  // The event that proves pending submission `sub` (of this stream) done:
  // its own, or, when it is covered, the first one recorded after it (a
  // marker queued now if there is none yet). None when its completion is
  // unknown (an event record failed) or while capturing.
  driver::EventHandle event_proving(const Submission& sub, bool& queued_marker) TANDEM_REQUIRES(mu);
  // The birth mark of submission `birth_seq`, which follows the allocations
  // made before it (a marker queued now if nothing was submitted since
  // them). None once that submission settled (the caller checks proven_seq
  // first), while capturing, or when recording failed.
  driver::EventHandle birth_event(std::uint64_t birth_seq, bool& queued_marker) TANDEM_REQUIRES(mu);
  // Queues a marker now; returns its event (none if recording failed).
  // Throws Error(driver) when no event can be created.
  driver::EventHandle queue_marker(bool& queued_marker) TANDEM_REQUIRES(mu);
  // Untracked work enqueued since the newest submission.
  [[nodiscard]] bool has_uncovered_work() const TANDEM_REQUIRES(mu) {
    return untracked_seq != 0 && untracked_seq >= next_seq;
  }

  // --- releases (see the top of this file) ----------------------------------
  // The dropping thread, holding `a`'s tracker lock while one of its leases
  // on this stream is tracked (so the stream is alive). False when no memory
  // could be had to queue it: the caller releases after host proof instead.
  bool push_release(AllocationState* a) noexcept;
  // Enqueues the frees pushed so far, ahead of the submission numbered
  // `seq_after` (the next one, or the one being submitted), unless the
  // stream captures (a free would be recorded into the graph: they wait for
  // the capture's end). A free the driver refuses goes to `failed`, which
  // the retirement thread hands back to host-proven release (abandoning it
  // here could free on this very stream, under its lock); so does one that
  // the release stream cannot order after its leases.
  //
  // `wanted` (an allocation of `wanted->bytes` on this stream, about to ask
  // the pool; same_stream_reuse_on()): the first release of exactly that
  // size hands its block over instead (Backend::mem_reuse_async: two driver
  // calls fewer), `taken`. It counts as enqueued here like a free and is
  // proven like one: the new owner's work follows the old one's in stream
  // order, as after the pool's own reuse on one stream. A reuse the backend
  // refuses (`result`; an injected allocation failure is the allocation's
  // to report) frees that release as the others.
  struct BlockWanted {
    std::uint64_t bytes = 0;
    driver::DevicePtr taken = 0;
    driver::Result result;  // of the reuse asked, if one was
  };
  void drain_releases(std::uint64_t seq_after, BlockWanted* wanted = nullptr) noexcept TANDEM_REQUIRES(mu);
  // The release stream's drain, before each free (release_stream.cpp): makes
  // this stream wait on the event that covers the newest leased submission
  // of each stream that still leases `a`. False when one cannot be had (a
  // lease quarantined, a lease stream capturing, no event, a refused wait):
  // the release then waits for host proof. Sets `queued_marker` when it
  // queued a marker on a lease stream (the caller wakes retirement).
  bool order_after_leases(AllocationState& a, bool& queued_marker) noexcept TANDEM_REQUIRES(mu);
  // Retirement, in settle(): moves the frees proven or quarantined by the
  // settled submissions up to `last_seq` into `out` (seq, allocation).
  void take_settled_releases(std::uint64_t last_seq,
                             std::vector<std::pair<std::uint64_t, AllocationState*>>& out);
  // Retirement: moves the releases whose free the driver refused into `out`.
  void take_failed_releases(std::vector<AllocationState*>& out);
  // Retirement, without `mu`: releases pushed or enqueued that no
  // submission follows yet (a marker must cover them once it is quiet).
  [[nodiscard]] bool has_uncovered_releases() const noexcept {
    return inbox_ready.load(std::memory_order_acquire) ||
           newest_unproven_seq.load(std::memory_order_acquire) >
               submitted_seq.load(std::memory_order_acquire);
  }
  // Releases pushed and not yet finished (freed or quarantined).
  [[nodiscard]] bool has_release_work() const noexcept {
    return releases_finished.load(std::memory_order_acquire) !=
           releases_pushed.load(std::memory_order_acquire);
  }

  // Cache lines by who writes them: set once; the lock and what both sides
  // change under it; the submitters' alone; the retirement thread's alone.
  const std::uint64_t id;
  ContextState* const ctx;  // strong reference
  const driver::StreamHandle handle;
  const bool owned;
  const bool internal;         // the context's release stream: no user handle, no submissions
  StreamAnchor* const anchor;  // one reference, released by destroy()
  // The process's retirement service (Retirement::instance()), which every
  // submit notifies: here, on a line the submit path reads anyway.
  Retirement* const retirement;
  // Mirrors `capture != nullptr` (written under `mu`) so that the submit
  // path needs the lock only while a capture may be running.
  std::atomic<bool> capturing{false};
  std::unique_ptr<CaptureBuild> capture TANDEM_GUARDED_BY(mu);  // while capturing

  // Held across enqueue + event record + queue push, so the queue's order is
  // the order of the events on the device stream.
  alignas(64) base::SpinLock mu;
  // The pending queue, oldest to newest. Submitters append under `mu`; the
  // retirement thread (the only one that unlinks) reads them without it,
  // and moves `head` without it while the queue stays non-empty. Emptying
  // the queue needs the lock (the tail races an append), which a submitter
  // holds across its driver calls: one making an event can hold it for
  // milliseconds while other threads launch. So when the lock is taken,
  // retirement leaves its last settled record linked instead (`sentinel`:
  // settled, not pending; `head` and maybe `tail`) and never waits for a
  // submitter (docs/runtime.md, "Retirement under sustained load").
  std::atomic<Submission*> head{nullptr};
  std::atomic<Submission*> tail{nullptr};
  std::atomic<Submission*> sentinel{nullptr};  // written by retirement only
  // Releases wait in `release_inbox` (below): on the line the submit path
  // takes anyway, so checking it costs a launch nothing more.
  std::atomic<bool> inbox_ready{false};
  RecordStack free_records TANDEM_GUARDED_BY(mu);
  // The submitter's spare lists, swapped with the returned ones (below) so
  // that taking them back allocates nothing.
  std::vector<Submission*> taken_records TANDEM_GUARDED_BY(mu);
  std::vector<driver::EventHandle> taken_events TANDEM_GUARDED_BY(mu);
  std::vector<driver::EventHandle> free_events TANDEM_GUARDED_BY(mu);
  std::vector<driver::EventHandle> surplus_events TANDEM_GUARDED_BY(mu);
  std::atomic<bool> has_surplus{false};  // surplus_events is not empty
  // The most idle events a stream keeps (TANDEM_MAX_FREE_EVENTS; 0: no cap).
  static const std::uint32_t kMaxFreeEvents;
  // Events a new stream makes at once (TANDEM_STREAM_EVENTS); the release
  // stream, which records only the markers proving its frees, makes a few.
  static const std::uint32_t kPrewarmEvents;
  static constexpr std::uint32_t kInternalPrewarmEvents = 4;

  // A stream's submissions take contiguous seqs: retirement's bisect walks
  // newest->seq - head->seq links and pending() counts by seq (a33ccac
  // skipped one and crashed on the H200; reverted).
  alignas(64) std::uint64_t next_seq TANDEM_GUARDED_BY(mu) = 1;
  std::uint64_t untracked_seq TANDEM_GUARDED_BY(mu) = 0;  // see the top of this file
  // A free was enqueued here since the last Context::trim (drain_releases,
  // ContextState::free_memory): the pool returns its memory only once the
  // host has seen this stream reach it.
  bool freed_since_trim TANDEM_GUARDED_BY(mu) = false;
  Submission* last_mark TANDEM_GUARDED_BY(mu) = nullptr;  // the newest birth mark's; valid while queued
  std::uint64_t last_mark_seq TANDEM_GUARDED_BY(mu) = 0;
  bool unmarked_allocation TANDEM_GUARDED_BY(mu) = false;  // allocated since the newest seq was taken
  // How many, and the newest one's range (submit.cpp, writes_the_new_allocation).
  std::uint32_t unmarked_count TANDEM_GUARDED_BY(mu) = 0;
  driver::DevicePtr unmarked_base TANDEM_GUARDED_BY(mu) = 0;
  std::uint64_t unmarked_bytes TANDEM_GUARDED_BY(mu) = 0;
  // Covered submissions queued since the newest one that recorded its own
  // event (ContextOptions::share_completion_events).
  std::uint32_t shared_run TANDEM_GUARDED_BY(mu) = 0;
  // Stream::isolate_next_submission: the next submission records its own event.
  bool isolate_next TANDEM_GUARDED_BY(mu) = false;
  // At most kShareRun - 1 covered submissions per event of their own while
  // the stream has a free event; while it has none, as many as come until
  // retirement hands one back (rather than make one on the submit path), or
  // kLongestShareRun - 1 where TANDEM_DRY_SHARE_RUN caps the run.
  static const std::uint32_t kShareRun;
  static const std::uint32_t kLongestShareRun;
  // Written by submitters under `mu` (one writer at a time: plain stores),
  // read without the lock by retirement, stats and waiters.
  std::atomic<std::uint64_t> submitted_seq{0};   // seq of the newest queued
  std::atomic<std::uint64_t> user_submitted{0};  // kernel/copy/transfer/replay
  std::atomic<std::uint64_t> leases_taken{0};
  std::atomic<std::uint64_t> shared_events{0};  // covered submissions queued
  // The submitter's next look at the device's queue, once submitted_seq
  // reaches it (queue_bound.hpp; never while the bound is off): on the
  // line the submit path reads anyway.
  std::atomic<std::uint64_t> queue_check_seq{0};  // set by the constructor
  // The bound in force on this stream (the context's, or
  // Stream::set_max_queued's; 0: none). Stored under `mu`.
  std::atomic<std::uint32_t> queue_cap{0};  // set by the constructor
  // The seq from which an evented submission is kept as a probe (the
  // newest probe's + queue_probe_spacing; never while the bound is off):
  // here, so that the ring's lines are touched only when one is kept.
  std::uint64_t queue_next_probe_seq TANDEM_GUARDED_BY(mu) = 0;  // set by the constructor

  alignas(64) std::atomic<std::uint64_t> settled_seq{0};  // everything <= this settled
  // Retirement only. Its cursor: the newest queued submission a sweep has
  // looked at, and the newest with an event of its own among them (each
  // valid while its seq is at or above head's: retirement alone unlinks).
  // A covered tail is covered by a marker once submitted_seq has not moved
  // for a while (swept_submitted, quiet_since_ns).
  // Settled records a future holds, unlinked without `mu`: their queue
  // reference is dropped once retirement next holds it. Whether the
  // sentinel is one of those.
  std::vector<Submission*> unlinked_handoffs;
  bool sentinel_handed_off = false;
  Submission* swept_tail = nullptr;
  std::uint64_t swept_tail_seq = 0;
  Submission* newest_evented = nullptr;
  std::uint64_t newest_evented_seq = 0;
  std::uint64_t swept_submitted = 0;
  std::uint64_t quiet_since_ns = 0;
  // Since when sweeps in a row retired nothing (0: not stalled), and when
  // to look again (Retirement::stall_over).
  std::uint64_t stalled_since_ns = 0;
  std::uint64_t next_look_ns = 0;
  std::atomic<std::uint64_t> user_settled{0};
  std::atomic<std::uint64_t> leases_released{0};
  std::atomic<std::uint64_t> retired{0};
  std::atomic<std::uint64_t> quarantined{0};
  std::atomic<std::uint64_t> quiet_tail_markers{0};

  // Releases: pushed (any dropping thread) and drained (whoever holds `mu`)
  // under `release_mu`, a leaf lock; `inbox_ready` (above) spares the
  // submit path the lock while the inbox is empty. `unproven`: frees
  // enqueued, each with the seq of the submission after it, in seq order.
  alignas(64) base::SpinLock release_mu;
  std::vector<AllocationState*> release_inbox TANDEM_GUARDED_BY(release_mu);
  std::vector<AllocationState*> release_draining TANDEM_GUARDED_BY(mu);  // the drain's spare list
  std::vector<std::pair<std::uint64_t, AllocationState*>> unproven TANDEM_GUARDED_BY(release_mu);
  std::vector<AllocationState*> failed_releases TANDEM_GUARDED_BY(release_mu);
  std::atomic<bool> has_failed_releases{false};  // spares retirement the lock each sweep
  std::atomic<std::uint64_t> newest_unproven_seq{0};
  // FIFO: a release is pushed, drained, proven (or abandoned) in order, so
  // a waiter compares counts (Retirement::wait_settled).
  std::atomic<std::uint64_t> releases_pushed{0};
  std::atomic<std::uint64_t> releases_finished{0};

  // What retirement gave back (give_back), in the order it settled them.
  // Lock order: `mu`, then `returned_mu`. `has_returned` spares the
  // submitter the lock while the lists are empty.
  alignas(64) base::SpinLock returned_mu;
  std::vector<Submission*> returned_records TANDEM_GUARDED_BY(returned_mu);
  std::vector<driver::EventHandle> returned_events TANDEM_GUARDED_BY(returned_mu);
  std::atomic<bool> has_returned{false};

  // The bound on the device's queue (queue_bound.hpp), off the submit
  // path's lines: evented submissions at least queue_probe_spacing(cap)
  // seqs apart, in a ring, the newest at queue_probe_next - 1 (written when
  // one is kept, read at a look); and the submissions that waited.
  struct QueueProbe {
    std::uint64_t seq = 0;
    driver::EventHandle event{};
  };
  static constexpr std::uint32_t kQueueProbes = 16;
  alignas(64) std::array<QueueProbe, kQueueProbes> queue_probes TANDEM_GUARDED_BY(mu){};
  std::uint32_t queue_probe_next TANDEM_GUARDED_BY(mu) = 0;
  std::atomic<std::uint64_t> queue_waits{0};  // written under `mu`

  alignas(64) std::atomic<std::uint32_t> refs{1};

  [[nodiscard]] std::uint64_t leases_held() const noexcept {
    const std::uint64_t released = leases_released.load(std::memory_order_acquire);
    const std::uint64_t taken = leases_taken.load(std::memory_order_acquire);
    return taken > released ? taken - released : 0;
  }

 private:
  StreamState(std::uint64_t id, ContextState& ctx, driver::StreamHandle handle, bool owned, bool internal);
  ~StreamState() = default;
};

// Adds `n` to an atomic that only one thread writes at a time (the writer
// holds a lock, or is the retirement thread): no read-modify-write needed.
inline void bump(std::atomic<std::uint64_t>& a, std::uint64_t n) noexcept {
  a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_release);
}

}  // namespace tandem::detail
