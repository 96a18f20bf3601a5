// SPDX-License-Identifier: Apache-2.0
// Scenario loader: JSON parse (bounded) and whole-document validation. The
// document's own keys are read here; steps by step_reader.cpp through the
// op table.
#include "tandem/scenario/loader.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "json_reader.hpp"
#include "tandem/scenario/validation_report.hpp"

namespace tandem::scenario {
namespace {

using detail::did_you_mean;
using detail::json;
using detail::list;
using detail::Reader;

struct ParseAbort {
  std::string path, message;
};

class Document {
 public:
  explicit Document(std::string file) : r_(std::move(file)) {}

  Reader& reader() noexcept { return r_; }

  Scenario run(const json& doc) {
    Scenario s;
    s.file = r_.file();
    if (!doc.is_object()) {
      r_.expected("", "a JSON object at the top level", doc);
      return s;
    }
    top_keys(doc);
    if (auto it = doc.find("streams"); it != doc.end()) streams(*it, s);  // first: steps refer to them
    if (auto it = doc.find("steps"); it != doc.end()) borrowed_streams(*it, s);
    if (auto it = doc.find("threads"); it != doc.end() && it->is_object())
      for (const auto& [name, list] : it->items()) borrowed_streams(list, s);
    r_.streams = s.streams;
    r_.streams.insert(r_.streams.end(), s.borrowed_streams.begin(), s.borrowed_streams.end());
    r_.borrowed_streams = s.borrowed_streams;
    header(doc, s);
    if (auto it = doc.find("repeat"); it != doc.end())
      r_.uint_in(*it, "repeat", 1, detail::kMaxRepeat, s.repeat);
    if (auto it = doc.find("steps"); it != doc.end()) s.steps = detail::read_steps(r_, *it, "steps", 0);
    if (auto it = doc.find("threads"); it != doc.end()) threads(*it, s);
    if (auto it = doc.find("expect"); it != doc.end()) expectations(*it, s.expect);
    if (auto it = doc.find("sim"); it != doc.end()) sim(*it, s.sim);
    s.devices.insert(r_.step_devices.begin(), r_.step_devices.end());
    // Faults name launch/replay ids anywhere in the file.
    for (const auto& [path, sub] : r_.fault_refs) {
      if (std::find(r_.submission_ids.begin(), r_.submission_ids.end(), sub) == r_.submission_ids.end())
        r_.error(path, "expected the id of a launch or replay step, found '" + sub + "'" +
                           did_you_mean(sub, r_.submission_ids));
    }
    return s;
  }

 private:
  Reader r_;
  std::map<std::string, std::uint32_t> explicit_stream_devices_;  // object-form streams

  // "$schema" names the JSON Schema an editor checks the file against
  // (schemas/tandem.scenario-1.schema.json); the run ignores it.
  void top_keys(const json& doc) {
    static const std::vector<std::string> top = {
        "format",  "name",   "description", "backend", "device", "conflict_policy",
        "streams", "repeat", "steps",       "threads", "expect", "sim"};
    for (const auto& [k, v] : doc.items()) {
      if (k == "$schema") {
        if (!v.is_string()) r_.expected(k, "a string (the URI or path of a JSON Schema)", v);
        continue;
      }
      if (std::find(top.begin(), top.end(), k) == top.end())
        r_.error(
            k, "unknown top-level key '" + k + "'" + did_you_mean(k, top) + "; expected one of " + list(top));
    }
  }

  void streams(const json& j, Scenario& s) {
    if (!j.is_array()) {
      r_.expected("streams", "an array of stream names", j);
      return;
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::string p = "streams[" + std::to_string(i) + "]";
      std::string n;
      std::optional<std::uint32_t> dev;
      if (!stream_entry(j[i], p, n, dev)) continue;
      if (!seen.insert(n).second) {
        r_.error(p, "duplicate stream name '" + n + "'");
      } else {
        s.streams.push_back(n);
        if (dev) explicit_stream_devices_[n] = *dev;
      }
    }
  }

  // The names borrow_stream steps give their streams, anywhere in a step
  // list (nested lists included): a step may name one in `stream` as it
  // names a declared stream, so the check before the run accepts it, and
  // whether it is live when the step runs is decided then (invalid_handle),
  // as for handle names. Only well-formed ids count; a name that is also in
  // `streams` is an error of the borrow step (read_borrow_stream).
  void borrowed_streams(const json& list, Scenario& s) {
    if (!list.is_array()) return;
    for (const json& step : list) {
      if (!step.is_object()) continue;
      const auto op = step.find("op");
      const auto id = step.find("id");
      if (op != step.end() && *op == "borrow_stream" && id != step.end() && id->is_string()) {
        const auto& n = id->get_ref<const std::string&>();
        const auto known = [&n](const std::vector<std::string>& v) {
          return std::find(v.begin(), v.end(), n) != v.end();
        };
        if (!n.empty() && !known(s.streams) && !known(s.borrowed_streams)) s.borrowed_streams.push_back(n);
      }
      if (auto nested = step.find("steps"); nested != step.end()) borrowed_streams(*nested, s);
    }
  }

  // format, name, description, backend, device (and so the streams' devices), conflict_policy.
  void header(const json& doc, Scenario& s) {
    if (auto it = doc.find("format"); it == doc.end()) {
      r_.error("format", "missing required key 'format' (expected \"tandem.scenario/1\")");
    } else if (!it->is_string() || it->get<std::string>() != "tandem.scenario/1") {
      r_.expected("format", "exactly \"tandem.scenario/1\"", *it);
    } else {
      s.format = it->get<std::string>();
    }
    if (auto it = doc.find("name"); it != doc.end()) r_.str(*it, "name", s.name);
    if (auto it = doc.find("description"); it != doc.end()) r_.str(*it, "description", s.description);
    if (auto it = doc.find("backend"); it != doc.end()) {
      std::string b;
      if (r_.enum_str(*it, "backend", {"auto", "cuda", "sim"}, b)) s.backend = *parse_backend_kind(b);
    }
    if (auto it = doc.find("device"); it != doc.end()) {
      std::uint64_t d = 0;
      if (r_.uint_in(*it, "device", 0, detail::kMaxDevice, d)) s.device = static_cast<std::uint32_t>(d);
    }
    s.devices.insert(s.device);
    for (const std::string& n : s.streams) {
      auto d = explicit_stream_devices_.find(n);
      s.stream_devices[n] = d == explicit_stream_devices_.end() ? s.device : d->second;
      s.devices.insert(s.stream_devices[n]);
    }
    if (auto it = doc.find("conflict_policy"); it != doc.end()) {
      std::string c;
      if (r_.enum_str(*it, "conflict_policy", {"order", "reject"}, c))
        s.conflict_policy = *parse_conflict_policy(c);
    }
  }

  void threads(const json& j, Scenario& s) {
    if (!j.is_object()) {
      r_.expected("threads", "an object mapping thread names to step arrays", j);
      return;
    }
    for (const auto& [k, v] : j.items()) {
      const std::string p = "threads." + k;
      if (k.empty()) r_.error(p, "thread names must be non-empty");
      s.threads[k] = detail::read_steps(r_, v, p, 0);
    }
  }

  bool stream_entry(const json& j, const std::string& p, std::string& name,
                    std::optional<std::uint32_t>& dev) {
    if (!j.is_object()) return r_.name_str(j, p, name);
    static const std::vector<std::string> keys = {"name", "device"};
    for (const auto& [k, v] : j.items()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        r_.error(p + "." + k,
                 "unknown stream field '" + k + "'" + did_you_mean(k, keys) + "; expected " + list(keys));
    }
    bool ok = true;
    if (auto it = j.find("name"); it == j.end()) {
      r_.error(p + ".name", "missing required field 'name' of a stream object");
      ok = false;
    } else {
      ok = r_.name_str(*it, p + ".name", name);
    }
    if (auto it = j.find("device"); it != j.end()) {
      std::uint64_t d = 0;
      if (r_.uint_in(*it, p + ".device", 0, detail::kMaxDevice, d))
        dev = static_cast<std::uint32_t>(d);
      else
        ok = false;
    }
    return ok;
  }
  void expectations(const json& j, Expectations& e) {
    if (!j.is_object()) {
      r_.expected("expect", "an object", j);
      return;
    }
    static const std::vector<std::string> keys = {"live_allocations", "quarantined_allocations",
                                                  "foreign_owners_unreleased", "violations",
                                                  "uniqueness_failures"};
    for (const auto& [k, v] : j.items()) {
      const std::string p = "expect." + k;
      if (k == keys[0])
        r_.uint_in(v, p, 0, detail::kMaxExpect, e.live_allocations);
      else if (k == keys[1])
        r_.uint_in(v, p, 0, detail::kMaxExpect, e.quarantined_allocations);
      else if (k == keys[2])
        r_.uint_in(v, p, 0, detail::kMaxExpect, e.foreign_owners_unreleased);
      else if (k == keys[3])
        r_.uint_in(v, p, 0, detail::kMaxExpect, e.violations);
      else if (k == keys[4])
        r_.uint_in(v, p, 0, detail::kMaxExpect, e.uniqueness_failures);
      else
        r_.error(p, "unknown expect key '" + k + "'" + did_you_mean(k, keys) + "; expected " + list(keys));
    }
  }

  void sim(const json& j, SimSettings& out) {
    if (!j.is_object()) {
      r_.expected("sim", "an object", j);
      return;
    }
    static const std::vector<std::string> keys = {"memory_bytes", "stream_delay_us", "faults"};
    for (const auto& [k, v] : j.items()) {
      const std::string p = "sim." + k;
      if (k == "memory_bytes") {
        r_.uint_in(v, p, 1, detail::kMaxBytes, out.memory_bytes);
      } else if (k == "stream_delay_us") {
        if (!v.is_object()) {
          r_.expected(p, "an object {stream: microseconds}", v);
          continue;
        }
        for (const auto& [sn, us] : v.items()) {
          const std::string q = p + "." + sn;
          if (std::find(r_.streams.begin(), r_.streams.end(), sn) == r_.streams.end()) {
            r_.error(q, "unknown stream '" + sn + "'" + did_you_mean(sn, r_.streams) +
                            "; declared streams: [" + list(r_.streams) + "]");
            continue;
          }
          std::uint64_t d = 0;
          if (r_.uint_in(us, q, 0, detail::kMaxSleepUs, d)) out.stream_delay_us[sn] = d;
        }
      } else if (k == "faults") {
        if (!v.is_array()) {
          r_.expected(p, "an array of fault objects", v);
          continue;
        }
        for (std::size_t i = 0; i < v.size(); ++i) fault(v[i], p + "[" + std::to_string(i) + "]", out);
      } else {
        r_.error(p, "unknown sim key '" + k + "'" + did_you_mean(k, keys) + "; expected " + list(keys));
      }
    }
  }

  void fault(const json& j, const std::string& p, SimSettings& out) {
    if (!j.is_object()) {
      r_.expected(p, "a fault object {\"kind\": ...}", j);
      return;
    }
    SimFault f;
    std::string kind;
    auto it = j.find("kind");
    if (it == j.end()) {
      r_.error(p + ".kind", "missing required field 'kind' (completion_unknown or alloc_fail)");
      return;
    }
    static const std::vector<std::pair<std::string, SimFault::Kind>> kinds = {
        {"completion_unknown", SimFault::Kind::completion_unknown},
        {"alloc_fail", SimFault::Kind::alloc_fail},
        {"alloc_error", SimFault::Kind::alloc_error},
        {"launch_fail", SimFault::Kind::launch_fail},
        {"copy_fail", SimFault::Kind::copy_fail}};
    std::vector<std::string> names;
    for (const auto& [name, k] : kinds) names.push_back(name);
    if (!r_.enum_str(*it, p + ".kind", names, kind)) return;
    const std::string field = kind == "completion_unknown" ? "submission" : "nth";
    for (const auto& [k, v] : j.items())
      if (k != "kind" && k != field)
        r_.error(p + "." + k, "unknown field '" + k + "' for fault '" + kind + "'" +
                                  did_you_mean(k, {field}) + "; expected kind, " + field);
    auto fv = j.find(field);
    if (fv == j.end()) {
      r_.error(p + "." + field, "missing required field '" + field + "' for fault '" + kind + "'");
      return;
    }
    if (kind == "completion_unknown") {
      f.kind = SimFault::Kind::completion_unknown;
      if (!r_.name_str(*fv, p + ".submission", f.submission)) return;
      r_.fault_refs.emplace_back(p + ".submission", f.submission);
    } else {
      for (const auto& [name, k] : kinds)
        if (name == kind) f.kind = k;
      if (!r_.uint_in(*fv, p + ".nth", 1, detail::kMaxExpect, f.nth)) return;
    }
    out.faults.push_back(f);
  }
};

// Parse with a depth limit; duplicate keys are rejected.
json parse_bounded(std::string_view text, const std::string& file) {
  std::vector<std::set<std::string>> keys;
  std::vector<std::string> where;  // for error paths (best effort)
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
    if (depth > kMaxJsonDepth)
      throw ParseAbort{"", "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    switch (ev) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() && !keys.back().insert(parsed.get<std::string>()).second)
          throw ParseAbort{parsed.get<std::string>(), "duplicate key '" + parsed.get<std::string>() + "'"};
        break;
      default:
        break;
    }
    return true;
  };
  (void)file;
  return json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
}

}  // namespace

Scenario load_text(std::string_view text, const std::string& file_label) {
  if (text.size() > kMaxFileBytes)
    throw ScenarioError({{file_label, "",
                          "file too large (" + std::to_string(text.size()) + " bytes; at most " +
                              std::to_string(kMaxFileBytes) + ")"}});
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw ScenarioError({{file_label, "", "empty file: expected a JSON object"}});
  json doc;
  try {
    doc = parse_bounded(text, file_label);
  } catch (const ParseAbort& a) {
    throw ScenarioError({{file_label, a.path, "invalid JSON: " + detail::sanitize(a.message)}});
  } catch (const json::exception& e) {
    throw ScenarioError(
        {{file_label, "", "invalid JSON (expected UTF-8 JSON text): " + detail::sanitize(e.what())}});
  }
  Document d(file_label);
  Scenario s = d.run(doc);
  if (!d.reader().diags.empty()) throw ScenarioError(std::move(d.reader().diags));
  return s;
}

Scenario load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError({{path, "", "cannot open file"}});
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      throw ScenarioError(
          {{path, "", "file too large (more than " + std::to_string(kMaxFileBytes) + " bytes)"}});
  }
  if (in.bad()) throw ScenarioError({{path, "", "read error"}});
  return load_text(text, path);
}

std::string ValidationReport::message() const {
  std::string s;
  for (const auto& d : errors) s += d.to_string() + "\n";
  return s;
}

namespace {
template <class F>
ValidationReport report_of(F&& f) {
  ValidationReport r;
  try {
    (void)f();
    r.ok = true;
  } catch (const ScenarioError& e) {
    r.errors = e.diagnostics();
  }
  return r;
}
}  // namespace

ValidationReport validate_file(const std::string& path) {
  return report_of([&] { return load(path); });
}
ValidationReport validate_text(const std::string& text, const std::string& file_label) {
  return report_of([&] { return load_text(text, file_label); });
}

}  // namespace tandem::scenario
