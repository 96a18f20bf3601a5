// SPDX-License-Identifier: Apache-2.0
// borrowed.hpp — driver objects a run makes outside the runtime and lends
// to it (the ops borrow_stream and borrow_context; spec/runtime.md §2:
// a borrowed stream or context is never destroyed by the runtime).
//
// The run plays the other library: it makes a stream or a context through
// the backend itself (on CUDA, cuStreamCreate / cuCtxCreate; on the sim,
// the sim's own handles), hands it to Stream::borrow / Context::borrow,
// and the scenario uses it and drops it like any other. At the end of the
// repetition, once retirement has settled, the run checks that the object
// is still alive, which only holds if the runtime never destroyed it, and
// destroys it itself. Each outcome is a check in the report (`what`:
// `borrowed_stream` or `borrowed_context`, on the borrow step), so a
// runtime that destroys a borrowed object fails the scenario naming it.
//
// Thread-safe: steps of several scenario threads may borrow at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "run_record.hpp"
#include "tandem/base/mutex.hpp"
#include "tandem/base/thread_annotations.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/stream.hpp"

namespace tandem::scenario {
struct Step;
}

namespace tandem::scenario::detail {

// One check of a borrowed object at the end of a repetition.
struct BorrowCheck {
  const Step* step = nullptr;  // the borrow step
  const char* what = "";       // "borrowed_stream" | "borrowed_context"
  ojson expected, actual;
  bool ok = false;
};

class Borrowed {
 public:
  Borrowed() = default;
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;

  // Sync. Makes a driver stream in `ctx` through its backend, outside the
  // runtime, and borrows it. Throws Error(driver) naming the stream and
  // the step when the driver refuses it.
  Stream stream(const Context& ctx, const std::string& name, const Step& step);
  // Sync. Makes a driver context on `device` (Backend::context_create) and
  // borrows it with `options` and a keep-alive that says when the runtime
  // lets go of it; loads the kernel catalog in it and makes an owned
  // stream there for reading views back (check_stream). Throws Error
  // (driver) naming the context and the step.
  Context context(const Device& device, const ContextOptions& options, const std::string& name,
                  const Step& step);

  // Lock-free: whether anything was borrowed this repetition.
  [[nodiscard]] bool any() const noexcept { return any_.load(std::memory_order_acquire); }
  // The borrowed contexts the run holds this repetition (their counters
  // count in the run's: check live_allocations, pending, note).
  [[nodiscard]] std::vector<Context> held_contexts() const;
  // The read-back stream of a borrowed context (by Context::id), if it is one.
  [[nodiscard]] std::optional<StreamRef> check_stream(std::uint64_t context_id) const;

  // The end of a repetition, after the scenario's handles are gone, in three
  // parts. let_go: the run drops its own references (the contexts and their
  // read-back streams), so only the runtime's remain. Then, after the
  // caller has waited for retirement, runtime_let_go says whether the
  // runtime has released every borrowed context (streams it releases as
  // their work retires). release: the checks; every object is destroyed
  // by the run, except a context the runtime still holds (a handle in it
  // was forgotten, or a leak), and the streams made in it, which wait for
  // release_late.
  void let_go();
  [[nodiscard]] bool runtime_let_go() const;
  [[nodiscard]] std::vector<BorrowCheck> release();
  // After the report and the forgotten handles are gone: what release kept
  // is destroyed if the runtime has let go of it by now, else left alone
  // (leaked: never destroyed under the runtime's feet).
  void release_late();

 private:
  struct Record {
    bool is_context = false;
    std::string name;
    const Step* step = nullptr;
    driver::Backend* backend = nullptr;
    driver::ContextHandle ctx;    // a stream's context, or the borrowed context itself
    driver::StreamHandle stream;  // a stream's handle
    int ordinal = 0;
    // A context: set by the keep-alive the runtime holds, when it lets go.
    std::shared_ptr<std::atomic<bool>> released;
    std::optional<Context> held;  // a context: the run's own reference, until let_go
    std::optional<Stream> check;  // a context: its read-back stream, until let_go
    std::uint64_t id = 0;         // a context: Context::id
    // The driver handed this handle out again (to `reused`) while the run
    // had not destroyed it: something else did.
    std::string reused;
  };

  void note_reuse(const void* raw, bool is_context, const Step& by) TANDEM_REQUIRES(mu_);
  [[nodiscard]] static BorrowCheck release_stream(const Record& r);
  [[nodiscard]] static BorrowCheck release_context(const Record& r);

  mutable base::Mutex mu_;
  std::vector<Record> records_ TANDEM_GUARDED_BY(mu_);
  std::vector<Record> late_ TANDEM_GUARDED_BY(mu_);  // kept by release for release_late
  std::atomic<bool> any_{false};
};

}  // namespace tandem::scenario::detail
