// SPDX-License-Identifier: Apache-2.0
// tandem — the command. Subcommands:
//   tandem devices [--backend auto|cuda|sim] [--json|--ctest-resources]
//   tandem smoke   [--backend auto|cuda|sim] [--device N] [--out FILE]
//   tandem kernels [--json]
//   tandem validate FILE... [--json]
//   tandem ops     [--json|--markdown]
//   tandem run FILE... [--backend B] [--out FILE|DIR] [--repeat N] [--json] [--quiet] [--junit FILE]
//   tandem report REPORT|FOLDER|BENCH_JSON... -o FILE.html [--title T]
//   tandem shrink FILE [--backend B|file] [--seed N] [--out PATH] [--max-runs N] [--time-limit S] [--confirm
//   K]
// Exit codes (exit_codes.hpp): 0 pass, 1 fail, 2 bad command line or invalid
// scenario, 3 runtime or device error, 4 the requested backend is not available.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "kernels_cmd.hpp"
#include "report_cmd.hpp"
#include "run_cmd.hpp"
#include "shrink_cmd.hpp"
#include "smoke.hpp"
#include "tandem/device.hpp"
#include "tandem/errors.hpp"
#include "tandem/scenario/device_json.hpp"
#include "tandem/scenario/op_list.hpp"
#include "tandem/scenario/validation_report.hpp"

namespace {

using tandem::BackendKind;
using namespace tandem::cli;

// Opens the platform or exits 4 with the reason.
tandem::Platform open_platform(BackendKind kind) {
  try {
    return tandem::Platform::open(kind);
  } catch (const tandem::Error& e) {
    std::cerr << "tandem: backend '" << tandem::backend_kind_name(kind) << "' is not available: " << e.what()
              << "\n";
    std::exit(kExitNoBackend);
  }
}

void write_json(const nlohmann::ordered_json& j, const std::string& out) {
  if (out.empty() || out == "-") {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::ofstream f(out);
  if (!f) throw tandem::Error(tandem::ErrorCode::invalid_handle, "cannot write '" + out + "'");
  f << j.dump(2) << "\n";
}

int cmd_devices(BackendKind kind, bool json) {
  tandem::Platform p = open_platform(kind);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (int i = 0; i < p.device_count(); ++i) list.push_back(tandem::scenario::device_json(p.device(i)));
  if (json || !isatty(STDOUT_FILENO)) {
    std::cout << nlohmann::ordered_json{{"backend", std::string(p.backend_name())}, {"devices", list}}.dump(2)
              << "\n";
    return kExitPass;
  }
  std::cout << "backend " << p.backend_name() << " (driver " << p.driver_version() << "), "
            << p.device_count() << " device(s)\n";
  for (const auto& d : list) {
    std::cout << "  [" << d["ordinal"].get<int>() << "] " << d["name"].get<std::string>() << "  cc "
              << d["compute_capability"].get<std::string>() << "  "
              << d["total_bytes"].get<std::size_t>() / (1 << 20) << " MiB  " << d["uuid"].get<std::string>()
              << "\n";
  }
  return kExitPass;
}

// A CTest resource spec file (ctest --resource-spec-file) with one slot per
// CUDA device here: GPU tests declare RESOURCE_GROUPS "gpus:1" (two for the
// multi-GPU ones), so `ctest -j N` runs them side by side, one per GPU. No
// CUDA device (or no driver): an empty list, which the tests' registration
// matches (tests/gpu_resources.cmake).
int cmd_ctest_resources() {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  try {
    tandem::Platform p = tandem::Platform::open(BackendKind::cuda);
    for (int i = 0; i < p.device_count(); ++i) gpus.push_back({{"id", std::to_string(i)}, {"slots", 1}});
  } catch (const std::exception& e) {
    std::cerr << "tandem devices: no CUDA device to offer: " << e.what() << "\n";
  }
  const nlohmann::ordered_json spec = {{"version", {{"major", 1}, {"minor", 0}}},
                                       {"local", nlohmann::ordered_json::array({{{"gpus", gpus}}})}};
  std::cout << spec.dump(2) << "\n";
  return kExitPass;
}

// Checks scenario files without running them: every error, with the file and
// the JSON path. Exit 0 when all are valid, 2 otherwise.
int cmd_validate(const std::vector<std::string>& files, bool json) {
  bool all_ok = true;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const std::string& f : files) {
    const tandem::scenario::ValidationReport r = tandem::scenario::validate_file(f);
    all_ok = all_ok && r.ok;
    if (json) {
      nlohmann::ordered_json errors = nlohmann::ordered_json::array();
      for (const auto& d : r.errors) errors.push_back({{"path", d.path}, {"message", d.message}});
      out.push_back({{"file", f}, {"ok", r.ok}, {"errors", errors}});
    } else if (r.ok) {
      std::cout << f << ": valid\n";
    } else {
      for (const auto& d : r.errors) std::cerr << d.to_string() << "\n";
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return all_ok ? kExitPass : kExitUsage;
}

int cmd_smoke(BackendKind kind, int device, const std::string& out) {
  const tandem::scenario::RunResult r = run_smoke(kind, device);
  if (r.outcome == tandem::scenario::Outcome::unavailable) {
    std::cerr << "tandem: " << r.report["errors"][0]["message"].get<std::string>() << "\n";
    return kExitNoBackend;
  }
  write_json(r.report, out);
  if (!out.empty() && out != "-") {
    std::cerr << "tandem smoke on " << r.report["backend"].get<std::string>() << ": "
              << (r.outcome == tandem::scenario::Outcome::pass ? "pass" : "FAIL") << " (report: " << out
              << ")\n";
  }
  return exit_code(r.outcome);
}

// The op table: what each op takes and does.
int cmd_ops(bool markdown) {
  if (markdown) {
    std::cout << tandem::scenario::op_list_markdown();
    return kExitPass;
  }
  std::cout << tandem::scenario::op_list_json().dump(2) << "\n";
  return kExitPass;
}

// What the command line asked for.
struct Request {
  std::string backend = "auto";
  bool json = false;
  bool ctest_resources = false;
  int device = 0;
  std::string out;
  bool kernels_as_json = false;
  std::vector<std::string> scenario_files;
  bool validate_json = false;
  bool ops_markdown = false;
  bool ops_json = false;
  RunCommand run;
  std::string run_backend;
  std::uint64_t run_repeat = 0;
  ShrinkCommand shrink;
  ReportCommand report;
  CLI::App* report_app = nullptr;
  CLI::App *devices = nullptr, *smoke = nullptr, *kernels = nullptr, *validate = nullptr, *ops = nullptr,
           *run_app = nullptr, *shrink_app = nullptr;
};

void add_backend(CLI::App* sub, std::string& backend) {
  sub->add_option("--backend", backend, "auto (CUDA GPU if present, else sim), cuda, or sim")
      ->check(CLI::IsMember({"auto", "cuda", "sim"}));
}

void add_run(CLI::App& app, Request& q) {
  q.run_app = app.add_subcommand(
      "run", "Run scenario files (tandem.scenario/1) and write tandem.report/1 JSON reports");
  CLI::App* run = q.run_app;
  run->add_option("files", q.run.files, "scenario files")->required();
  run->add_option("--backend", q.run_backend, "override the files' backend: auto, cuda or sim")
      ->check(CLI::IsMember({"auto", "cuda", "sim"}));
  run->add_option(
      "--out", q.run.out,
      "report file; a folder (existing, ending in '/', or when several files run) gets "
      "<file stem>.report.json per scenario (made if missing). Checked before anything runs; a report "
      "that cannot be written after all goes to stdout. Default: JSON on stdout unless it is a terminal");
  run->add_option("--repeat", q.run_repeat, "override the files' repeat count (expectations scale with it)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000}));
  run->add_flag("--json", q.run.json, "print the report JSON on stdout even on a terminal");
  run->add_flag("--quiet", q.run.quiet, "no progress line and no human summary");
  run->add_flag("--no-timeline", q.run.no_timeline,
                "no `timeline` in the reports: memory over time is sampled on a thread of the run's own "
                "(every 0.5 ms at first, 256 samples at most); this turns that thread off");
  run->add_option(
      "--junit", q.run.junit,
      "also write JUnit XML for CI: one test case per scenario and repetition, failures carrying the "
      "failed checks and errors with their JSON paths");
  run->footer(
      "On a terminal: a progress line for long runs and a short summary per file (colour unless NO_COLOR is "
      "set).\n"
      "The report gives setup_s, body_s and settle_s (launches_per_s is over the body), the runtime options "
      "the\n"
      "run used (runtime) and per-op step latency (step_latency_ns).\n"
      "Exit codes: 0 all pass, 1 a check failed or a leak/violation was found, 2 invalid scenario or "
      "command\n"
      "line, 3 runtime or device error, 4 the requested backend (or device) is not available.");
}

void add_subcommands(CLI::App& app, Request& q) {
  q.devices = app.add_subcommand("devices", "List the devices of a backend");
  add_backend(q.devices, q.backend);
  q.devices->add_flag("--json", q.json, "JSON output (the default when stdout is not a terminal)");
  q.devices
      ->add_flag("--ctest-resources", q.ctest_resources,
                 "print a CTest resource spec file of this machine's CUDA devices (empty without one), for "
                 "ctest --resource-spec-file: GPU tests then run one per GPU")
      ->excludes("--json");
  q.smoke = app.add_subcommand("smoke",
                               "Exercise the runtime end to end (an embedded scenario) and report as JSON");
  add_backend(q.smoke, q.backend);
  q.smoke->add_option("--device", q.device, "device ordinal")->check(CLI::NonNegativeNumber);
  q.smoke->add_option("--out", q.out, "report file (default: stdout)");
  q.kernels =
      app.add_subcommand("kernels", "List the kernel registry: parameters, access modes, dtypes, tiles");
  q.kernels->add_flag("--json", q.kernels_as_json, "JSON output (the default when stdout is not a terminal)");
  q.validate =
      app.add_subcommand("validate", "Check scenario files without running them (exit 2 if invalid)");
  q.validate->add_option("files", q.scenario_files, "scenario files (tandem.scenario/1 JSON)")->required();
  q.validate->add_flag("--json", q.validate_json, "one JSON result per file");
  q.ops =
      app.add_subcommand("ops", "List the scenario ops: their fields and what they do (JSON, or --markdown)");
  q.ops->add_flag("--markdown", q.ops_markdown, "a markdown table (docs/scenario-ops.md)");
  q.ops
      ->add_flag("--json", q.ops_json,
                 "JSON (the default): [{op, family, doc, fields: [{name, kind, required, doc}]}]")
      ->excludes("--markdown");
  add_run(app, q);
  q.shrink_app = add_shrink(app, q.shrink);
  q.report_app = add_report(app, q.report);
}

int dispatch(const Request& q) {
  const BackendKind kind = *tandem::parse_backend_kind(q.backend);  // CLI11 checked the name
  if (*q.devices) return q.ctest_resources ? cmd_ctest_resources() : cmd_devices(kind, q.json);
  if (*q.smoke) return cmd_smoke(kind, q.device, q.out);
  if (*q.validate) return cmd_validate(q.scenario_files, q.validate_json);
  if (*q.ops) return cmd_ops(q.ops_markdown);
  if (*q.run_app) {
    RunCommand cmd = q.run;
    if (!q.run_backend.empty()) cmd.backend = q.run_backend;
    if (q.run_repeat > 0) cmd.repeat = q.run_repeat;
    return run_command(cmd);
  }
  if (*q.shrink_app) return shrink_command(q.shrink);
  if (*q.report_app) return report_command(q.report);
  if (*q.kernels) {
    const auto list = kernels_json();
    if (q.kernels_as_json || !isatty(STDOUT_FILENO)) {
      std::cout << list.dump(2) << "\n";
    } else {
      print_kernels(list);
    }
    return kExitPass;
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandem: one runtime for SIMT and Tile GPU kernels — devices, checks and reports"};
  app.set_version_flag("--version", std::string("tandem ") + TANDEM_VERSION + " (git " + TANDEM_GIT + ")");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  tandem run scenarios/*.json --out results/local/   run scenarios, one JSON report each\n"
      "  tandem run x.json --backend sim --repeat 100      on the simulated device, 100 times\n"
      "  tandem run x.json --json | jq .status            the report on stdout\n"
      "  tandem devices                   list devices of the best backend here\n"
      "  tandem devices --backend sim     the simulated device\n"
      "  tandem devices --ctest-resources > gpus.json && ctest -j 8 --resource-spec-file gpus.json -L gpu\n"
      "  tandem smoke --out report.json   exercise the runtime, write a JSON report\n"
      "  tandem kernels                   the kernel registry (SIMT and Tile)\n"
      "  tandem ops --markdown            the scenario ops and their fields\n"
      "  tandem validate a.json b.json    check scenario files; errors name file and JSON path\n"
      "  tandem shrink fail.json          a minimal file that fails the same way: fail.min.json\n"
      "  tandem report out/ -o r.html     reports (and bench.json files) as one offline HTML page\n"
      "Exit codes: 0 pass, 1 fail, 2 bad command line or invalid scenario, 3 runtime or device error,\n"
      "4 the requested backend is not available.");
  Request q;
  add_subcommands(app, q);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitPass : kExitUsage;
  }
  try {
    return dispatch(q);
  } catch (const tandem::Error& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return e.code() == tandem::ErrorCode::out_of_range ? kExitUsage : kExitRuntime;
  } catch (const std::exception& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return kExitRuntime;
  }
}
