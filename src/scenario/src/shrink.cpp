// SPDX-License-Identifier: Apache-2.0
// shrink.cpp — shrink(): the failure signature, the runs that judge each
// candidate (loader first, a cache of verdicts, the budget) and the written
// form. The reductions themselves: shrink_passes.cpp.
#include "tandem/scenario/shrink.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "shrink_passes.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"

namespace tandem::scenario {

namespace {

using detail::ojson;
using Clock = std::chrono::steady_clock;

std::string code_of(const ojson& actual) {
  if (actual.is_string()) return actual.get<std::string>();
  if (actual.is_object() && actual.contains("code") && actual["code"].is_string())
    return actual["code"].get<std::string>();
  return actual.dump();
}

FailureSignature check_signature(const ojson& c) {
  const std::string what = c.value("what", std::string("?"));
  if (what == "contents") {
    const bool count = c.contains("actual") && c["actual"].is_object() && c["actual"].contains("mismatch");
    return {"check", what + (count ? " (value count differs)" : " (values differ)")};
  }
  if (what == "expect_error") {
    return {"check", what + " (expected " + code_of(c.value("expected", ojson())) + ", got " +
                         code_of(c.value("actual", ojson())) + ")"};
  }
  return {"check", what};
}

bool is_expect_check(const ojson& c) { return c.value("step", std::string()).starts_with("expect."); }

}  // namespace

std::optional<FailureSignature> failure_signature(const ojson& report) {
  const std::string status = report.value("status", std::string("error"));
  if (status == "pass") return std::nullopt;
  const ojson none = ojson::array();
  const ojson& checks = report.contains("checks") ? report["checks"] : none;
  for (const ojson& c : checks) {
    if (!c.value("ok", true) && !is_expect_check(c)) return check_signature(c);
  }
  if (report.contains("errors") && !report["errors"].empty()) {
    const ojson& e = report["errors"][0];
    return FailureSignature{"error",
                            e.value("code", std::string("?")) + " at " + e.value("op", std::string("?"))};
  }
  const bool violations = report.contains("violations") && !report["violations"].empty();
  for (const ojson& c : checks) {
    if (!c.value("ok", true) && c.value("step", std::string()) == "expect.violations" && violations) {
      return FailureSignature{"violation", report["violations"][0].value("kind", std::string("?"))};
    }
  }
  for (const ojson& c : checks) {
    if (!c.value("ok", true)) return FailureSignature{"check", c.value("step", std::string("?"))};
  }
  return FailureSignature{"status", status};
}

std::size_t count_steps(const ojson& doc) { return detail::step_pointers(doc).size(); }

namespace {

// Compact JSON with a space after ',' and ':' (how the library files read).
void compact(const ojson& j, std::string& out) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += ojson(k).dump() + ": ";
      compact(v, out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i != 0) out += ", ";
      compact(j[i], out);
    }
    out += ']';
  } else {
    out += j.dump();
  }
}

void step_list(const ojson& list, std::size_t indent, std::string& out);

// One step on a line; a nested body's steps each on a line of their own.
void step_line(const ojson& step, std::size_t indent, std::string& out) {
  if (!step.is_object() || !step.contains("steps") || !step["steps"].is_array()) {
    compact(step, out);
    return;
  }
  out += '{';
  bool first = true;
  for (const auto& [k, v] : step.items()) {
    if (!first) out += ", ";
    first = false;
    out += ojson(k).dump() + ": ";
    if (k == "steps")
      step_list(v, indent, out);
    else
      compact(v, out);
  }
  out += '}';
}

void step_list(const ojson& list, std::size_t indent, std::string& out) {
  if (!list.is_array() || list.empty()) {
    compact(list, out);
    return;
  }
  out += "[\n";
  for (std::size_t i = 0; i < list.size(); ++i) {
    out += std::string(indent + 2, ' ');
    step_line(list[i], indent + 2, out);
    out += i + 1 < list.size() ? ",\n" : "\n";
  }
  out += std::string(indent, ' ') + "]";
}

}  // namespace

std::string format_scenario(const ojson& doc) {
  if (!doc.is_object()) return doc.dump(2) + "\n";
  std::string out = "{\n";
  std::size_t i = 0;
  for (const auto& [k, v] : doc.items()) {
    out += "  " + ojson(k).dump() + ": ";
    if (k == "steps") {
      step_list(v, 2, out);
    } else if (k == "threads" && v.is_object() && !v.empty()) {
      out += "{\n";
      std::size_t t = 0;
      for (const auto& [name, list] : v.items()) {
        out += "    " + ojson(name).dump() + ": ";
        step_list(list, 4, out);
        out += ++t < v.size() ? ",\n" : "\n";
      }
      out += "  }";
    } else {
      compact(v, out);
    }
    out += ++i < doc.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

namespace {

// Judges candidates: loads (invalid: skipped, not run), runs up to
// `confirm` times, caches the verdict by the candidate's text, and spends
// the budget (runs, time).
class Judge final : public detail::CandidateTest {
 public:
  Judge(const ShrinkOptions& o, std::size_t steps_before) : o_(o), start_(Clock::now()) {
    progress_.steps_before = steps_before;
    progress_.steps_now = steps_before;
    run_options_.backend = o.backend;
  }

  // The original: run until it fails (at most `confirm` times).
  RunResult first_run(const Scenario& sc) {
    RunResult r;
    for (unsigned i = 0; i < std::max(1u, o_.confirm); ++i) {
      r = run_once(sc);
      if (r.outcome != Outcome::pass) break;
    }
    return r;
  }
  void expect(Outcome outcome, FailureSignature sig) {
    outcome_ = outcome;
    signature_ = std::move(sig);
  }

  bool fails_same_way(const ojson& candidate) override {
    std::string text = candidate.dump();
    if (const auto it = cache_.find(text); it != cache_.end()) return it->second;
    std::optional<Scenario> sc;
    try {
      sc = load_text(text, o_.file_label);
    } catch (const ScenarioError&) {
      ++progress_.invalid_candidates;
      cache_.emplace(std::move(text), false);
      return false;
    }
    progress_.steps_now = count_steps(candidate);
    bool same = false;
    for (unsigned i = 0; i < std::max(1u, o_.confirm) && !same && !exhausted(); ++i) {
      const RunResult r = run_once(*sc);
      same = r.outcome == outcome_ && failure_signature(r.report) == signature_;
    }
    if (same && o_.keep_also && !o_.keep_also(text)) same = false;
    if (!exhausted() || same) cache_.emplace(std::move(text), same);
    return same;
  }

  [[nodiscard]] bool exhausted() const override {
    if (progress_.runs >= o_.max_runs) return true;
    return elapsed() >= o_.time_limit_s;
  }
  void pass_started(std::string_view name, const ojson& doc) override {
    progress_.pass = name;
    progress_.steps_now = count_steps(doc);
    report();
  }

  [[nodiscard]] double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }
  [[nodiscard]] const ShrinkProgress& progress() const { return progress_; }
  [[nodiscard]] std::string why_stopped() const {
    if (progress_.runs >= o_.max_runs)
      return "the run limit (" + std::to_string(o_.max_runs) + " runs) was reached";
    if (elapsed() >= o_.time_limit_s) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", o_.time_limit_s);
      return std::string("the time limit (") + secs + " s) was reached";
    }
    return {};
  }

 private:
  RunResult run_once(const Scenario& sc) {
    RunResult r = run(sc, run_options_);
    ++progress_.runs;
    report();
    return r;
  }
  void report() {
    progress_.elapsed_s = elapsed();
    if (o_.progress) o_.progress(progress_);
  }

  const ShrinkOptions& o_;
  Clock::time_point start_;
  RunOptions run_options_;
  ShrinkProgress progress_;
  Outcome outcome_ = Outcome::fail;
  FailureSignature signature_;
  std::unordered_map<std::string, bool> cache_;
};

ShrinkResult refused(ShrinkStatus status, std::string message) {
  ShrinkResult r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

}  // namespace

ShrinkResult shrink(std::string_view text, const ShrinkOptions& options) {
  Scenario sc;
  ojson doc;
  try {
    sc = load_text(text, options.file_label);
    doc = ojson::parse(text);
  } catch (const ScenarioError& e) {
    return refused(ShrinkStatus::invalid, e.what());
  } catch (const nlohmann::json::exception& e) {  // the loader took it: not expected
    return refused(ShrinkStatus::invalid, options.file_label + ": " + e.what());
  }
  Judge judge(options, count_steps(doc));
  const RunResult first = judge.first_run(sc);
  const std::optional<FailureSignature> sig = failure_signature(first.report);
  if (first.outcome == Outcome::unavailable) {
    const ojson& errors = first.report["errors"];
    return refused(ShrinkStatus::unavailable,
                   "cannot run it: " + (errors.empty() ? std::string("the backend is not available")
                                                       : errors[0].value("message", std::string())));
  }
  if (first.outcome == Outcome::pass || !sig) {
    return refused(ShrinkStatus::passes, "the scenario passes (" + std::to_string(judge.progress().runs) +
                                             " run(s)): nothing to shrink");
  }
  judge.expect(first.outcome, *sig);
  detail::Reducer reducer(doc, judge, options.seed);
  reducer.run_to_fixed_point();
  ShrinkResult r;
  r.status = ShrinkStatus::shrunk;
  r.outcome = first.outcome;
  r.signature = *sig;
  r.text = format_scenario(reducer.doc());
  r.steps_before = count_steps(doc);
  r.steps_after = count_steps(reducer.doc());
  r.runs = judge.progress().runs;
  r.invalid_candidates = judge.progress().invalid_candidates;
  r.accepted = reducer.accepted();
  r.seconds = judge.elapsed();
  r.stopped_early = judge.exhausted() ? judge.why_stopped() : std::string();
  return r;
}

}  // namespace tandem::scenario
