// SPDX-License-Identifier: Apache-2.0
// ops/transfer.cpp — copies between views and between a view and the host.
// In a capture they add to the graph (and its shadow effects) instead.
#include "../element_codec.hpp"
#include "../engine.hpp"
#include "ops.hpp"
#include "tandem/errors.hpp"
#include "tandem/launch.hpp"

namespace tandem::scenario::detail {

namespace {

void touch(ThreadState& t, const View& v) {
  if (v.extent_bytes() > 0) t.capture->allocations.insert(v.allocation_id());
}

}  // namespace

void exec_copy(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.id);
  const Stream stream = e.session.stream(e.handles, s);
  const std::shared_ptr<Handle> src = e.handles.view(s.src, {"copy source"});
  const std::shared_ptr<Handle> dst = e.handles.view(s.dst, {"copy destination"});
  const std::uint64_t t0 = e.clock.ticks();
  LaunchFuture f = tandem::copy(stream, src->view, dst->view);
  e.submitted(s, t, f, 2 * src->view.extent_bytes(), e.clock.ticks() - t0, false);
  const ViewLayout sl = ViewLayout::of(src->view), dl = ViewLayout::of(dst->view);
  if (!f.valid() && t.capture != nullptr) {
    if (src->view.extent_bytes() > 0) {
      t.capture->allocations.insert(src->view.allocation_id());
      t.capture->allocations.insert(dst->view.allocation_id());
    }
    if (e.shadow_on) t.capture->record->effects.emplace_back([sl, dl](Shadow& sh) { sh.copy(sl, dl); });
  } else if (e.shadow_on) {
    e.shadow.copy(sl, dl);
  }
  e.name_future(s, std::move(f));
}

void exec_upload(Engine& e, const CompiledStep& s, ThreadState& t) {
  const Step& st = *s.step;
  e.handles.require_free(s.id);
  const Stream stream = e.session.stream(e.handles, s);
  const std::shared_ptr<Handle> h = e.handles.view(s.buf, {"upload destination"});
  const View& v = h->view;
  const std::uint64_t n = v.element_count();
  if (st.init.kind == ValueForm::Kind::values && st.init.values.size() != n) {
    // Asked of the runtime as it is, which refuses it (and a recording of
    // the run writes it down); the error names the handle.
    try {
      (void)upload(stream, v, make_elements(v.dtype(), st.init, st.init.values.size()));
    } catch (const Error& refused) {
      throw Error(refused.code(), "upload of " + std::to_string(st.init.values.size()) + " values into '" +
                                      st.buf + "', which holds " + std::to_string(n) + " elements");
    }
    throw Error(ErrorCode::out_of_range, "upload of " + std::to_string(st.init.values.size()) +
                                             " values into '" + st.buf + "', which holds " +
                                             std::to_string(n) + " elements (the runtime took it)");
  }
  std::vector<std::byte> data = make_elements(v.dtype(), st.init, n);
  const std::uint64_t t0 = e.clock.ticks();
  LaunchFuture f = upload(stream, v, data);
  e.submitted(s, t, f, data.size(), e.clock.ticks() - t0, false);
  const ViewLayout l = ViewLayout::of(v);
  if (!f.valid() && t.capture != nullptr) {
    touch(t, v);
    if (e.shadow_on) {
      auto shared = std::make_shared<const std::vector<std::byte>>(std::move(data));
      t.capture->record->effects.emplace_back([l, shared](Shadow& sh) { sh.write(l, *shared); });
    }
  } else if (e.shadow_on) {
    e.shadow.write(l, data);
  }
  e.name_future(s, std::move(f));
}

void exec_download(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.id);
  const Stream stream = e.session.stream(e.handles, s);
  const std::shared_ptr<Handle> h = e.handles.view(s.buf, {"download source"});
  const std::uint64_t t0 = e.clock.ticks();
  Download d = download(stream, h->view);
  e.submitted(s, t, d.future(), h->view.extent_bytes(), e.clock.ticks() - t0, false);
  if (!d.future().valid() && t.capture != nullptr) touch(t, h->view);
  e.name_future(s, d.future());
}

}  // namespace tandem::scenario::detail
