// SPDX-License-Identifier: Apache-2.0
// report_bench.cpp — a bench.json's part of the page (scripts/bench_report.py
// writes it: ratios and absolute figures with their targets, and the peers).
#include <cstdio>

#include "report_sections.hpp"

namespace tandem::cli {

namespace {

using ojson = nlohmann::ordered_json;

const ojson& field(const ojson& j, const char* key) {
  static const ojson kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
std::string str(const ojson& j, const std::string& otherwise = "-") {
  return j.is_string() ? j.get<std::string>() : otherwise;
}
std::string fmt(const ojson& j, const char* f = "%.3f") {
  if (!j.is_number()) return "-";
  char b[64];
  std::snprintf(b, sizeof b, f, j.get<double>());
  return b;
}
// "<= 1.1" -> 1.1 (null when the target is not a comparison with a number).
ojson target_value(const std::string& t) {
  const std::size_t sp = t.find_first_of("0123456789.-");
  if (sp == std::string::npos) return nullptr;
  try {
    return std::stod(t.substr(sp));
  } catch (const std::exception&) {
    return nullptr;
  }
}

std::string cell(const std::string& s) { return "<td>" + html_escape(s) + "</td>"; }

// The judged ratios (those with a target): a chart and a table.
std::string ratios_part(const ojson& ratios, ReportCharts& charts) {
  ojson keys = ojson::array(), titles = keys, values = keys, targets = keys, status = keys, goals = keys;
  std::string rows;
  if (ratios.is_object()) {
    for (const auto& [key, e] : ratios.items()) {
      if (!field(e, "target").is_string()) continue;  // informational: not judged
      const std::string target = e["target"].get<std::string>();
      keys.push_back(key);
      titles.push_back(str(field(e, "title"), key));
      values.push_back(field(e, "value").is_number() ? field(e, "value") : ojson(nullptr));
      targets.push_back(target_value(target));
      goals.push_back(target);
      status.push_back(str(field(e, "status")));
      rows += "<tr class=\"ratio-row status-" + html_escape(str(field(e, "status"))) + "\" data-key=\"" +
              html_escape(key) + "\">" + cell(key) + cell(str(field(e, "title"), "")) +
              cell(fmt(field(e, "value"))) + cell(target) + "<td class=\"status\">" +
              html_escape(str(field(e, "status"))) + "</td>" + cell(fmt(field(e, "noise"))) + "</tr>\n";
    }
  }
  std::string h = charts.add("ratios", "judged ratios against their targets (bar: value; line: target)",
                             {{"labels", keys},
                              {"titles", titles},
                              {"values", values},
                              {"targets", targets},
                              {"goals", goals},
                              {"status", status}});
  return h +
         "<table class=\"ratios\"><thead><tr><th>ratio</th><th>what</th><th>value</th><th>target</th>"
         "<th>status</th><th>noise</th></tr></thead><tbody>\n" +
         rows + "</tbody></table>\n";
}

// One launcher's row: its launch cost and its ratio to the raw driver launch
// of its own process (bench_report.py's peers table).
struct Launcher {
  std::string title;
  ojson per_launch_us, ratio;
  bool tandem = false;
};

std::vector<Launcher> launchers(const ojson& ratios, const ojson& peers) {
  std::vector<Launcher> out;
  for (const char* key : {"launch_simt_paired", "launch_simt_catalog_paired", "launch_tile_paired",
                          "launch_tile_catalog_paired"}) {
    const ojson& e = field(ratios, key);
    if (!field(e, "tracked_value").is_number()) continue;
    if (out.empty() && field(e, "raw_value").is_number())
      out.push_back(
          {"raw cuLaunchKernel (C++, paired raw segments)", e["raw_value"].get<double>() / 1000, 1.0, false});
    out.push_back(
        {std::string("tandem ") + key, e["tracked_value"].get<double>() / 1000, field(e, "value"), true});
  }
  const ojson& list = field(peers, "peers");
  if (list.is_object()) {
    for (const auto& [name, e] : list.items()) {
      if (str(field(e, "status")) != "ok") continue;
      out.push_back({str(field(e, "title"), name), field(field(e, "per_launch_us"), "median"),
                     field(e, "ratio_vs_raw"), false});
    }
  }
  return out;
}

std::string peers_part(const ojson& ratios, const ojson& peers, ReportCharts& charts) {
  const std::vector<Launcher> all = launchers(ratios, peers);
  if (all.empty()) return "<p class=\"note\">No launch figures and no peers in this bench.json.</p>\n";
  ojson labels = ojson::array(), ratio = labels, us = labels, tandem = labels;
  std::string rows;
  for (const Launcher& l : all) {
    labels.push_back(l.title);
    ratio.push_back(l.ratio.is_number() ? l.ratio : ojson(nullptr));
    us.push_back(l.per_launch_us.is_number() ? l.per_launch_us : ojson(nullptr));
    tandem.push_back(l.tandem);
    rows += "<tr class=\"peer-row\">" + cell(l.title) + cell(fmt(l.per_launch_us, "%.2f µs")) +
            cell(fmt(l.ratio, "%.2f×")) + "</tr>\n";
  }
  std::string h =
      charts.add("peers", "launch cost beside the peers: ratio to the raw driver launch of its own process",
                 {{"labels", labels}, {"ratios", ratio}, {"per_launch_us", us}, {"tandem", tandem}});
  return h +
         "<table class=\"peers\"><thead><tr><th>launcher</th><th>per launch</th><th>vs raw driver</th></tr>"
         "</thead><tbody>\n" +
         rows + "</tbody></table>\n";
}

std::string absolute_part(const ojson& absolute) {
  std::string rows;
  if (absolute.is_object()) {
    for (const auto& [key, e] : absolute.items()) {
      if (!field(e, "target").is_string()) continue;
      rows += "<tr class=\"absolute-row status-" + html_escape(str(field(e, "status"))) + "\">" + cell(key) +
              cell(str(field(e, "title"), "")) +
              cell(fmt(field(e, "value"), "%.4g") + " " + str(field(e, "unit"), "")) +
              cell(str(field(e, "target"))) + "<td class=\"status\">" + html_escape(str(field(e, "status"))) +
              "</td></tr>\n";
    }
  }
  if (rows.empty()) return "";
  return "<h3>Judged absolute figures</h3>\n<table class=\"absolute\"><thead><tr><th>figure</th><th>what</th>"
         "<th>value</th><th>target</th><th>status</th></tr></thead><tbody>\n" +
         rows + "</tbody></table>\n";
}

}  // namespace

std::string bench_section(const ReportDocument& bench, std::size_t index, ReportCharts& charts) {
  const ojson& b = bench.doc;
  const ojson& summary = field(b, "summary");
  std::string h = "<section class=\"bench\" id=\"bench-" + std::to_string(index) +
                  "\"><h2>Benchmarks: " + html_escape(bench.path) + "</h2>\n<p class=\"bench-meta\">git " +
                  html_escape(str(field(b, "git"))) + ", " + html_escape(str(field(b, "date"))) + ", " +
                  html_escape(str(field(field(b, "device"), "name"))) + " — " +
                  fmt(field(summary, "pass"), "%.0f") + " pass, " + fmt(field(summary, "miss"), "%.0f") +
                  " miss, " + fmt(field(summary, "absent"), "%.0f") + " absent</p>\n";
  h += "<h3>Judged ratios</h3>\n" + ratios_part(field(b, "ratios"), charts);
  h += "<h3>Launch cost beside the peers</h3>\n" + peers_part(field(b, "ratios"), field(b, "peers"), charts);
  h += absolute_part(field(b, "absolute"));
  return h + "</section>\n";
}

}  // namespace tandem::cli
