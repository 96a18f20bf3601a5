// SPDX-License-Identifier: Apache-2.0
// step_reader.cpp — one step: the op's row says which fields it takes; the
// shared readers check them in one fixed order (so a file's messages do not
// depend on how the op table is laid out), then the row's own reader.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "json_reader.hpp"
#include "op_table.hpp"
#include "tandem/scenario/loader.hpp"

namespace tandem::scenario::detail {

namespace {

const char* const kErrorCodes[] = {"aliased",         "non_contiguous", "conflict",      "out_of_range",
                                   "device_mismatch", "invalid_dtype",  "out_of_memory", "invalid_handle",
                                   "driver",          "timeout",        "unsupported"};

// `len`: an element count; for alloc also {"fraction_of_free": f} (an
// extension). Any other form keeps the integer's message unchanged.
void read_len(Reader& r, const json& j, const std::string& p, Step& s) {
  if (!j.is_object() || (s.op != Op::alloc && !j.contains("fraction_of_free"))) {
    r.uint_in(j, p, 0, kMaxLen, s.len);
    return;
  }
  if (s.op != Op::alloc) {
    r.expected(p,
               std::string("an integer in [0, ") + std::to_string(kMaxLen) +
                   "] (the {\"fraction_of_free\": f} form is for alloc only)",
               j);
    return;
  }
  static const std::vector<std::string> keys = {"fraction_of_free"};
  for (const auto& [k, v] : j.items()) {
    if (k != keys[0])
      r.error(p + "." + k,
              "unknown len field '" + k + "'" + did_you_mean(k, keys) + "; expected fraction_of_free");
  }
  const auto it = j.find("fraction_of_free");
  if (it == j.end()) {
    r.error(p + ".fraction_of_free",
            "missing required field 'fraction_of_free' of a len object, e.g. {\"fraction_of_free\": 0.6}");
    return;
  }
  if (it->is_number()) {
    const double f = it->get<double>();
    if (std::isfinite(f) && f > 0 && f <= 1) {
      s.len_fraction_of_free = f;
      return;
    }
  }
  r.expected(p + ".fraction_of_free", "a number in (0, 1] (a fraction of the device's free memory)", *it);
}

void read_dtype(Reader& r, const json& j, const std::string& p, Step& s) {
  if (!j.is_string()) {
    r.expected(p, "a dtype name (f32, i32, u32, u8, bool, ...)", j);
  } else if (auto d = dtype_from_name(j.get_ref<const std::string&>())) {
    s.dtype = *d;
  } else {
    std::vector<std::string> names;
    for (DType t : kAllDTypes) names.emplace_back(dtype_name(t));
    const auto& n = j.get_ref<const std::string&>();
    r.error(p, "unknown dtype '" + n + "'" + did_you_mean(n, names) + "; expected one of " + list(names));
  }
}

void read_pair(Reader& r, const json& j, const std::string& p, Step& s) {
  if (!j.is_array() || j.size() != 2) {
    r.expected(p, "an array of two handle names [a, b]", j);
    return;
  }
  for (std::size_t i = 0; i < 2; ++i) {
    std::string n;
    if (r.name_str(j[i], p + "[" + std::to_string(i) + "]", n)) s.ids.push_back(n);
  }
}

void read_ranges(Reader& r, const json& j, const std::string& p, Step& s) {
  if (!j.is_array() || j.empty() || j.size() > 4) {
    r.expected(p, "an array of 1 to 4 [begin, end) pairs", j);
    return;
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string q = p + "[" + std::to_string(i) + "]";
    std::vector<std::int64_t> be;
    if (!r.dims_list(j[i], q, 2, 2, 0, be)) continue;
    if (be[0] > be[1]) {
      r.error(q,
              "expected begin <= end, found [" + std::to_string(be[0]) + ", " + std::to_string(be[1]) + "]");
      continue;
    }
    s.slice.emplace_back(be[0], be[1]);
  }
}

void read_nested(Reader& r, const json& j, const std::string& p, int depth, Step& s) {
  if (depth + 1 > kMaxStepNesting)
    r.error(p, "capture/loop nesting deeper than " + std::to_string(kMaxStepNesting));
  else
    s.steps = read_steps(r, j, p, depth + 1);
}

// The shared fields, in the order they are read. A key is read wherever it
// appears, even on an op that does not take it (that op also reports it as
// unknown): what a file's messages say must not depend on the op table.
enum class Shared : std::uint8_t {
  handle,
  stream,
  dtype,
  len,
  count,
  pair,
  init,
  from,
  shape,
  ranges,
  steps,
  timeout,
  text
};
struct Canonical {
  const char* name;
  Shared kind;
  std::string Step::*text = nullptr;
  std::uint64_t Step::*number = nullptr;
  std::uint64_t max = 0;
};
const Canonical kCanonical[] = {
    {"id", Shared::handle, &Step::id},
    {"of", Shared::handle, &Step::of},
    {"from", Shared::handle, &Step::from},
    {"src", Shared::handle, &Step::src},
    {"dst", Shared::handle, &Step::dst},
    {"buf", Shared::handle, &Step::buf},
    {"graph", Shared::handle, &Step::graph},
    {"context", Shared::handle, &Step::context},
    {"stream", Shared::stream},
    {"dtype", Shared::dtype},
    {"len", Shared::len},
    {"offset", Shared::count, nullptr, &Step::offset, kMaxLen},
    {"at", Shared::count, nullptr, &Step::at, kMaxLen},
    {"index", Shared::count, nullptr, &Step::index, kMaxLen},
    {"ids", Shared::pair},
    {"init", Shared::init},
    {"from", Shared::from},
    {"shape", Shared::shape},
    {"slice", Shared::ranges},
    {"steps", Shared::steps},
    {"count", Shared::count, nullptr, &Step::count, kMaxLoop},
    {"us", Shared::count, nullptr, &Step::us, kMaxSleepUs},
    {"timeout_ms", Shared::timeout},
    {"message", Shared::text, &Step::message},
};

bool takes(const OpRow& row, std::string_view name, FieldKind kind) {
  return std::any_of(row.fields.begin(), row.fields.end(),
                     [&](const FieldSpec& f) { return f.kind == kind && name == f.name; });
}

void read_shared(Reader& r, const Canonical& c, const OpRow& row, const json& j, const std::string& p,
                 int depth, Step& s) {
  switch (c.kind) {
    case Shared::handle:
      // upload's `from` is a value form, read below
      if (!(std::string_view(c.name) == "from" && takes(row, "from", FieldKind::values)))
        r.name_str(j, p, s.*c.text);
      return;
    case Shared::stream:
      r.stream_name(j, p, s.stream);
      return;
    case Shared::dtype:
      read_dtype(r, j, p, s);
      return;
    case Shared::len:
      read_len(r, j, p, s);
      return;
    case Shared::count:
      r.uint_in(j, p, 0, c.max, s.*c.number);
      return;
    case Shared::pair:
      read_pair(r, j, p, s);
      return;
    case Shared::init:
      r.value_form(j, p, F_NONE | F_ZERO | F_IOTA_STR | F_FILL | F_RANDOM,
                   "\"none\", \"zero\", \"iota\", {\"fill\": v} or {\"random\": seed}", s.init);
      return;
    case Shared::from:
      if (takes(row, "from", FieldKind::values))
        r.value_form(j, p, F_FILL | F_IOTA_OBJ | F_VALUES,
                     "{\"fill\": v}, {\"iota\": {...}} or an array of values", s.init);
      return;
    case Shared::shape:
      r.dims_list(j, p, 1, 4, 0, s.shape);
      return;
    case Shared::ranges:
      read_ranges(r, j, p, s);
      return;
    case Shared::steps:
      if (takes(row, "steps", FieldKind::steps)) read_nested(r, j, p, depth, s);
      return;
    case Shared::text:
      if (r.str(j, p, s.*c.text) && (s.*c.text).size() > kMaxTextBytes)
        r.error(p, "a text of " + std::to_string((s.*c.text).size()) + " bytes; at most " +
                       std::to_string(kMaxTextBytes));
      return;
    case Shared::timeout: {
      std::uint64_t t = 0;
      if (r.uint_in(j, p, 0, kMaxTimeoutMs, t)) s.timeout_ms = t;
      return;
    }
  }
}

// The envelope: op, unknown and missing fields, expect_error. Null when the op is unknown.
const OpRow* read_envelope(Reader& r, const json& j, const std::string& p, Step& s) {
  std::vector<std::string> op_names;
  for (const OpRow& row : op_table()) op_names.emplace_back(row.name);
  const auto opit = j.find("op");
  if (opit == j.end()) {
    r.error(p + ".op", "missing required field 'op'; expected one of " + list(op_names));
    return nullptr;
  }
  if (!opit->is_string()) {
    r.expected(p + ".op", "an op name string", *opit);
    return nullptr;
  }
  const auto& opn = opit->get_ref<const std::string&>();
  const OpRow* row = find_op(opn);
  if (row == nullptr) {
    r.error(p + ".op",
            "unknown op '" + opn + "'" + did_you_mean(opn, op_names) + "; expected one of " + list(op_names));
    return nullptr;
  }
  s.op = row->op;
  std::vector<std::string> allowed = {"op", "expect_error"};
  for (const FieldSpec& f : row->fields) allowed.emplace_back(f.name);
  for (const auto& [k, v] : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      r.error(p + "." + k, "unknown field '" + k + "' for op '" + opn + "'" + did_you_mean(k, allowed) +
                               "; expected " + list(allowed));
  }
  for (const FieldSpec& f : row->fields)
    if (f.required && !j.contains(f.name))
      r.error(p + "." + f.name, "missing required field '" + std::string(f.name) + "' for op '" + opn + "'");
  if (auto it = j.find("expect_error"); it != j.end()) {
    std::vector<std::string> codes(std::begin(kErrorCodes), std::end(kErrorCodes));
    std::string c;
    if (r.enum_str(*it, p + ".expect_error", codes, c)) s.expect_error = c;
  }
  return row;
}

bool read_step(Reader& r, const json& j, const std::string& p, int depth, Step& s) {
  s.path = p;
  if (!j.is_object()) {
    r.expected(p, "a step object {\"op\": ...}", j);
    return false;
  }
  const std::size_t before = r.diags.size();
  const OpRow* row = read_envelope(r, j, p, s);
  if (row == nullptr) return false;
  for (const Canonical& c : kCanonical)
    if (auto it = j.find(c.name); it != j.end()) read_shared(r, c, *row, *it, p + "." + c.name, depth, s);
  if (row->read != nullptr) row->read(r, j, p, s);
  return r.diags.size() == before;
}

}  // namespace

std::vector<Step> read_steps(Reader& r, const json& j, const std::string& p, int depth) {
  std::vector<Step> out;
  if (!j.is_array()) {
    r.expected(p, "an array of steps", j);
    return out;
  }
  for (std::size_t i = 0; i < j.size() && !r.full(); ++i) {
    Step s;
    if (read_step(r, j[i], p + "[" + std::to_string(i) + "]", depth, s)) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tandem::scenario::detail
