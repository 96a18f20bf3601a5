// SPDX-License-Identifier: Apache-2.0
// ops/check.cpp — checks (the runtime's answer against the file's, and the
// model's against the runtime's), free-memory marks and notes.
#include <algorithm>
#include <cmath>

#include "../element_codec.hpp"
#include "../engine.hpp"
#include "../json_reader.hpp"
#include "ops.hpp"
#include "tandem/errors.hpp"

namespace tandem::scenario::detail {

namespace {

const char* check_name(CheckWhat w) noexcept {
  static constexpr const char* kNames[] = {"unique", "views",          "live_allocations", "pending",
                                           "freed",  "owner_released", "same_allocation",  "contents"};
  return kNames[static_cast<int>(w)];
}

ojson form_json(const ValueForm& f) {
  switch (f.kind) {
    case ValueForm::Kind::fill:
      return {{"fill", f.fill}};
    case ValueForm::Kind::iota:
      return {{"iota", {{"start", f.iota_start}, {"step", f.iota_step}}}};
    case ValueForm::Kind::shadow:
      return "shadow";
    case ValueForm::Kind::values: {
      ojson v = ojson::array();
      for (std::size_t i = 0; i < f.values.size() && i < 16; ++i) v.push_back(f.values[i]);
      if (f.values.size() > 16) return {{"values", v}, {"count", f.values.size()}};
      return v;
    }
    default:
      return nullptr;
  }
}

double compare_tolerance(DType t) noexcept {
  switch (t) {
    case DType::f64:
      return 1e-9;
    case DType::f16:
    case DType::bf16:
      return 1e-2;
    default:
      return 1e-4;
  }
}

struct Expected {
  std::vector<std::byte> bytes;
  std::vector<bool> known;
  bool approximate = false;
};

// What `equals` says the view holds: the shadow model's bytes, or the form's.
// nullopt when the count of values does not match (recorded as a failed check).
std::optional<Expected> expected_contents(Engine& e, const CompiledStep& s, ThreadState& t, const View& v) {
  const Step& st = *s.step;
  const std::uint64_t n = v.element_count();
  Expected x;
  if (st.equals.kind == ValueForm::Kind::shadow) {
    if (!e.shadow_on) {
      throw Error(ErrorCode::unsupported,
                  e.scenario.threads.empty()
                      ? "the shadow model is off: " + e.shadow.why_disabled()
                      : "the shadow model needs a single-thread scenario (this one has threads)");
    }
    auto c = e.shadow.read(ViewLayout::of(v));
    if (!c)
      throw Error(ErrorCode::unsupported, "the shadow model does not hold the allocation of '" + st.of + "'");
    x.bytes = std::move(c->bytes);
    x.known = std::move(c->known);
    x.approximate = c->approximate;
    return x;
  }
  if (st.equals.kind == ValueForm::Kind::values && st.equals.values.size() != n) {
    e.record_check(t, st, "contents", form_json(st.equals),
                   {{"elements", n},
                    {"mismatch", "expected " + std::to_string(st.equals.values.size()) +
                                     " values, the view holds " + std::to_string(n)}},
                   false);
    return std::nullopt;
  }
  x.bytes = make_elements(v.dtype(), st.equals, n);
  x.known.assign(n, true);
  return x;
}

void check_contents(Engine& e, const CompiledStep& s, ThreadState& t) {
  const Step& st = *s.step;
  const std::shared_ptr<Handle> h = e.handles.view(s.of, {"check contents of"});
  const View& v = h->view;
  const DType type = v.dtype();
  const std::size_t es = dtype_size(type);
  const std::uint64_t n = v.element_count();
  const std::optional<Expected> x = expected_contents(e, s, t, v);
  if (!x) return;
  const std::vector<std::byte> actual = e.session.read_view(v);
  std::uint64_t mismatches = 0, unknown = 0;
  ojson first = nullptr;
  const double tol = compare_tolerance(type);
  for (std::uint64_t i = 0; i < n && (i + 1) * es <= actual.size(); ++i) {
    if (!x->known[i]) {
      ++unknown;
      continue;
    }
    const std::byte* a = actual.data() + i * es;
    const std::byte* b = x->bytes.data() + i * es;
    bool same = same_element(type, a, b);
    if (!same && x->approximate) {
      const double p = decode_element(type, a), q = decode_element(type, b);
      same = std::fabs(p - q) <= tol * std::max(1.0, std::fabs(q));
    }
    if (!same) {
      if (mismatches == 0)
        first = {{"index", i}, {"expected", element_text(type, b)}, {"actual", element_text(type, a)}};
      ++mismatches;
    }
  }
  ojson actual_json = {{"elements", n}, {"mismatches", mismatches}};
  if (unknown > 0) actual_json["unknown"] = unknown;
  if (!first.is_null()) actual_json["first_mismatch"] = first;
  e.record_check(t, st, "contents", form_json(st.equals), actual_json, mismatches == 0);
}

void check_unique(Engine& e, const CompiledStep& s, ThreadState& t) {
  const HandleTable::Uniqueness u = e.handles.uniqueness(s.of, {"check unique of"});
  e.handles.compare(u.known, u.model, u.actual);
  e.record_check(t, *s.step, "unique", s.step->bool_value, u.actual, u.actual == s.step->bool_value);
}

void check_watch(Engine& e, const CompiledStep& s, ThreadState& t) {
  const Step& st = *s.step;
  const char* what = check_name(st.what);
  const std::optional<AllocationWatch> w = e.handles.watch(s.of);
  if (!w) {
    HandleTable::refuse(
        ErrorCode::invalid_handle,
        "check " + std::string(what) + ": no buffer or tensor was ever named '" + st.of + "'");
  }
  const bool actual = st.what == CheckWhat::freed ? w->freed() : w->owner_released();
  e.record_check(t, st, what, st.bool_value, actual, actual == st.bool_value);
}

void check_same_allocation(Engine& e, const CompiledStep& s, ThreadState& t) {
  const std::shared_ptr<Handle> a = e.handles.view(s.a, {"check same_allocation of"});
  const std::shared_ptr<Handle> b = e.handles.view(s.b, {"check same_allocation of"});
  bool actual = a->view.allocation_id() == b->view.allocation_id();
  if (actual && a->view.byte_offset() == b->view.byte_offset() && a->view.extent_bytes() > 0 &&
      b->view.extent_bytes() > 0) {
    actual = a->view.device_ptr() == b->view.device_ptr();
  }
  e.record_check(t, *s.step, "same_allocation", s.step->bool_value, actual, actual == s.step->bool_value);
}

void check_count(Engine& e, const CompiledStep& s, ThreadState& t, std::uint64_t actual) {
  const Step& st = *s.step;
  e.record_check(t, st, check_name(st.what), st.int_value, actual, actual == st.int_value);
}

}  // namespace

void read_check(Reader& r, const json& j, const std::string& p, Step& s) {
  static const std::vector<std::string> whats = {"unique", "views",          "live_allocations", "pending",
                                                 "freed",  "owner_released", "same_allocation",  "contents"};
  std::string w;
  const auto wit = j.find("what");
  if (wit == j.end() || !r.enum_str(*wit, p + ".what", whats, w)) return;
  // fields each form takes (besides op, what, expect_error)
  std::vector<std::string> fields;
  enum { kBool, kInt, kEquals } val = kBool;
  if (w == "unique") {
    s.what = CheckWhat::unique;
    fields = {"of", "value"};
  } else if (w == "views") {
    s.what = CheckWhat::views;
    fields = {"of", "value"};
    val = kInt;
  } else if (w == "live_allocations") {
    s.what = CheckWhat::live_allocations;
    fields = {"value"};
    val = kInt;
  } else if (w == "pending") {
    s.what = CheckWhat::pending;
    fields = {"value"};
    val = kInt;
  } else if (w == "freed") {
    s.what = CheckWhat::freed;
    fields = {"of", "value"};
  } else if (w == "owner_released") {
    s.what = CheckWhat::owner_released;
    fields = {"of", "value"};
  } else if (w == "same_allocation") {
    s.what = CheckWhat::same_allocation;
    fields = {"a", "b", "value"};
  } else {
    s.what = CheckWhat::contents;
    fields = {"of", "equals"};
    val = kEquals;
  }
  for (const char* k : {"of", "value", "a", "b", "equals"}) {
    const bool want = std::find(fields.begin(), fields.end(), k) != fields.end();
    const bool has = j.contains(k);
    if (want && !has)
      r.error(p + "." + k, std::string("missing required field '") + k + "' for check '" + w + "'");
    if (!want && has)
      r.error(p + "." + k,
              std::string("unexpected field '") + k + "' for check '" + w + "'; expected " + list(fields));
  }
  if (j.contains("a")) r.name_str(j.at("a"), p + ".a", s.a);
  if (j.contains("b")) r.name_str(j.at("b"), p + ".b", s.b);
  if (auto it = j.find("value"); it != j.end()) {
    if (val == kBool)
      r.boolean(*it, p + ".value", s.bool_value);
    else if (val == kInt)
      r.uint_in(*it, p + ".value", 0, kMaxExpect, s.int_value);
  }
  if (auto it = j.find("equals"); it != j.end() && val == kEquals)
    r.value_form(*it, p + ".equals", F_FILL | F_IOTA_OBJ | F_VALUES | F_SHADOW,
                 "{\"fill\": v}, {\"iota\": {\"start\": s, \"step\": d}}, an array of values or \"shadow\"",
                 s.equals);
}
void read_vram(Reader& r, const json& j, const std::string& p, Step& s) {
  const bool m = j.contains("mark"), c = j.contains("check");
  bool v = false;
  if (m && r.boolean(j.at("mark"), p + ".mark", v) && !v) r.expected(p + ".mark", "true", j.at("mark"));
  if (c && r.boolean(j.at("check"), p + ".check", v) && !v) r.expected(p + ".check", "true", j.at("check"));
  if (m == c) r.error(p, "vram takes exactly one of \"mark\": true or \"check\": true");
  if (m && j.contains("tolerance_bytes"))
    r.error(p + ".tolerance_bytes", "tolerance_bytes goes with \"check\", not \"mark\"");
  if (auto it = j.find("tolerance_bytes"); it != j.end())
    r.uint_in(*it, p + ".tolerance_bytes", 0, kMaxBytes, s.tolerance_bytes);
  s.vram_mark = m;
  if (auto it = j.find("device"); it != j.end()) {
    std::uint64_t d = 0;
    if (r.uint_in(*it, p + ".device", 0, kMaxDevice, d)) {
      s.device = static_cast<std::uint32_t>(d);
      r.step_devices.insert(*s.device);
    }
  }
}

void exec_check(Engine& e, const CompiledStep& s, ThreadState& t) {
  switch (s.step->what) {
    case CheckWhat::unique:
      check_unique(e, s, t);
      return;
    case CheckWhat::views:
      check_count(e, s, t, e.handles.view(s.of, {"check views of"})->view.view_count());
      return;
    case CheckWhat::live_allocations:
      check_count(e, s, t, e.session.total_stats().live_allocations);
      return;
    case CheckWhat::pending:
      check_count(e, s, t, e.session.total_stats().pending_submissions);
      return;
    case CheckWhat::freed:
    case CheckWhat::owner_released:
      check_watch(e, s, t);
      return;
    case CheckWhat::same_allocation:
      check_same_allocation(e, s, t);
      return;
    case CheckWhat::contents:
      check_contents(e, s, t);
      return;
  }
}

// Without `device`, mark/check every device the scenario uses (one check
// record each when there are several). The report's top-level `vram` stays
// the scenario `device`'s; `vram.devices` lists each device when several.
void exec_vram(Engine& e, const CompiledStep& s, ThreadState& t) {
  const Step& st = *s.step;
  std::vector<std::uint32_t> devices;
  if (st.device)
    devices.push_back(*st.device);
  else
    devices.assign(e.scenario.devices.begin(), e.scenario.devices.end());
  // Settle first: memory held by finished work is released by retirement,
  // and the pool keeps freed memory until trimmed.
  (void)e.session.settle(kLongWait);
  for (const std::uint32_t d : devices) {
    const std::uint64_t free_now = e.session.free_after_trim(d);
    const bool main_device = d == e.scenario.device;
    if (st.vram_mark) {
      e.session.mark_vram(d, free_now);
      e.recorder.update([&](RunRecord& rec) {
        rec.vram_devices[d].baseline_free = free_now;
        if (main_device) rec.vram.baseline_free = free_now;
      });
      continue;
    }
    const std::uint64_t mark = e.session.vram_mark(d);
    const auto delta = static_cast<std::int64_t>(mark) - static_cast<std::int64_t>(free_now);
    const bool ok = static_cast<std::uint64_t>(delta < 0 ? -delta : delta) <= st.tolerance_bytes;
    e.recorder.update([&](RunRecord& rec) {
      VramRecord& r = rec.vram_devices[d];
      r = {mark, free_now, st.tolerance_bytes, delta, ok && (!r.checked || r.ok), true};
      if (main_device)
        rec.vram = {mark, free_now, st.tolerance_bytes, delta, ok && (!rec.vram.checked || rec.vram.ok),
                    true};
    });
    ojson actual = {{"baseline_free", mark}, {"free", free_now}, {"delta", delta}};
    if (e.scenario.devices.size() > 1 || st.device) actual["device"] = d;
    e.record_check(t, st, "vram", {{"delta_at_most", st.tolerance_bytes}}, actual, ok);
  }
}

// {"op": "note", "message": m}: m and the counters at this moment (summed
// over the threads, and the runtime's live and pending figures).
void exec_note(Engine& e, const CompiledStep& s, ThreadState&) {
  ojson counters = e.recorder.counters();
  const RuntimeStats stats = e.session.total_stats();
  counters["live_allocations"] = stats.live_allocations;
  counters["live_bytes"] = stats.live_bytes;
  counters["pending_submissions"] = stats.pending_submissions;
  e.recorder.step_note(*s.step, e.repetition(), std::move(counters));
}

}  // namespace tandem::scenario::detail
