// SPDX-License-Identifier: Apache-2.0
// ops/views.cpp — allocations, views of them, conversions, drops.
#include <span>

#include "../engine.hpp"
#include "ops.hpp"
#include "tandem/errors.hpp"
#include "tandem/launch.hpp"
#include "tandem/testing/sim.hpp"

namespace tandem::scenario::detail {

void exec_alloc(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.id);
  const Stream stream = e.session.stream(e.handles, s);
  View v = allocate(stream, *s.step->dtype, e.alloc_len(s));
  e.name_new_buffer(s, t, std::move(v));
}

void exec_foreign(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.id);
  // Foreign memory follows its stream's device (a borrowed stream's own context).
  Context ctx = e.session.step_context(e.handles, s);
  View v = testing::adopt_foreign(e.session.platform(), ctx, *s.step->dtype, s.step->len);
  e.name_new_buffer(s, t, std::move(v));
}

// slice, peel, atomic, tensor_view, as_buffer: a new counted view of the same allocation.
void exec_slice(Engine& e, const CompiledStep& s, ThreadState&) {
  const Step& st = *s.step;
  e.handles.derive(s.id, s.of, [&st](const View& src) { return src.slice(st.offset, st.len); });
}

void exec_peel(Engine& e, const CompiledStep& s, ThreadState&) {
  const Step& st = *s.step;
  e.handles.derive(s.id, s.of, [&st](const View& src) { return src.peel(st.index); });
}

void exec_atomic(Engine& e, const CompiledStep& s, ThreadState&) {
  e.handles.derive(s.id, s.of, [](const View& src) { return src.atomic(); });
}

void exec_as_buffer(Engine& e, const CompiledStep& s, ThreadState&) {
  e.handles.derive(s.id, s.of, [](const View& src) { return src.as_buffer(); });
}

void exec_tensor_view(Engine& e, const CompiledStep& s, ThreadState&) {
  const Step& st = *s.step;
  e.handles.derive(s.id, s.of, [&st](const View& src) {
    std::optional<std::span<const std::int64_t>> shape;
    if (!st.shape.empty()) shape = std::span<const std::int64_t>(st.shape);
    std::vector<DimRange> ranges;
    for (const auto& [begin, end] : st.slice) ranges.push_back({begin, end});
    std::optional<std::span<const DimRange>> r;
    if (!st.slice.empty()) r = std::span<const DimRange>(ranges);
    return src.tensor_view(shape, r);
  });
}

void exec_split(Engine& e, const CompiledStep& s, ThreadState&) { e.handles.split(s.of, s.ids, s.step->at); }

namespace {

// to_tensor, into_buffer, reinterpret: the source is consumed; only a
// unique view may be (the model's answer is compared with the runtime's:
// success means it was unique, `aliased` that it was not).
template <class F>
void consume(Engine& e, const CompiledStep& s, F&& convert) {
  e.handles.convert(s.id, s.from, [&](View&& v, bool known, bool unique) -> View {
    View out;
    try {
      out = convert(std::move(v));
    } catch (const Error& err) {
      if (err.code() == ErrorCode::aliased) e.handles.compare(known, unique, false);
      throw;
    }
    e.handles.compare(known, unique, true);
    return out;
  });
}

}  // namespace

void exec_to_tensor(Engine& e, const CompiledStep& s, ThreadState&) {
  consume(e, s, [&st = *s.step](View&& v) { return std::move(v).to_tensor(st.shape); });
}

void exec_into_buffer(Engine& e, const CompiledStep& s, ThreadState&) {
  consume(e, s, [](View&& v) { return std::move(v).into_buffer(); });
}

void exec_reinterpret(Engine& e, const CompiledStep& s, ThreadState&) {
  const DType to = *s.step->dtype;
  consume(e, s, [&e, to](View&& v) {
    // Bytes become bool only after every byte was read back and found 0 or 1.
    if (to == DType::boolean) return std::move(v).to_bool_checked(e.session.check_stream_for(v));
    return std::move(v).reinterpret(to);
  });
}

void exec_drop(Engine& e, const CompiledStep& s, ThreadState&) { e.handles.drop(s.id, false); }

void exec_forget(Engine& e, const CompiledStep& s, ThreadState&) { e.handles.drop(s.id, true); }

}  // namespace tandem::scenario::detail
