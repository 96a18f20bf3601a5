// SPDX-License-Identifier: Apache-2.0
// op_table.hpp — the scenario ops, one row each: the name, the fields with
// how each is read, the op's own reading of what the shared readers cannot
// check, and the function that runs it. The loader, the engine,
// `tandem validate`/`tandem ops` and the docs' op list all read this table;
// adding an op is one row plus its functions (ops/*.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "tandem/scenario/step.hpp"

namespace tandem::scenario::detail {

class Reader;
class Engine;
struct CompiledStep;
struct ThreadState;

// How the loader reads a field. The shared kinds are read in one fixed
// order (step_reader.cpp), so messages come in the same order whatever the
// op; `own` fields are read by the row's `read` function after them.
enum class FieldKind : std::uint8_t {
  handle,       // a non-empty handle name
  handle_pair,  // [a, b]: two new handle names (split)
  stream,       // a declared stream name
  dtype,        // an element type name
  len,          // an element count (alloc: also {"fraction_of_free": f})
  count,        // a non-negative integer (offset, at, index, count, us: bounds per field)
  init,         // "none", "zero", "iota", {"fill": v} or {"random": seed}
  values,       // {"fill": v}, {"iota": {...}} or an array of values (upload's from)
  shape,        // 1 to 4 extents
  ranges,       // 1 to 4 [begin, end) pairs
  steps,        // a nested step list
  text,         // a string of at most kMaxTextBytes
  own,          // read by the row's `read`
};

struct FieldSpec {
  const char* name;
  FieldKind kind;
  bool required;
  const char* doc;        // one line for `tandem ops` and the docs
  const char* dflt = "";  // an optional field's value when absent ("" when required or none)
};

using ReadFn = void (*)(Reader& r, const nlohmann::json& j, const std::string& path, Step& s);
using ExecFn = void (*)(Engine& e, const CompiledStep& s, ThreadState& t);

struct OpRow {
  Op op;
  const char* name;
  const char* family;                 // the ops/ file its functions live in
  std::span<const FieldSpec> fields;  // required first, in the order messages list them
  ReadFn read;                        // what the shared readers do not check; may be null
  ExecFn exec;
  const char* doc;
};

// Every op, in Op's order (row i has op == Op(i)).
[[nodiscard]] std::span<const OpRow> op_table() noexcept;
[[nodiscard]] const OpRow& op_row(Op op) noexcept;
[[nodiscard]] const OpRow* find_op(std::string_view name) noexcept;
[[nodiscard]] inline const char* op_name(Op op) noexcept { return op_row(op).name; }

// The table as JSON (`tandem ops --json`: what the corpus generator and the
// docs read).
[[nodiscard]] nlohmann::ordered_json op_table_json();

}  // namespace tandem::scenario::detail
