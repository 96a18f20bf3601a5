// SPDX-License-Identifier: Apache-2.0
// tandem/stream.hpp — an in-order work queue on one context.
//
//   tandem::Stream s = tandem::Stream::create(ctx);      // owned
//   tandem::Stream b = tandem::Stream::borrow(ctx, raw);  // someone else's
//
// Both programming models submit to the same Stream type. Copying a Stream
// shares it; dropping the last copy never waits: work still pending on it
// retires normally, its leases stay in force, and the runtime destroys an
// owned driver stream once that work has retired. A borrowed driver stream is
// never destroyed by tandem; its owner must keep it alive until the work
// tandem submitted on it has retired (wait_for_retirement).
//
// StreamRef is the non-owning form: cheap to pass, keeps nothing alive.
#pragma once

#include <cstdint>

#include "tandem/context.hpp"
#include "tandem/detail/ref.hpp"

namespace tandem {

namespace detail {
struct StreamState;
void ref_add(StreamState* p) noexcept;
void ref_release(StreamState* p) noexcept;
}  // namespace detail

class Stream;

class StreamRef {
 public:
  StreamRef(const Stream& s) noexcept;  // NOLINT(google-explicit-constructor): a borrow
  explicit StreamRef(detail::StreamState* s) noexcept : s_(s) {}
  [[nodiscard]] std::uint64_t id() const noexcept;
  [[nodiscard]] driver::StreamHandle native() const noexcept;
  [[nodiscard]] detail::StreamState* state() const noexcept { return s_; }

 private:
  detail::StreamState* s_;
};

class Stream {
 public:
  // Sync. Creates a non-blocking driver stream. Throws Error(driver).
  static Stream create(const Context& ctx);
  // Sync. Wraps a driver stream of `ctx` that tandem will never destroy.
  static Stream borrow(const Context& ctx, driver::StreamHandle handle);

  [[nodiscard]] std::uint64_t id() const noexcept;
  [[nodiscard]] bool owned() const noexcept;
  [[nodiscard]] driver::StreamHandle native() const noexcept;
  [[nodiscard]] Context context() const;
  // Blocks until all work on the stream is done on the device (does not wait
  // for retirement). Throws Error(driver).
  void synchronize() const;
  // The next submission on this stream gets a completion event of its own,
  // and what was queued before it is proven by an event of its own too (an
  // internal marker is queued now when it shares a later one): a failure
  // reported for that submission's event is attributed to it alone, even
  // with ContextOptions::share_completion_events on. For fault injection
  // (the scenario engine arms a simulated fault right after). Ordered on
  // this stream; does not block on the device; costs an event record or
  // two. Throws Error(driver) when no event can be made. Thread-safe, but
  // "next" is whichever submission takes the stream's lock first.
  void isolate_next_submission() const;
  // This stream's bound on the device's queue, in place of the context's
  // ContextOptions::max_queued_per_stream (docs/runtime.md, "The bound on
  // the device's queue"): a submission on it waits while the device runs
  // more than `cap` of its submissions behind; 0 turns the bound off for
  // this stream alone (a stream that deliberately queues thousands behind
  // a held kernel). At most 2^20 (more is taken as 2^20). Applies from the
  // next submission; takes the stream's lock, never waits for the device.
  // Not recorded into a scenario (it changes when a call blocks, not what
  // the device does). Thread-safe.
  void set_max_queued(std::uint32_t cap) const;
  // The bound in force on this stream (0: none).
  [[nodiscard]] std::uint32_t max_queued() const noexcept;

  explicit Stream(detail::Ref<detail::StreamState> s) noexcept : s_(std::move(s)) {}
  [[nodiscard]] detail::StreamState* state() const noexcept { return s_.get(); }
  friend bool operator==(const Stream& a, const Stream& b) noexcept { return a.s_ == b.s_; }

 private:
  detail::Ref<detail::StreamState> s_;
};

inline StreamRef::StreamRef(const Stream& s) noexcept : s_(s.state()) {}

}  // namespace tandem
