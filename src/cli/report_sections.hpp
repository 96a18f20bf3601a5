// SPDX-License-Identifier: Apache-2.0
// report_sections.hpp — the sections of the `tandem report` page: the
// scenario reports (summary, failures, charts) and each bench.json.
#pragma once

#include <string>
#include <vector>

#include "report_html.hpp"
#include "report_inputs.hpp"

namespace tandem::cli {

// The summary table (failures first, with their messages and JSON paths)
// and, per scenario, its latency histograms and memory timeline.
[[nodiscard]] std::string scenarios_section(const std::vector<ReportDocument>& reports, ReportCharts& charts);

// A bench.json: each judged ratio as a bar against its target, the peers
// beside tandem's launch, the judged absolute figures.
[[nodiscard]] std::string bench_section(const ReportDocument& bench, std::size_t index, ReportCharts& charts);

}  // namespace tandem::cli
