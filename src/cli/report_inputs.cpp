// SPDX-License-Identifier: Apache-2.0
#include "report_inputs.hpp"

#include <algorithm>
#include <filesystem>

#include "files.hpp"

namespace tandem::cli {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

enum class Kind { report, bench, other };

// What a document says it is, in words for an error message.
std::string describe(const ojson& j) {
  if (!j.is_object()) return std::string("a JSON ") + j.type_name() + ", not an object";
  const auto f = j.find("format");
  if (f == j.end()) return "an object without \"format\"";
  if (!f->is_string()) return std::string("\"format\" of type ") + f->type_name();
  return "\"format\": \"" + f->get<std::string>() + "\"";
}

Kind kind_of(const ojson& j) {
  if (!j.is_object()) return Kind::other;
  const std::string f = j.value("format", std::string());
  if (f == kReportFormat) return Kind::report;
  if (f == kBenchFormat) return Kind::bench;
  return Kind::other;
}

// Parses one file; false with `why` when it cannot be read or parsed.
bool parse(const std::string& path, ojson& doc, std::string& why) {
  std::string reason;
  const auto text = read_file(path, reason);
  if (!text) {
    why = reason;
    return false;
  }
  try {
    doc = ojson::parse(*text);
  } catch (const ojson::parse_error& e) {
    why = path + ": not valid JSON: " + e.what();
    return false;
  }
  return true;
}

void keep(ReportInputs& out, const std::string& path, ojson doc, Kind k) {
  (k == Kind::report ? out.reports : out.benches).push_back({path, std::move(doc)});
}

bool add_file(const std::string& path, ReportInputs& out, std::string& why) {
  ojson doc;
  if (!parse(path, doc, why)) return false;
  const Kind k = kind_of(doc);
  if (k == Kind::other) {
    why = path + ": expected a report (\"format\": \"" + kReportFormat +
          "\") or a bench.json (\"format\": \"" + kBenchFormat + "\"), found " + describe(doc);
    return false;
  }
  keep(out, path, std::move(doc), k);
  return true;
}

bool add_folder(const std::string& folder, ReportInputs& out, std::string& why) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".json") files.push_back(e.path().string());
  }
  if (ec) {
    why = folder + ": cannot list the folder: " + ec.message();
    return false;
  }
  std::sort(files.begin(), files.end());
  std::size_t kept = 0;
  for (const std::string& f : files) {
    ojson doc;
    std::string reason;
    const Kind k = parse(f, doc, reason) ? kind_of(doc) : Kind::other;
    if (k == Kind::other) {
      out.skipped.push_back(reason.empty() ? f + ": " + describe(doc) : reason);
      continue;
    }
    keep(out, f, std::move(doc), k);
    ++kept;
  }
  if (kept == 0) {
    why = folder + ": no report (\"format\": \"" + kReportFormat + "\") or bench.json among its " +
          std::to_string(files.size()) + " .json file(s)";
    return false;
  }
  return true;
}

}  // namespace

bool gather_report_inputs(const std::vector<std::string>& args, ReportInputs& out, std::string& why) {
  for (const std::string& a : args) {
    std::error_code ec;
    if (!fs::exists(a, ec)) {
      why = a + ": no such file or folder";
      return false;
    }
    if (!(fs::is_directory(a, ec) ? add_folder(a, out, why) : add_file(a, out, why))) return false;
  }
  return true;
}

}  // namespace tandem::cli
