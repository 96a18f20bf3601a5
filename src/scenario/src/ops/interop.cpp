// SPDX-License-Identifier: Apache-2.0
// ops/interop.cpp — driver objects made outside the runtime and borrowed by
// it: borrow_stream and borrow_context (the session makes, checks and
// destroys them: borrowed.hpp).
#include <algorithm>

#include "../engine.hpp"
#include "../json_reader.hpp"
#include "ops.hpp"

namespace tandem::scenario::detail {

// The loader already took every borrow_stream id as a stream name (so steps
// may name it in `stream`); a name that `streams` declares is an owned
// stream the run creates, and cannot be borrowed too.
void read_borrow_stream(Reader& r, const json&, const std::string& p, Step& s) {
  if (s.id.empty()) return;  // reported by the id's own reader
  const auto named = [&s](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), s.id) != v.end();
  };
  if (!named(r.borrowed_streams) && named(r.streams)) {
    r.error(p + ".id",
            "stream '" + s.id +
                "' is declared in 'streams' (an owned stream the run creates); a borrowed stream needs a "
                "name of its own");
  }
}

// {"op": "borrow_stream", "id": name, "context"?: c}: a driver stream made
// outside the runtime, borrowed, named `name` (the name must be free).
void exec_borrow_stream(Engine& e, const CompiledStep& s, ThreadState&) {
  e.handles.require_free(s.id);
  e.handles.put_borrowed(s.id, e.session.borrow_stream(e.handles, s));
}

// {"op": "borrow_context", "id": c}: a driver context made outside the
// runtime, borrowed; borrow_stream steps name it in `context`.
void exec_borrow_context(Engine& e, const CompiledStep& s, ThreadState&) {
  e.handles.require_free(s.id);
  e.handles.put_borrowed(s.id, e.session.borrow_context(s));
}

}  // namespace tandem::scenario::detail
