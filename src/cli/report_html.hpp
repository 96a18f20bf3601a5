// SPDX-License-Identifier: Apache-2.0
// report_html.hpp — the HTML page of `tandem report`: one self-contained
// file (uPlot, the page's script and style and the data inlined).
//
// The tables are HTML written here, so the page reads without a script; the
// charts are containers the page's script (report_page.js) fills with uPlot
// from the data embedded as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "report_inputs.hpp"

namespace tandem::cli {

[[nodiscard]] std::string html_escape(std::string_view s);

// The charts of a page: each is a container (class "chart", data-kind) and
// an entry {id, kind, title, ...data} in the page's JSON.
class ReportCharts {
 public:
  // The container's HTML; `kind` is one the script draws: histogram,
  // timeline, ratios, peers.
  std::string add(const std::string& kind, const std::string& title, nlohmann::ordered_json data);
  [[nodiscard]] const nlohmann::ordered_json& json() const noexcept { return list_; }

 private:
  nlohmann::ordered_json list_ = nlohmann::ordered_json::array();
};

// The whole page.
[[nodiscard]] std::string render_report_page(const ReportInputs& in, const std::string& title);

}  // namespace tandem::cli
