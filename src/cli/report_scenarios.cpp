// SPDX-License-Identifier: Apache-2.0
// report_scenarios.cpp — the scenario reports' part of the page.
#include <algorithm>
#include <cstdio>

#include "report_sections.hpp"

namespace tandem::cli {

namespace {

using ojson = nlohmann::ordered_json;

// Reports are read defensively: one written by an older tandem, or edited
// by hand, still makes a page (a missing figure shows as 0 or "-").
const ojson& at(const ojson& j, std::initializer_list<const char*> keys) {
  static const ojson kNull;
  const ojson* p = &j;
  for (const char* k : keys) {
    if (!p->is_object()) return kNull;
    const auto it = p->find(k);
    if (it == p->end()) return kNull;
    p = &*it;
  }
  return *p;
}
double num(const ojson& j) { return j.is_number() ? j.get<double>() : 0.0; }
std::string str(const ojson& j, const std::string& otherwise = "-") {
  return j.is_string() ? j.get<std::string>() : otherwise;
}
std::size_t count(const ojson& j) { return j.is_array() ? j.size() : 0; }
std::string fmt(double v, const char* f = "%.3g") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
// A value as compact JSON, cut to a readable length.
std::string shown(const ojson& j) {
  std::string s = j.dump(-1, ' ', false, ojson::error_handler_t::replace);
  if (s.size() > 200) s = s.substr(0, 200) + "…";
  return s;
}

struct Row {
  const ReportDocument* doc = nullptr;
  std::size_t index = 0;  // in input order: the section's anchor
  std::string name, status;
  std::size_t checks = 0, failed = 0, errors = 0, violations = 0;
  std::uint64_t leaks = 0;
};

int rank(const std::string& status) {
  return status == "error" ? 0 : status == "fail" ? 1 : status == "pass" ? 3 : 2;
}

Row make_row(const ReportDocument& d, std::size_t index) {
  const ojson& r = d.doc;
  Row row{&d, index, str(at(r, {"scenario", "name"}), d.path), str(at(r, {"status"}), "unknown")};
  const ojson& checks = at(r, {"checks"});
  row.checks = count(checks);
  if (checks.is_array()) {
    for (const ojson& c : checks) row.failed += (c.is_object() && c.value("ok", false)) ? 0 : 1;
  }
  row.errors = count(at(r, {"errors"}));
  row.violations = count(at(r, {"violations"}));
  const ojson& leaks = at(r, {"leaks"});
  for (const char* k : {"live_allocations", "quarantined_allocations", "foreign_owners_unreleased"})
    row.leaks += static_cast<std::uint64_t>(num(at(leaks, {k})));
  return row;
}

std::string leaks_title(const ojson& r) {
  const ojson& l = at(r, {"leaks"});
  return "live " + fmt(num(at(l, {"live_allocations"})), "%.0f") + " (" +
         fmt(num(at(l, {"live_bytes"})), "%.0f") + " B), quarantined " +
         fmt(num(at(l, {"quarantined_allocations"})), "%.0f") + ", foreign owners unreleased " +
         fmt(num(at(l, {"foreign_owners_unreleased"})), "%.0f");
}

// The failed checks, errors and violations of a report: what and where.
std::string failure_list(const ojson& r) {
  std::string li;
  std::size_t shown_items = 0;
  auto item = [&](const std::string& cls, const std::string& path, const std::string& text) {
    if (++shown_items > 30) return;
    li += "<li class=\"" + cls + "\"><code class=\"path\">" + html_escape(path) + "</code> " +
          html_escape(text) + "</li>\n";
  };
  const ojson& checks = at(r, {"checks"});
  if (checks.is_array()) {
    for (const ojson& c : checks) {
      if (!c.is_object() || c.value("ok", false)) continue;
      item("check", str(at(c, {"step"})),
           "check " + str(at(c, {"what"})) + ": expected " + shown(at(c, {"expected"})) + ", found " +
               shown(at(c, {"actual"})));
    }
  }
  const ojson& errors = at(r, {"errors"});
  if (errors.is_array()) {
    for (const ojson& e : errors) {
      item(
          "error", str(at(e, {"step"})),
          "error " + str(at(e, {"code"})) + " at " + str(at(e, {"op"})) + ": " + str(at(e, {"message"}), ""));
    }
  }
  const ojson& violations = at(r, {"violations"});
  if (violations.is_array()) {
    for (const ojson& v : violations) item("violation", str(at(v, {"kind"})), str(at(v, {"detail"}), ""));
  }
  if (shown_items > 30)
    li += "<li>… and " + std::to_string(shown_items - 30) + " more (see the report)</li>\n";
  if (count(at(r, {"skipped"})) > 0)
    li += "<li>" + std::to_string(count(at(r, {"skipped"}))) + " step(s) skipped after the failure</li>\n";
  return "<ul class=\"failures\">\n" + li + "</ul>";
}

std::string summary_row(const Row& w) {
  const ojson& r = w.doc->doc;
  const ojson& tp = at(r, {"throughput"});
  std::string h = "<tr class=\"scenario-row status-" + html_escape(w.status) + "\" data-scenario=\"" +
                  html_escape(w.name) + "\" data-status=\"" + html_escape(w.status) + "\">";
  h += "<td><a href=\"#scenario-" + std::to_string(w.index) + "\">" + html_escape(w.name) +
       "</a><br><small>" + html_escape(w.doc->path) + "</small></td>";
  h += "<td class=\"status\">" + html_escape(w.status) + "</td>";
  h += "<td>" + std::to_string(w.checks - w.failed) + " / " + std::to_string(w.checks) + "</td>";
  h += "<td>" + std::to_string(w.errors) + "</td>";
  h += "<td title=\"" + html_escape(leaks_title(r)) + "\">" + std::to_string(w.leaks) + "</td>";
  h += "<td>" + std::to_string(w.violations) + "</td>";
  h += "<td>" + fmt(num(at(tp, {"retire_latency_us", "p50"}))) + " / " +
       fmt(num(at(tp, {"retire_latency_us", "p99"}))) + "</td>";
  h += "<td>" + fmt(num(at(tp, {"submit_ns", "p50"}))) + "</td>";
  h += "<td>" + fmt(num(at(r, {"duration_s"}))) + "</td></tr>\n";
  if (w.status != "pass") {
    h += "<tr class=\"failure-detail\"><td colspan=\"9\">" + failure_list(r) + "</td></tr>\n";
  }
  return h;
}

std::string summary_table(const std::vector<Row>& rows) {
  std::size_t failing = 0;
  for (const Row& w : rows) failing += w.status == "pass" ? 0 : 1;
  std::string h = "<section id=\"summary\"><h2>Scenarios: " + std::to_string(rows.size()) + " report(s), " +
                  std::to_string(failing) +
                  " not passing</h2>\n<table class=\"summary\">\n<thead><tr>"
                  "<th>scenario</th><th>status</th><th>checks ok</th><th>errors</th><th>leaks</th>"
                  "<th>violations</th><th>retire p50 / p99 µs</th><th>submit p50 ns</th><th>duration s</th>"
                  "</tr></thead>\n<tbody>\n";
  for (const Row& w : rows) h += summary_row(w);
  return h + "</tbody>\n</table>\n</section>\n";
}

ojson histogram_data(const ojson& latency, const char* unit) {
  ojson d = {{"unit", unit}, {"bounds", ojson::array()}, {"counts", ojson::array()}};
  const ojson& h = at(latency, {"histogram"});
  if (at(h, {"bounds"}).is_array() && at(h, {"counts"}).is_array()) {
    d["bounds"] = h["bounds"];
    d["counts"] = h["counts"];
  }
  d["p50"] = num(at(latency, {"p50"}));
  d["p99"] = num(at(latency, {"p99"}));
  return d;
}

std::string scenario_charts(const Row& w, ReportCharts& charts) {
  const ojson& r = w.doc->doc;
  const ojson& tp = at(r, {"throughput"});
  const ojson& tl = at(r, {"timeline"});
  std::string h = "<section class=\"scenario status-" + html_escape(w.status) + "\" id=\"scenario-" +
                  std::to_string(w.index) + "\"><h3>" + html_escape(w.name) + " <span class=\"status\">" +
                  html_escape(w.status) + "</span></h3>\n<div class=\"charts\">\n";
  h += charts.add("histogram", "retire latency (µs)", histogram_data(at(tp, {"retire_latency_us"}), "µs"));
  h += charts.add("histogram", "submit cost (ns)", histogram_data(at(tp, {"submit_ns"}), "ns"));
  h += charts.add("timeline", "live and in-flight bytes over time", tl.is_object() ? tl : ojson::object());
  return h + "</div>\n</section>\n";
}

}  // namespace

std::string scenarios_section(const std::vector<ReportDocument>& reports, ReportCharts& charts) {
  std::vector<Row> rows;
  for (std::size_t i = 0; i < reports.size(); ++i) rows.push_back(make_row(reports[i], i));
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return rank(a.status) < rank(b.status); });
  std::string h = summary_table(rows);
  h += "<section id=\"scenario-charts\"><h2>Latency and memory per scenario</h2>\n";
  for (const Row& w : rows) h += scenario_charts(w, charts);
  return h + "</section>\n";
}

}  // namespace tandem::cli
