// SPDX-License-Identifier: Apache-2.0
#include "run_cmd.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "exit_codes.hpp"
#include "files.hpp"
#include "junit.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"

namespace tandem::cli {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

bool use_color(FILE* f) {
  const char* nc = std::getenv("NO_COLOR");
  if (nc != nullptr && nc[0] != '\0') return false;  // https://no-color.org
  return isatty(fileno(f)) != 0;
}

struct Style {
  bool color = false;
  [[nodiscard]] std::string paint(const std::string& s, const char* code) const {
    return color ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
  }
};

// A progress line on a terminal for runs longer than a moment: repetition,
// steps done, failures so far, elapsed time. Redrawn in place.
class ProgressLine {
 public:
  ProgressLine(std::string label, scenario::RunProgress& p, bool enabled) : label_(std::move(label)), p_(p) {
    if (enabled) thread_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() {
    {
      std::lock_guard g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    const auto start = Clock::now();
    bool drawn = false;
    std::unique_lock lk(mu_);
    while (!cv_.wait_for(lk, std::chrono::milliseconds(250), [this] { return stop_; })) {
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (s < 1.0) continue;  // short runs print nothing
      std::ostringstream line;
      line << "\r" << label_ << ": repetition " << p_.repetition.load() << "/" << p_.repetitions.load()
           << ", " << p_.steps_done.load() << " steps, " << p_.checks_failed.load() << " failed checks, "
           << p_.errors.load() << " errors, " << static_cast<int>(s) << " s\033[K";
      std::cerr << line.str() << std::flush;
      drawn = true;
    }
    if (drawn) std::cerr << "\r\033[K" << std::flush;
  }

  std::string label_;
  scenario::RunProgress& p_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Where each report goes: a folder when several files run or when --out
// names a folder (existing, or spelled with a trailing '/').
bool out_is_folder(const RunCommand& cmd) {
  if (cmd.out.empty() || cmd.out == "-") return false;
  std::error_code ec;
  return cmd.files.size() > 1 || fs::is_directory(cmd.out, ec) || cmd.out.back() == '/';
}

std::string report_path(const RunCommand& cmd, const std::string& file) {
  if (!out_is_folder(cmd)) return cmd.out;
  return (fs::path(cmd.out) / (fs::path(file).stem().string() + ".report.json")).string();
}

bool write_report(const std::string& path, const ojson& report, std::string& why) {
  std::ofstream f(path);
  if (!f) {
    why = "cannot write the report to '" + path + "'";
    return false;
  }
  f << report.dump(2) << "\n";
  return static_cast<bool>(f);
}

void summarize(std::ostream& os, const Style& st, const ojson& r, const std::string& file) {
  const std::string status = r.value("status", "error");
  const char* color = status == "pass" ? "32" : status == "fail" ? "31" : "33";
  std::string upper = status;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  std::size_t failed = 0;
  for (const auto& c : r["checks"]) failed += c["ok"].get<bool>() ? 0 : 1;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f s", r.value("duration_s", 0.0));
  os << st.paint(upper, color) << "  " << file << "  (" << r.value("backend", std::string("-")) << ", "
     << secs << ", " << r["checks"].size() << " checks, " << failed << " failed, " << r["errors"].size()
     << " errors, " << r["throughput"].value("submissions", 0) << " submissions)\n";
  std::size_t shown = 0;
  for (const auto& c : r["checks"]) {
    if (c["ok"].get<bool>() || shown++ >= 10) continue;
    os << "    check " << c["step"].get<std::string>() << " " << c["what"].get<std::string>() << ": expected "
       << c["expected"].dump() << ", found " << c["actual"].dump() << "\n";
  }
  shown = 0;
  for (const auto& e : r["errors"]) {
    if (shown++ >= 10) break;
    os << "    error " << e["step"].get<std::string>() << " (" << e["code"].get<std::string>()
       << "): " << e["message"].get<std::string>() << "\n";
  }
  if (!r["skipped"].empty()) os << "    " << r["skipped"].size() << " step(s) skipped after the failure\n";
  for (const auto& v : r["violations"]) {
    if (shown++ >= 20) break;
    os << "    violation " << v["kind"].get<std::string>() << ": " << v["detail"].get<std::string>() << "\n";
  }
  for (const auto& n : r["notes"]) os << "    note: " << n.get<std::string>() << "\n";
}

// --out and --junit are checked before anything runs: a long run must not
// end with nowhere to put its results.
bool outputs_usable(const RunCommand& cmd) {
  if (out_is_folder(cmd)) {
    std::error_code ec;
    fs::create_directories(cmd.out, ec);
    if (ec) {
      std::cerr << "tandem run: --out " << cmd.out << ": cannot create the folder: " << ec.message() << "\n";
      return false;
    }
  } else if (std::string why; !cmd.out.empty() && cmd.out != "-" && !out_file_writable(cmd.out, why)) {
    std::cerr << "tandem run: " << why << "\n";
    return false;
  }
  if (std::string why; !cmd.junit.empty() && !out_file_writable(cmd.junit, why)) {
    std::cerr << "tandem run: --junit: " << why << "\n";
    return false;
  }
  return true;
}

// The JUnit file, written once every file has run; false when it cannot be.
bool write_junit(const RunCommand& cmd, const std::vector<JUnitEntry>& entries) {
  if (cmd.junit.empty()) return true;
  std::ofstream f(cmd.junit);
  f << junit_xml(entries);
  if (f.flush()) return true;
  std::cerr << "tandem run: cannot write the JUnit file '" << cmd.junit << "'\n";
  return false;
}

}  // namespace

int run_command(const RunCommand& cmd) {
  const bool json_to_stdout = (cmd.out.empty() || cmd.out == "-") && (cmd.json || isatty(STDOUT_FILENO) == 0);
  std::ostream& human = json_to_stdout || isatty(STDOUT_FILENO) == 0 ? std::cerr : std::cout;
  const Style style{use_color(&human == &std::cout ? stdout : stderr)};
  if (!outputs_usable(cmd)) return kExitUsage;
  int worst = 0;
  ojson all = ojson::array();
  std::vector<JUnitEntry> junit;
  for (const std::string& file : cmd.files) {
    std::string why;
    const std::optional<std::string> text = read_file(file, why);
    if (!text) {
      std::cerr << "tandem run: " << why << "\n";
      worst = std::max(worst, kExitUsage);
      junit.push_back({file, scenario::Outcome::invalid, std::nullopt, {why}});
      continue;
    }
    scenario::Scenario sc;
    try {
      sc = scenario::load_text(*text, file);
    } catch (const scenario::ScenarioError& e) {
      std::cerr << e.what() << (std::string(e.what()).ends_with("\n") ? "" : "\n");
      worst = std::max(worst, kExitUsage);
      JUnitEntry bad{file, scenario::Outcome::invalid, std::nullopt, {}};
      for (const auto& d : e.diagnostics()) bad.problems.push_back(d.to_string());
      junit.push_back(std::move(bad));
      continue;
    }
    scenario::RunProgress progress;
    scenario::RunOptions opt;
    if (cmd.backend) {
      opt.backend = parse_backend_kind(*cmd.backend);  // CLI11 checked the name
    }
    opt.repeat = cmd.repeat;
    opt.file_text = *text;
    opt.tool_version = TANDEM_VERSION;
    opt.tool_git = TANDEM_GIT;
    opt.progress = &progress;
    opt.timeline = !cmd.no_timeline;
    scenario::RunResult result;
    {
      ProgressLine line(sc.name.empty() ? file : sc.name, progress, !cmd.quiet && isatty(STDERR_FILENO) != 0);
      result = scenario::run(sc, opt);
    }
    worst = std::max(worst, exit_code(result.outcome));
    if (!cmd.out.empty() && cmd.out != "-") {
      const std::string path = report_path(cmd, file);
      if (!write_report(path, result.report, why)) {
        // Nothing lost: the report goes to standard output instead.
        std::cerr << "tandem run: " << why << "; the report follows on standard output\n";
        std::cout << result.report.dump(2) << "\n";
        worst = std::max(worst, kExitUsage);
      }
    }
    if (json_to_stdout) all.push_back(result.report);
    if (!cmd.quiet) summarize(human, style, result.report, file);
    if (!cmd.junit.empty()) junit.push_back({file, result.outcome, result.report, {}});
  }
  if (json_to_stdout && !all.empty()) std::cout << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
  if (!write_junit(cmd, junit)) worst = std::max(worst, kExitUsage);
  return worst;
}

}  // namespace tandem::cli
