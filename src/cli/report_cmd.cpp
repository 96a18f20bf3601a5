// SPDX-License-Identifier: Apache-2.0
#include "report_cmd.hpp"

#include <fstream>
#include <iostream>

#include "exit_codes.hpp"
#include "files.hpp"
#include "report_html.hpp"
#include "report_inputs.hpp"

namespace tandem::cli {

CLI::App* add_report(CLI::App& app, ReportCommand& cmd) {
  CLI::App* sub = app.add_subcommand(
      "report",
      "Write scenario reports and bench.json files as one self-contained HTML page (opens offline)");
  sub->add_option(
         "inputs", cmd.inputs,
         "tandem.report/1 JSON files (tandem run --out), folders of them (their *.json files that are "
         "reports or bench.json; others are skipped with a note), or bench.json files "
         "(scripts/bench_report.py, tandem.bench/1)")
      ->required();
  sub->add_option("-o,--out", cmd.out, "the HTML file to write")->required();
  sub->add_option("--title", cmd.title, "the page's title");
  sub->footer(
      "The page: a summary table of the scenarios (status, checks, errors, leaks, violations; failures "
      "first,\n"
      "with their messages and JSON paths), per scenario the retire-latency and submit-cost histograms and "
      "live\n"
      "and in-flight bytes over time (the report's timeline), and per bench.json each judged ratio as a bar\n"
      "against its target with the launch peers beside tandem. Charts are drawn by uPlot, inlined with the "
      "data:\n"
      "no network is needed to open the file.\n"
      "Exit codes: 0 written; 2 an input is missing, unreadable, not JSON, or neither a report nor a "
      "bench.json\n"
      "(the message names the file and what it found), or the output cannot be written.\n"
      "Example: tandem run scenarios/*.json --backend sim --out out/ ; tandem report out/ "
      "results/h200/bench.json "
      "-o report.html");
  return sub;
}

int report_command(const ReportCommand& cmd) {
  std::string why;
  if (!out_file_writable(cmd.out, why)) {
    std::cerr << "tandem report: " << why << "\n";
    return kExitUsage;
  }
  ReportInputs in;
  if (!gather_report_inputs(cmd.inputs, in, why)) {
    std::cerr << "tandem report: " << why << "\n";
    return kExitUsage;
  }
  for (const std::string& s : in.skipped) std::cerr << "tandem report: skipped " << s << "\n";
  const std::string page = render_report_page(in, cmd.title);
  std::ofstream f(cmd.out, std::ios::binary);
  f << page;
  f.close();
  if (!f) {
    std::cerr << "tandem report: cannot write '" << cmd.out << "'\n";
    return kExitUsage;
  }
  std::cerr << "tandem report: " << cmd.out << " (" << in.reports.size() << " report(s), "
            << in.benches.size() << " bench.json file(s), " << page.size() / 1024 << " KiB)\n";
  return kExitPass;
}

}  // namespace tandem::cli
