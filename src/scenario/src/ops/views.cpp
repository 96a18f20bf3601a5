// ops/views.cpp — allocations, views of them, conversions, drops.
#include <span>

#include "../engine.hpp"
#include "tandem/testing/sim.hpp"
#include "ops.hpp"
#include "tandem/errors.hpp"
#include "tandem/launch.hpp"

namespace tandem::scenario::detail {

void exec_alloc(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.id);
  const Stream stream = e.session.stream(e.handles, s);
  View v = allocate(stream, *s.step->dtype, e.alloc_len(s));
  e.name_new_buffer(s, t, std::move(v));
}

void exec_foreign(Engine& e, const CompiledStep& s, ThreadState& t) {
  e.handles.require_free(s.id);
  // Foreign memory follows its stream's device.
  Context& ctx = e.session.ctx_of(e.session.stream_device(*s.step));
  View v = testing::adopt_foreign(e.session.platform(), ctx, *s.step->dtype, s.step->len);
  e.name_new_buffer(s, t, std::move(v));
}

// slice, peel, atomic, tensor_view, as_buffer: a new counted view of the same allocation.
void exec_derive(Engine& e, const CompiledStep& s, ThreadState&) {
  const Step& st = *s.step;
  e.handles.derive(s.id, s.of, [&st](const View& src) -> View {
    switch (st.op) {
      case Op::slice: return src.slice(st.offset, st.len);
      case Op::peel: return src.peel(st.index);
      case Op::atomic: return src.atomic();
      case Op::as_buffer: return src.as_buffer();
      default: break;
    }
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

// to_tensor, into_buffer, reinterpret: the source is consumed; only a
// unique view may be (the model's answer is compared with the runtime's).
void exec_convert(Engine& e, const CompiledStep& s, ThreadState&) {
  const Step& st = *s.step;
  e.handles.convert(s.id, s.from, [&](View&& v, bool known, bool unique) -> View {
    View out;
    try {
      switch (st.op) {
        case Op::to_tensor: out = std::move(v).to_tensor(st.shape); break;
        case Op::into_buffer: out = std::move(v).into_buffer(); break;
        default:
          if (*st.dtype == DType::boolean) {
            // Bytes become bool only after every byte was read back and found 0 or 1.
            out = std::move(v).to_bool_checked(e.session.check_stream_for(v));
          } else {
            out = std::move(v).reinterpret(*st.dtype);
          }
          break;
      }
    } catch (const Error& err) {
      if (err.code() == ErrorCode::aliased) e.handles.compare(known, unique, false);
      throw;
    }
    e.handles.compare(known, unique, true);
    return out;
  });
}

void exec_drop(Engine& e, const CompiledStep& s, ThreadState&) { e.handles.drop(s.id, false); }

void exec_forget(Engine& e, const CompiledStep& s, ThreadState&) { e.handles.drop(s.id, true); }

}  // namespace tandem::scenario::detail
