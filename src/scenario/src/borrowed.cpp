// SPDX-License-Identifier: Apache-2.0
// borrowed.cpp — making, lending, checking and destroying what the run
// borrows to the runtime.
#include "borrowed.hpp"

#include <algorithm>
#include <utility>

#include "tandem/base/guard.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/scenario/step.hpp"

namespace tandem::scenario::detail {

namespace {

[[noreturn]] void refused(const char* what, const std::string& name, const Step& step, driver::Backend& b,
                          const driver::Result& r) {
  throw Error(ErrorCode::driver, std::string(what) + " '" + name + "' (" + step.path +
                                     "): making it outside the runtime failed: " + b.describe(r));
}

}  // namespace

// The driver gave out `raw` again: any record still holding it (of this
// repetition, or kept for release_late) was destroyed behind the run's back.
void Borrowed::note_reuse(const void* raw, bool is_context, const Step& by) {
  const auto mark = [&](Record& r) {
    const void* mine = r.is_context ? r.ctx.raw : r.stream.raw;
    if (r.is_context == is_context && mine == raw && r.reused.empty()) r.reused = by.path;
  };
  std::for_each(records_.begin(), records_.end(), mark);
  std::for_each(late_.begin(), late_.end(), mark);
}

Stream Borrowed::stream(const Context& ctx, const std::string& name, const Step& step) {
  driver::Backend& b = ctx.device().platform().backend();
  driver::StreamHandle raw;
  if (const driver::Result r = b.stream_create(ctx.native(), raw); !r.ok())
    refused("borrow_stream", name, step, b, r);
  Record rec;
  rec.name = name;
  rec.step = &step;
  rec.backend = &b;
  rec.ctx = ctx.native();
  rec.stream = raw;
  {
    base::Guard g(mu_);
    note_reuse(raw.raw, false, step);
    records_.push_back(std::move(rec));  // from here on the run destroys it, whatever happens next
  }
  any_.store(true, std::memory_order_release);
  return Stream::borrow(ctx, raw);
}

Context Borrowed::context(const Device& device, const ContextOptions& options, const std::string& name,
                          const Step& step) {
  driver::Backend& b = device.platform().backend();
  driver::ContextHandle raw;
  if (const driver::Result r = b.context_create(device.ordinal(), raw); !r.ok())
    refused("borrow_context", name, step, b, r);
  auto released = std::make_shared<std::atomic<bool>>(false);
  Record rec;
  rec.is_context = true;
  rec.name = name;
  rec.step = &step;
  rec.backend = &b;
  rec.ctx = raw;
  rec.ordinal = device.ordinal();
  rec.released = released;
  {
    base::Guard g(mu_);
    note_reuse(raw.raw, true, step);
    records_.push_back(std::move(rec));
  }
  any_.store(true, std::memory_order_release);
  // The runtime holds this until it lets go of the context, then drops it.
  std::shared_ptr<void> keep_alive(nullptr,
                                   [released](void*) { released->store(true, std::memory_order_release); });
  Context c = Context::borrow(device, raw, std::move(keep_alive), options);
  kernels::load_catalog(c);  // as for the run's own contexts: no first launch waits for running work
  Stream check = Stream::create(c);
  base::Guard g(mu_);
  for (Record& r : records_) {
    if (r.is_context && r.ctx.raw == raw.raw && !r.held) {
      r.held = c;
      r.check = std::move(check);
      r.id = c.id();
      break;
    }
  }
  return c;
}

std::vector<Context> Borrowed::held_contexts() const {
  std::vector<Context> out;
  if (!any()) return out;
  base::Guard g(mu_);
  for (const Record& r : records_)
    if (r.held) out.push_back(*r.held);
  return out;
}

std::optional<StreamRef> Borrowed::check_stream(std::uint64_t context_id) const {
  if (!any()) return std::nullopt;
  base::Guard g(mu_);
  for (const Record& r : records_)
    if (r.check && r.id == context_id) return StreamRef(*r.check);
  return std::nullopt;
}

void Borrowed::let_go() {
  std::vector<Context> contexts;  // released after the lock
  std::vector<Stream> streams;
  base::Guard g(mu_);
  for (Record& r : records_) {
    if (r.held) contexts.push_back(*std::exchange(r.held, std::nullopt));
    if (r.check) streams.push_back(*std::exchange(r.check, std::nullopt));
  }
}

bool Borrowed::runtime_let_go() const {
  base::Guard g(mu_);
  return std::all_of(records_.begin(), records_.end(), [](const Record& r) {
    return !r.is_context || r.released->load(std::memory_order_acquire);
  });
}

BorrowCheck Borrowed::release_stream(const Record& r) {
  const ojson expected = {{"stream", r.name}, {"alive", true}};
  std::string detail;
  if (!r.reused.empty()) {
    detail =
        "destroyed before its owner destroyed it: the driver handed its handle out again, to the stream "
        "borrowed by " +
        r.reused;
  } else if (const driver::Result res = r.backend->stream_destroy(r.ctx, r.stream); !res.ok()) {
    detail = "its owner could not destroy it (the runtime destroyed it): " + r.backend->describe(res);
  } else {
    return {r.step, "borrowed_stream", expected, expected, true};
  }
  return {
      r.step, "borrowed_stream", expected, {{"stream", r.name}, {"alive", false}, {"detail", detail}}, false};
}

BorrowCheck Borrowed::release_context(const Record& r) {
  const ojson expected = {{"context", r.name}, {"released_by_runtime", true}, {"alive", true}};
  // `alive` is unknown (null) while the runtime holds it: the run does not touch it then.
  const auto failed = [&](bool released, const std::string& detail) {
    return BorrowCheck{r.step,
                       "borrowed_context",
                       expected,
                       {{"context", r.name},
                        {"released_by_runtime", released},
                        {"alive", released ? ojson(false) : ojson(nullptr)},
                        {"detail", detail}},
                       false};
  };
  if (!r.released->load(std::memory_order_acquire)) {
    return failed(false,
                  "the runtime still holds it after retirement settled (a handle in it was forgotten, or "
                  "the runtime leaked it); the run leaves it alone");
  }
  if (!r.reused.empty()) {
    return failed(true,
                  "destroyed before its owner destroyed it: the driver handed its handle out again, to the "
                  "context borrowed by " +
                      r.reused);
  }
  int ordinal = -1;
  if (const driver::Result res = r.backend->context_device(r.ctx, ordinal);
      !res.ok() || ordinal != r.ordinal) {
    return failed(true,
                  "it is no longer a live context of device " + std::to_string(r.ordinal) +
                      " (the runtime destroyed it): " +
                      (res.ok() ? "it says device " + std::to_string(ordinal) : r.backend->describe(res)));
  }
  if (const driver::Result res = r.backend->context_destroy(r.ctx); !res.ok())
    return failed(true, "its owner could not destroy it: " + r.backend->describe(res));
  return {r.step, "borrowed_context", expected, expected, true};
}

std::vector<BorrowCheck> Borrowed::release() {
  std::vector<Record> recs;
  {
    base::Guard g(mu_);
    recs.swap(records_);
  }
  any_.store(false, std::memory_order_release);
  const auto held_by_runtime = [&recs](const driver::ContextHandle& ctx) {
    return std::any_of(recs.begin(), recs.end(), [&](const Record& c) {
      return c.is_context && c.ctx.raw == ctx.raw && !c.released->load(std::memory_order_acquire);
    });
  };
  std::vector<BorrowCheck> out;
  std::vector<Record> keep;
  // Streams first: a stream made in a borrowed context goes before it.
  for (Record& r : recs) {
    if (r.is_context) continue;
    if (held_by_runtime(r.ctx)) {
      keep.push_back(std::move(r));  // its context's check says why
      continue;
    }
    out.push_back(release_stream(r));
  }
  for (Record& r : recs) {
    if (!r.is_context) continue;
    out.push_back(release_context(r));
    if (!r.released->load(std::memory_order_acquire)) keep.push_back(std::move(r));
  }
  base::Guard g(mu_);
  for (Record& r : keep) late_.push_back(std::move(r));
  return out;
}

void Borrowed::release_late() {
  std::vector<Record> late;
  {
    base::Guard g(mu_);
    late.swap(late_);
  }
  const auto let_go = [&late](const driver::ContextHandle& ctx) {
    return std::none_of(late.begin(), late.end(), [&](const Record& c) {
      return c.is_context && c.ctx.raw == ctx.raw && !c.released->load(std::memory_order_acquire);
    });
  };
  for (const Record& r : late)
    if (!r.is_context && r.reused.empty() && let_go(r.ctx)) (void)r.backend->stream_destroy(r.ctx, r.stream);
  for (const Record& r : late)
    if (r.is_context && r.reused.empty() && r.released->load(std::memory_order_acquire))
      (void)r.backend->context_destroy(r.ctx);
}

}  // namespace tandem::scenario::detail
