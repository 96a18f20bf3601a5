// SPDX-License-Identifier: Apache-2.0
// report_cmd.hpp — `tandem report`: scenario reports and bench.json files
// as one self-contained HTML page.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace tandem::cli {

struct ReportCommand {
  std::vector<std::string> inputs;  // report files, folders of them, bench.json files
  std::string out;                  // the HTML file
  std::string title = "tandem report";
};

// Registers the subcommand on `app`; its options fill `cmd`.
CLI::App* add_report(CLI::App& app, ReportCommand& cmd);

// Exit 0 when the page is written; 2 for a missing or unreadable input, one
// that is not JSON or not a report or bench.json, or an --out that cannot
// be written (the message names the file and what was found).
[[nodiscard]] int report_command(const ReportCommand& cmd);

}  // namespace tandem::cli
