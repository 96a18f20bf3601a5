// SPDX-License-Identifier: Apache-2.0
// junit.cpp — the report's checks and errors laid out as JUnit test cases.
// A check or error belongs to the repetition it names; the end-of-run
// expectations (leaks, violations) carry the last repetition, since they
// are measured after it.
#include "junit.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>

namespace tandem::cli {

namespace {

using ojson = nlohmann::ordered_json;

// Bytes of a valid UTF-8 sequence starting at s[i] (0: not one).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

// XML 1.0 character data or attribute value: markup escaped; the control
// characters XML cannot hold, and bytes that are not UTF-8, as \xNN.
std::string xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&apos;";
        continue;
      case '\n':
        out += "&#10;";
        continue;
      case '\t':
        out += "&#9;";
        continue;
      default:
        break;
    }
    if (c >= 0x20 && c < 0x7F) {
      out += s[i];
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(s, i) : 0; n > 0) {
      out.append(s.substr(i, n));
      i += n - 1;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string text_of(const ojson& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::uint64_t uint_of(const ojson& j, const char* key, std::uint64_t dflt) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : dflt;
}

struct Case {
  std::string name;
  std::string kind;                // "" (passed), "failure", "error" or "skipped"
  std::string type;                // the first problem's kind: "check" or an error code
  std::vector<std::string> lines;  // the failed checks and errors, each with its JSON path
  std::optional<double> time;

  void add(std::string line, const std::string& what, bool is_error) {
    if (lines.empty()) type = what;
    lines.push_back(std::move(line));
    if (is_error)
      kind = "error";
    else if (kind.empty())
      kind = "failure";
  }
};

std::string check_line(const ojson& c) {
  return text_of(c, "step") + ": check " + text_of(c, "what") + ": expected " +
         c.value("expected", ojson()).dump() + ", found " + c.value("actual", ojson()).dump();
}

std::string error_line(const ojson& e) {
  return text_of(e, "step") + " (" + text_of(e, "op") + "): " + text_of(e, "code") + ": " +
         text_of(e, "message");
}

// A scenario that ran: one test case per repetition.
std::vector<Case> repetition_cases(const std::string& name, const ojson& r) {
  const std::uint64_t n = std::max<std::uint64_t>(1, uint_of(r, "repetitions", 1));
  std::vector<Case> cases(n);
  for (std::uint64_t i = 0; i < n; ++i)
    cases[i].name =
        n == 1 ? name : name + " [repetition " + std::to_string(i + 1) + "/" + std::to_string(n) + "]";
  if (n == 1) cases[0].time = r.value("duration_s", 0.0);
  auto of = [&](const ojson& x) -> Case& {
    return cases[std::clamp<std::uint64_t>(uint_of(x, "repetition", n), 1, n) - 1];
  };
  const bool run_error = text_of(r, "status") == "error";
  for (const ojson& c : r.value("checks", ojson::array()))
    if (!c.value("ok", true)) of(c).add(check_line(c), "check", false);
  for (const ojson& e : r.value("errors", ojson::array()))
    of(e).add(error_line(e), text_of(e, "code"), run_error || text_of(e, "code") == "driver");
  Case& last = cases.back();
  for (const ojson& v : r.value("violations", ojson::array()))
    last.add("violation " + text_of(v, "kind") + ": " + text_of(v, "detail"), "violation", false);
  const bool any = std::any_of(cases.begin(), cases.end(), [](const Case& c) { return !c.kind.empty(); });
  if (!any && text_of(r, "status") != "pass") last.add("status " + text_of(r, "status"), "status", run_error);
  return cases;
}

std::vector<Case> cases_of(const JUnitEntry& e, const std::string& name) {
  if (!e.report) {
    Case c{name, "error", "invalid_scenario", e.problems, std::nullopt};
    if (c.lines.empty()) c.lines.emplace_back("not run");
    return {c};
  }
  if (e.outcome == scenario::Outcome::unavailable) {
    Case c{name, "skipped", "unavailable", {}, std::nullopt};
    for (const ojson& x : e.report->value("errors", ojson::array())) c.lines.push_back(error_line(x));
    return {c};
  }
  return repetition_cases(name, *e.report);
}

void write_case(std::string& out, const Case& c, const std::string& classname, const std::string& file) {
  out += "    <testcase name=\"" + xml(c.name) + "\" classname=\"" + xml(classname) + "\" file=\"" +
         xml(file) + "\"";
  if (c.time) out += " time=\"" + std::to_string(*c.time) + "\"";
  if (c.kind.empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n      <" + c.kind + " message=\"" + xml(c.lines.empty() ? c.type : c.lines.front()) + "\"";
  if (c.kind != "skipped") out += " type=\"" + xml(c.type) + "\"";
  std::string body;
  for (const std::string& l : c.lines) body += l + "\n";
  out += ">" + xml(body) + "</" + c.kind + ">\n    </testcase>\n";
}

struct Counts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
  void add(const std::vector<Case>& cases) {
    for (const Case& c : cases) {
      ++tests;
      failures += c.kind == "failure" ? 1 : 0;
      errors += c.kind == "error" ? 1 : 0;
      skipped += c.kind == "skipped" ? 1 : 0;
    }
  }
  [[nodiscard]] std::string attributes() const {
    return "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
           std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\" time=\"" +
           std::to_string(time) + "\"";
  }
};

std::string suite_output(const ojson& r) {
  std::string s;
  for (const ojson& n : r.value("notes", ojson::array()))
    if (n.is_string()) s += "note: " + n.get<std::string>() + "\n";
  for (const ojson& k : r.value("skipped", ojson::array()))
    if (k.is_string()) s += "skipped after the failure: " + k.get<std::string>() + "\n";
  return s;
}

}  // namespace

std::string junit_xml(const std::vector<JUnitEntry>& entries) {
  std::string suites;
  Counts all;
  for (const JUnitEntry& e : entries) {
    const std::string stem = std::filesystem::path(e.file).stem().string();
    std::string name =
        e.report ? text_of((*e.report).value("scenario", ojson::object()), "name") : std::string();
    if (name.empty()) name = stem;
    std::string classname = "tandem." + stem;
    std::replace(classname.begin() + 7, classname.end(), '.', '_');  // a dot would split it into packages
    const std::vector<Case> cases = cases_of(e, name);
    Counts c;
    c.add(cases);
    if (e.report) c.time = e.report->value("duration_s", 0.0);
    all.add(cases);
    all.time += c.time;
    suites +=
        "  <testsuite name=\"" + xml(name) + "\" " + c.attributes() + " file=\"" + xml(e.file) + "\">\n";
    if (e.report) {
      suites += "    <properties>\n      <property name=\"backend\" value=\"" +
                xml(text_of(*e.report, "backend")) + "\"/>\n";
      if (const auto d = e.report->find("device"); d != e.report->end() && d->is_object())
        suites += "      <property name=\"device\" value=\"" + xml(text_of(*d, "name")) + "\"/>\n";
      suites += "    </properties>\n";
    }
    for (const Case& k : cases) write_case(suites, k, classname, e.file);
    if (e.report) {
      if (const std::string out = suite_output(*e.report); !out.empty())
        suites += "    <system-out>" + xml(out) + "</system-out>\n";
    }
    suites += "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tandem run\" " + all.attributes() +
         ">\n" + suites + "</testsuites>\n";
}

}  // namespace tandem::cli
