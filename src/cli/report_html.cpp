// SPDX-License-Identifier: Apache-2.0
#include "report_html.hpp"

#include <sstream>

#include "report_assets.hpp"
#include "report_sections.hpp"

namespace tandem::cli {

namespace {

using ojson = nlohmann::ordered_json;

// JSON for a <script> element: '<' only occurs inside strings there, and as
// \u003c it can never close the element.
std::string script_json(const ojson& j) {
  const std::string text = j.dump(-1, ' ', false, ojson::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

// The inlined sources must not close their element early.
std::string inline_text(std::string_view s, std::string_view closing) {
  std::string out(s);
  for (std::size_t at = out.find(closing); at != std::string::npos; at = out.find(closing, at + 2)) {
    out.insert(at + 1, "\\");
  }
  return out;
}

std::string inputs_line(const ReportInputs& in) {
  std::ostringstream os;
  os << in.reports.size() << " scenario report(s), " << in.benches.size() << " bench.json file(s)";
  return os.str();
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ReportCharts::add(const std::string& kind, const std::string& title, ojson data) {
  const std::string id = "chart-" + std::to_string(list_.size());
  data["id"] = id;
  data["kind"] = kind;
  data["title"] = title;
  list_.push_back(std::move(data));
  return "<figure class=\"chart\" id=\"" + id + "\" data-kind=\"" + kind + "\"><figcaption>" +
         html_escape(title) + "</figcaption></figure>\n";
}

std::string render_report_page(const ReportInputs& in, const std::string& title) {
  ReportCharts charts;
  std::string body;
  if (!in.reports.empty()) body += scenarios_section(in.reports, charts);
  for (std::size_t i = 0; i < in.benches.size(); ++i) body += bench_section(in.benches[i], i, charts);
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<meta name=\"generator\" content=\"tandem report " << TANDEM_VERSION << " (git " << TANDEM_GIT
     << ")\">\n"
     << "<title>" << html_escape(title) << "</title>\n"
     << "<style>\n"
     << inline_text(assets::uplot_css(), "</style") << "\n</style>\n"
     << "<style>\n"
     << inline_text(assets::page_css(), "</style") << "\n</style>\n"
     << "</head>\n<body data-errors=\"0\" data-ready=\"0\">\n"
     << "<header><h1>" << html_escape(title) << "</h1><p class=\"inputs\">" << inputs_line(in)
     << "</p><p id=\"page-errors\" hidden></p></header>\n"
     << body << "<script id=\"tandem-data\" type=\"application/json\">"
     << script_json({{"charts", charts.json()}}) << "</script>\n"
     << "<script>\n"
     << inline_text(assets::page_js(), "</script") << "\n</script>\n"
     << "<script>\n"
     << inline_text(assets::uplot_js(), "</script") << "\n</script>\n"
     << "<script>tandemDrawCharts();</script>\n"
     << "</body>\n</html>\n";
  return os.str();
}

}  // namespace tandem::cli
