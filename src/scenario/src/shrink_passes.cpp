// SPDX-License-Identifier: Apache-2.0
// shrink_passes.cpp — the reductions of a scenario document (see
// shrink_passes.hpp). Every pass re-reads the document after each kept
// change: a pointer taken before a change may name another place after it.
#include "shrink_passes.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "tandem/scenario/op_list.hpp"

namespace tandem::scenario::detail {

namespace {

bool has_step_list(const ojson& step) {
  return step.is_object() && step.contains("steps") && step["steps"].is_array();
}

void collect_lists(const ojson& list, const JsonPtr& at, std::vector<JsonPtr>& out) {
  out.push_back(at);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (has_step_list(list[i])) collect_lists(list[i]["steps"], at / i / "steps", out);
  }
}

std::string op_of(const ojson& step) {
  const auto it = step.find("op");
  return it != step.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The optional fields of each op, from the op table (`steps` and the
// required ones never; `expect_error` is not an op field).
const std::map<std::string, std::set<std::string>>& optional_fields() {
  static const std::map<std::string, std::set<std::string>> table = [] {
    std::map<std::string, std::set<std::string>> t;
    for (const auto& row : op_list_json()) {
      auto& fields = t[row["op"].get<std::string>()];
      for (const auto& f : row["fields"]) {
        if (!f["required"].get<bool>()) fields.insert(f["name"].get<std::string>());
      }
    }
    return t;
  }();
  return table;
}

std::string stream_name(const ojson& s) {
  if (s.is_string()) return s.get<std::string>();
  if (s.is_object() && s.contains("name") && s["name"].is_string()) return s["name"].get<std::string>();
  return {};
}

ojson stream_device(const ojson& doc, const ojson& s) {
  if (s.is_object() && s.contains("device")) return s["device"];
  return doc.value("device", ojson(0));
}

// Every "stream": from → to in the steps (nested ones included).
void retarget_streams(ojson& doc, const std::string& from, const std::string& to) {
  for (const JsonPtr& p : step_pointers(doc)) {
    ojson& step = doc[p];
    const auto it = step.find("stream");
    if (it != step.end() && it->is_string() && it->get<std::string>() == from) *it = to;
  }
}

// An emptied `sim.stream_delay_us`, then an emptied `sim`, go (they said nothing).
void prune_sim(ojson& doc) {
  if (!doc.contains("sim") || !doc["sim"].is_object()) return;
  ojson& sim = doc["sim"];
  if (sim.contains("stream_delay_us") && sim["stream_delay_us"].empty()) sim.erase("stream_delay_us");
  if (sim.contains("faults") && sim["faults"].empty()) sim.erase("faults");
  if (sim.empty()) doc.erase("sim");
}

// Every handle reference `from` -> `to` in the steps: the handle fields of
// a step (its args' values and its declared accesses' views included),
// never an `id` (what a step makes).
void rename_handle(ojson& doc, const std::string& from, const std::string& to) {
  static const char* const kHandleFields[] = {"of", "from", "src", "dst", "buf", "a", "b"};
  const auto rename = [&](ojson& v) {
    if (v.is_string() && v.get<std::string>() == from) v = to;
  };
  for (const JsonPtr& p : step_pointers(doc)) {
    ojson& step = doc[p];
    for (const char* f : kHandleFields) {
      const auto it = step.find(f);
      if (it != step.end()) rename(*it);
    }
    const auto args = step.find("args");
    if (args != step.end() && args->is_object())
      for (auto& [param, v] : args->items()) rename(v);
    const auto accesses = step.find("accesses");
    if (accesses != step.end() && accesses->is_array())
      for (ojson& a : *accesses)
        if (a.is_object() && a.contains("view")) rename(a["view"]);
  }
}

// The names a step makes: `id` (a handle, future, graph, borrowed stream
// or context), `ids` (split); never the `id` that drop, forget and wait name.
std::set<std::string> made_names(const ojson& step) {
  std::set<std::string> out;
  const std::string op = op_of(step);
  if (op != "drop" && op != "forget" && op != "wait" && step.contains("id") && step["id"].is_string())
    out.insert(step["id"].get<std::string>());
  if (step.contains("ids") && step["ids"].is_array())
    for (const ojson& id : step["ids"])
      if (id.is_string()) out.insert(id.get<std::string>());
  return out;
}

// Does `step` (not its nested steps) name one of `names`: a handle field,
// an argument, a declared access, its stream or context, a graph, or the
// `id` that drop, forget and wait name?
bool names_any(const ojson& step, const std::set<std::string>& names) {
  const auto named = [&](const ojson& v) { return v.is_string() && names.count(v.get<std::string>()) != 0; };
  static const char* const kFields[] = {"of", "from", "src",    "dst",     "buf",
                                        "a",  "b",    "stream", "context", "graph"};
  for (const char* f : kFields) {
    const auto it = step.find(f);
    if (it != step.end() && named(*it)) return true;
  }
  const std::string op = op_of(step);
  if ((op == "drop" || op == "forget" || op == "wait") && step.contains("id") && named(step["id"]))
    return true;
  if (const auto args = step.find("args"); args != step.end() && args->is_object())
    for (const auto& [param, v] : args->items())
      if (named(v)) return true;
  if (const auto acc = step.find("accesses"); acc != step.end() && acc->is_array())
    for (const ojson& a : *acc)
      if (a.is_object() && a.contains("view") && named(a["view"])) return true;
  return false;
}

bool is_count(const ojson& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

}  // namespace

std::vector<JsonPtr> step_lists(const ojson& doc) {
  std::vector<JsonPtr> out;
  if (!doc.is_object()) return out;
  if (doc.contains("steps") && doc["steps"].is_array()) collect_lists(doc["steps"], JsonPtr("/steps"), out);
  if (doc.contains("threads") && doc["threads"].is_object()) {
    for (const auto& [name, list] : doc["threads"].items()) {
      if (list.is_array()) collect_lists(list, JsonPtr("/threads") / name, out);
    }
  }
  return out;
}

std::vector<JsonPtr> step_pointers(const ojson& doc) {
  std::vector<JsonPtr> out;
  for (const JsonPtr& list : step_lists(doc)) {
    const std::size_t n = doc[list].size();
    for (std::size_t i = 0; i < n; ++i) out.push_back(list / i);
  }
  return out;
}

void Reducer::run_to_fixed_point() {
  bool progress = true;
  while (progress && !stopped()) {
    progress = false;
    progress |= pass_repeat();
    progress |= pass_ddmin();
    progress |= pass_dependents();
    progress |= pass_loops();
    progress |= pass_threads();
    progress |= pass_streams();
    progress |= pass_buffers();
    progress |= pass_views();
    progress |= pass_step_fields();
    progress |= pass_top_fields();
  }
}

bool Reducer::attempt(ojson candidate) {
  if (stopped() || candidate == doc_) return false;
  if (!test_.fails_same_way(candidate)) return false;
  doc_ = std::move(candidate);
  ++accepted_;
  return true;
}

// Fisher-Yates over the generator's raw output (std::shuffle and the
// distributions differ between standard libraries).
std::vector<std::size_t> Reducer::permutation(std::size_t n) {
  std::vector<std::size_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = i;
  for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng_() % i]);
  return p;
}

// A view made only to be used goes, its users given its source instead
// (`peel h2 of h1` then `launch ... h2` becomes `launch ... h1`): chains of
// views over views (peel of a slice of a peel) collapse to the one the
// failure needs, which ddmin alone cannot do (removing the view step
// leaves its users naming nothing).
bool Reducer::pass_views() {
  static const std::set<std::string> kViews = {"slice", "peel", "atomic", "as_buffer", "tensor_view"};
  test_.pass_started("views", doc_);
  bool changed = false;
  for (std::size_t k = 0; !stopped(); ++k) {
    const std::vector<JsonPtr> steps = step_pointers(doc_);
    if (k >= steps.size()) break;
    const ojson& step = doc_[steps[k]];
    if (kViews.count(op_of(step)) == 0 || !step.contains("id") || !step["id"].is_string() ||
        !step.contains("of") || !step["of"].is_string()) {
      continue;
    }
    const std::string id = step["id"].get<std::string>(), of = step["of"].get<std::string>();
    ojson c = doc_;
    const JsonPtr list = steps[k].parent_pointer();
    c[list].erase(c[list].begin() + static_cast<std::ptrdiff_t>(std::stoul(steps[k].back())));
    rename_handle(c, id, of);
    if (attempt(std::move(c))) {
      changed = true;
      --k;  // the next step now sits where this one was
    }
  }
  return changed;
}

// A step that makes a name goes together with every step that names it,
// and so on for what those make (a borrowed context, the stream borrowed
// in it, the buffers allocated on that stream, their launches and drops):
// ddmin removes one chunk of adjacent steps at a time, and any one of such
// a group alone leaves the rest naming nothing (an invalid candidate).
bool Reducer::pass_dependents() {
  test_.pass_started("dependents", doc_);
  bool changed = false;
  for (std::size_t k = 0; !stopped(); ++k) {
    const std::vector<JsonPtr> steps = step_pointers(doc_);
    if (k >= steps.size()) break;
    std::set<std::string> names = made_names(doc_[steps[k]]);
    if (names.empty()) continue;
    std::vector<bool> gone(steps.size(), false);
    gone[k] = true;
    for (bool grew = true; grew;) {
      grew = false;
      for (std::size_t j = 0; j < steps.size(); ++j) {
        if (gone[j] || !names_any(doc_[steps[j]], names)) continue;
        gone[j] = grew = true;
        const std::set<std::string> more = made_names(doc_[steps[j]]);
        names.insert(more.begin(), more.end());
      }
    }
    if (std::count(gone.begin(), gone.end(), true) < 2) continue;  // ddmin tries a lone step
    // Nested lists come after the list holding them, and indices rise
    // within a list: erasing from the back never moves a pointer still to use.
    ojson c = doc_;
    for (std::size_t j = steps.size(); j-- > 0;) {
      if (!gone[j]) continue;
      const JsonPtr list = steps[j].parent_pointer();
      if (!c.contains(list)) continue;  // inside a step already erased
      c[list].erase(c[list].begin() + static_cast<std::ptrdiff_t>(std::stoul(steps[j].back())));
    }
    if (attempt(std::move(c))) {
      changed = true;
      --k;  // the next step now sits where this one was
    }
  }
  return changed;
}

// `repeat` to 1 (the field removed: 1 is its default).
bool Reducer::pass_repeat() {
  if (!doc_.contains("repeat")) return false;
  test_.pass_started("repeat", doc_);
  ojson c = doc_;
  c.erase("repeat");
  return attempt(std::move(c));
}

// ddmin over each step list in pre-order. A list changed by ddmin changes
// only the lists nested in it, which come after it: the k-th list of the
// re-read document is the next one to visit.
bool Reducer::pass_ddmin() {
  test_.pass_started("ddmin", doc_);
  bool changed = false;
  for (std::size_t k = 0; !stopped(); ++k) {
    const std::vector<JsonPtr> lists = step_lists(doc_);
    if (k >= lists.size()) break;
    changed |= ddmin(lists[k]);
  }
  return changed;
}

// Delta debugging (complements): split the list into n chunks, try without
// each (in an order drawn from the seed); a kept removal goes on with n-1
// chunks, none doubles n, until chunks are single steps.
bool Reducer::ddmin(const JsonPtr& at) {
  bool changed = false;
  std::size_t n = 2;
  while (!stopped()) {
    const std::size_t size = doc_[at].size();
    if (size == 0) break;
    n = std::min(n, size);
    bool removed = false;
    for (const std::size_t k : permutation(n)) {
      const std::size_t lo = k * size / n, hi = (k + 1) * size / n;
      ojson c = doc_;
      ojson& list = c[at];
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(lo),
                 list.begin() + static_cast<std::ptrdiff_t>(hi));
      if (attempt(std::move(c))) {
        removed = changed = true;
        n = std::max<std::size_t>(n - 1, 2);
        break;
      }
    }
    if (removed) continue;
    if (n >= size) break;
    n = std::min(n * 2, size);
  }
  return changed;
}

bool Reducer::pass_loops() {
  test_.pass_started("loops", doc_);
  bool changed = false;
  for (std::size_t k = 0; !stopped(); ++k) {
    const std::vector<JsonPtr> steps = step_pointers(doc_);
    if (k >= steps.size()) break;
    if (op_of(doc_[steps[k]]) == "loop") changed |= shrink_loop(steps[k]);
  }
  return changed;
}

// count to 1, else halved while it still fails; a loop of one iteration
// is replaced by its body.
bool Reducer::shrink_loop(const JsonPtr& at) {
  bool changed = false;
  if (is_count(doc_[at].value("count", ojson())) && doc_[at]["count"].get<std::uint64_t>() > 1) {
    ojson c = doc_;
    c[at]["count"] = 1;
    changed = attempt(std::move(c)) || halve_field(at, "count");
  }
  const ojson& loop = doc_[at];
  if (!has_step_list(loop) || loop.value("count", ojson()) != ojson(1)) return changed;
  ojson c = doc_;
  ojson& list = c[at.parent_pointer()];
  const auto index = static_cast<std::ptrdiff_t>(std::stoull(at.back()));
  const ojson body = loop["steps"];
  list.erase(list.begin() + index);
  list.insert(list.begin() + index, body.begin(), body.end());
  return attempt(std::move(c)) || changed;
}

// Halves an unsigned field while the candidate still fails the same way.
bool Reducer::halve_field(const JsonPtr& at, const char* key) {
  bool changed = false;
  while (!stopped()) {
    const ojson v = doc_[at].value(key, ojson());
    if (!is_count(v) || v.get<std::uint64_t>() <= 1) break;
    ojson c = doc_;
    c[at][key] = v.get<std::uint64_t>() / 2;
    if (!attempt(std::move(c))) break;
    changed = true;
  }
  return changed;
}

// Drop a thread; a single remaining thread's steps move to the end of `steps`.
bool Reducer::pass_threads() {
  if (!doc_.contains("threads") || !doc_["threads"].is_object()) return false;
  test_.pass_started("threads", doc_);
  bool changed = false;
  std::vector<std::string> names;
  for (const auto& [name, _] : doc_["threads"].items()) names.push_back(name);
  for (const std::string& name : names) {
    if (stopped()) break;
    ojson c = doc_;
    c["threads"].erase(name);
    if (c["threads"].empty()) c.erase("threads");
    changed |= attempt(std::move(c));
  }
  if (stopped() || !doc_.contains("threads") || doc_["threads"].size() != 1) return changed;
  ojson c = doc_;
  const ojson body = c["threads"].begin().value();
  c.erase("threads");
  if (!c.contains("steps") || !c["steps"].is_array()) c["steps"] = ojson::array();
  for (const ojson& s : body) c["steps"].push_back(s);
  return attempt(std::move(c)) || changed;
}

// Remove a declared stream; its users move to another stream of the same
// device (else the first other one) and its sim delay goes.
bool Reducer::pass_streams() {
  if (!doc_.contains("streams") || !doc_["streams"].is_array() || doc_["streams"].size() < 2) return false;
  test_.pass_started("streams", doc_);
  bool changed = false;
  for (std::size_t i = doc_["streams"].size(); i-- > 0 && !stopped();) {
    const ojson streams = doc_["streams"];
    if (streams.size() < 2 || i >= streams.size()) continue;
    const std::string name = stream_name(streams[i]);
    std::size_t target = i == 0 ? 1 : 0;
    for (std::size_t j = 0; j < streams.size(); ++j) {
      if (j != i && stream_device(doc_, streams[j]) == stream_device(doc_, streams[i])) {
        target = j;
        break;
      }
    }
    ojson c = doc_;
    c["streams"].erase(i);
    retarget_streams(c, name, stream_name(streams[target]));
    if (c.contains("sim") && c["sim"].contains("stream_delay_us") &&
        c["sim"]["stream_delay_us"].is_object()) {
      c["sim"]["stream_delay_us"].erase(name);
      prune_sim(c);
    }
    changed |= attempt(std::move(c));
  }
  return changed;
}

// alloc/foreign `len` to 1, else halved while it still fails.
bool Reducer::pass_buffers() {
  test_.pass_started("buffers", doc_);
  bool changed = false;
  for (std::size_t k = 0; !stopped(); ++k) {
    const std::vector<JsonPtr> steps = step_pointers(doc_);
    if (k >= steps.size()) break;
    const ojson& s = doc_[steps[k]];
    const std::string op = op_of(s);
    if ((op != "alloc" && op != "foreign") || !is_count(s.value("len", ojson()))) continue;
    if (s["len"].get<std::uint64_t>() <= 1) continue;
    ojson c = doc_;
    c[steps[k]]["len"] = 1;
    changed |= attempt(std::move(c)) || halve_field(steps[k], "len");
  }
  return changed;
}

// Each optional field of each step removed (its default then applies:
// `init` → none, a launch's `scalars`, `grid`, `block`, a future's `id`, ...).
bool Reducer::pass_step_fields() {
  test_.pass_started("fields", doc_);
  bool changed = false;
  for (std::size_t k = 0; !stopped(); ++k) {
    const std::vector<JsonPtr> steps = step_pointers(doc_);
    if (k >= steps.size()) break;
    const auto row = optional_fields().find(op_of(doc_[steps[k]]));
    if (row == optional_fields().end()) continue;
    std::vector<std::string> keys;
    for (const auto& [key, _] : doc_[steps[k]].items()) {
      if (row->second.contains(key)) keys.push_back(key);
    }
    for (const std::string& key : keys) {
      if (stopped()) break;
      ojson c = doc_;
      c[steps[k]].erase(key);
      changed |= attempt(std::move(c));
    }
  }
  return changed;
}

// Top-level fields with defaults, each `expect` key, each `sim` entry (the
// memory size, each stream delay, each fault); emptied objects go too.
bool Reducer::pass_top_fields() {
  test_.pass_started("fields", doc_);
  bool changed = false;
  for (const char* key : {"device", "conflict_policy"}) {
    if (stopped() || !doc_.contains(key)) continue;
    ojson c = doc_;
    c.erase(key);
    changed |= attempt(std::move(c));
  }
  changed |= drop_each_entry(JsonPtr("/expect"));
  changed |= drop_each_entry(JsonPtr("/sim/stream_delay_us"));
  changed |= drop_each_entry(JsonPtr("/sim/faults"));
  changed |= drop_each_entry(JsonPtr("/sim"));
  return changed;
}

// Each entry of an object or array removed in turn (last first); the
// container itself goes when that empties it.
bool Reducer::drop_each_entry(const JsonPtr& at) {
  bool changed = false;
  if (!doc_.contains(at)) return false;
  if (doc_[at].empty()) {
    ojson c = doc_;
    c[at.parent_pointer()].erase(at.back());
    return attempt(std::move(c));
  }
  for (std::size_t i = doc_[at].size(); i-- > 0 && !stopped();) {
    if (!doc_.contains(at) || i >= doc_[at].size()) continue;
    ojson c = doc_;
    ojson& container = c[at];
    if (container.is_array()) {
      container.erase(i);
    } else if (container.is_object()) {
      auto it = container.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(i));
      container.erase(it);
    } else {
      break;
    }
    if (container.empty()) c[at.parent_pointer()].erase(at.back());
    prune_sim(c);
    changed |= attempt(std::move(c));
  }
  return changed;
}

}  // namespace tandem::scenario::detail
