// SPDX-License-Identifier: Apache-2.0
// report_inputs.hpp — what `tandem report` reads: report files, folders of
// them, and bench.json files, each recognised by its "format".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tandem::cli {

struct ReportDocument {
  std::string path;  // as given, or inside a given folder
  nlohmann::ordered_json doc;
};

struct ReportInputs {
  std::vector<ReportDocument> reports;  // tandem.report/1
  std::vector<ReportDocument> benches;  // tandem.bench/1 (scripts/bench_report.py)
  std::vector<std::string> skipped;     // files of a folder that are neither (said on stderr)
};

inline constexpr const char* kReportFormat = "tandem.report/1";
inline constexpr const char* kBenchFormat = "tandem.bench/1";

// Reads every argument: a file must be a report or a bench.json; a folder
// contributes its *.json files (sorted, not recursive) that are, and must
// hold at least one. False with `why` naming the file and what was found
// (missing, unreadable, not JSON, another kind of document).
[[nodiscard]] bool gather_report_inputs(const std::vector<std::string>& args, ReportInputs& out,
                                        std::string& why);

}  // namespace tandem::cli
