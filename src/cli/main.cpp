// tandem — the command. Subcommands:
//   tandem devices [--backend auto|cuda|sim] [--json]
//   tandem smoke   [--backend auto|cuda|sim] [--device N] [--out FILE]
//   tandem kernels [--json]
//   tandem validate FILE... [--json]
//   tandem run FILE... [--backend B] [--out FILE|DIR] [--repeat N] [--json] [--quiet]
// Exit codes: 0 pass, 1 fail, 2 bad command line, 3 runtime or device
// error, 4 the requested backend is not available.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tandem/scenario/device_json.hpp"
#include "kernels_cmd.hpp"
#include "run_cmd.hpp"
#include "tandem/scenario/validation_report.hpp"
#include "smoke.hpp"
#include "tandem/device.hpp"
#include "tandem/errors.hpp"

namespace {

using tandem::BackendKind;

constexpr int kExitPass = 0, kExitFail = 1, kExitUsage = 2, kExitRuntime = 3, kExitNoBackend = 4;

const std::map<std::string, BackendKind> kBackends{
    {"auto", BackendKind::automatic}, {"cuda", BackendKind::cuda}, {"sim", BackendKind::sim}};

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
    std::cout << nlohmann::ordered_json{{"backend", std::string(p.backend_name())}, {"devices", list}}.dump(2) << "\n";
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
  tandem::Platform p = open_platform(kind);
  const nlohmann::ordered_json report = tandem::cli::run_smoke(p.device(device), tandem::cli::SmokeOptions{});
  write_json(report, out);
  const bool pass = report["status"] == "pass";
  if (!out.empty() && out != "-") {
    std::cerr << "tandem smoke on " << p.backend_name() << ": " << (pass ? "pass" : "FAIL") << " (report: " << out
              << ")\n";
  }
  return pass ? kExitPass : kExitFail;
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
      "  tandem smoke --out report.json   exercise the runtime, write a JSON report\n"
      "  tandem kernels                   the kernel registry (SIMT and Tile)\n"
      "  tandem validate a.json b.json    check scenario files; errors name file and JSON path\n"
      "Exit codes: 0 pass, 1 fail, 2 bad command line, 3 runtime or device error,\n"
      "4 the requested backend is not available.");

  std::string backend = "auto";
  auto add_backend = [&](CLI::App* sub) {
    sub->add_option("--backend", backend, "auto (CUDA GPU if present, else sim), cuda, or sim")
        ->check(CLI::IsMember({"auto", "cuda", "sim"}));
  };
  bool json = false;
  CLI::App* devices = app.add_subcommand("devices", "List the devices of a backend");
  add_backend(devices);
  devices->add_flag("--json", json, "JSON output (the default when stdout is not a terminal)");

  int device = 0;
  std::string out;
  CLI::App* smoke = app.add_subcommand("smoke", "Exercise the runtime end to end and report as JSON");
  add_backend(smoke);
  smoke->add_option("--device", device, "device ordinal")->check(CLI::NonNegativeNumber);
  smoke->add_option("--out", out, "report file (default: stdout)");

  bool kernels_as_json = false;
  CLI::App* kernels = app.add_subcommand("kernels", "List the kernel registry: parameters, access modes, dtypes, tiles");
  kernels->add_flag("--json", kernels_as_json, "JSON output (the default when stdout is not a terminal)");

  std::vector<std::string> scenario_files;
  bool validate_json = false;
  CLI::App* validate = app.add_subcommand("validate", "Check scenario files without running them (exit 2 if invalid)");
  validate->add_option("files", scenario_files, "scenario files (tandem.scenario/1 JSON)")->required();
  validate->add_flag("--json", validate_json, "one JSON result per file");

  tandem::cli::RunCommand run_cmd;
  std::string run_backend;
  std::uint64_t run_repeat = 0;
  CLI::App* run = app.add_subcommand(
      "run", "Run scenario files (tandem.scenario/1) and write tandem.report/1 JSON reports");
  run->add_option("files", run_cmd.files, "scenario files")->required();
  run->add_option("--backend", run_backend, "override the files' backend: auto, cuda or sim")
      ->check(CLI::IsMember({"auto", "cuda", "sim"}));
  run->add_option("--out", run_cmd.out,
                  "report file; a folder (existing, ending in '/', or when several files run) gets "
                  "<file stem>.report.json per scenario (made if missing). Checked before anything runs; a report "
                  "that cannot be written after all goes to stdout. Default: JSON on stdout unless it is a terminal");
  run->add_option("--repeat", run_repeat, "override the files' repeat count (expectations scale with it)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000}));
  run->add_flag("--json", run_cmd.json, "print the report JSON on stdout even on a terminal");
  run->add_flag("--quiet", run_cmd.quiet, "no progress line and no human summary");
  run->footer(
      "On a terminal: a progress line for long runs and a short summary per file (colour unless NO_COLOR is set).\n"
      "Exit codes: 0 all pass, 1 a check failed or a leak/violation was found, 2 invalid scenario or command\n"
      "line, 3 runtime or device error, 4 the requested backend (or device) is not available.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitPass : kExitUsage;
  }
  try {
    const BackendKind kind = kBackends.at(backend);
    if (*devices) return cmd_devices(kind, json);
    if (*smoke) return cmd_smoke(kind, device, out);
    if (*validate) return cmd_validate(scenario_files, validate_json);
    if (*run) {
      if (!run_backend.empty()) run_cmd.backend = run_backend;
      if (run_repeat > 0) run_cmd.repeat = run_repeat;
      return tandem::cli::run_command(run_cmd);
    }
    if (*kernels) {
      const auto list = tandem::cli::kernels_json();
      if (kernels_as_json || !isatty(STDOUT_FILENO)) {
        std::cout << list.dump(2) << "\n";
      } else {
        tandem::cli::print_kernels(list);
      }
      return kExitPass;
    }
  } catch (const tandem::Error& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return e.code() == tandem::ErrorCode::out_of_range ? kExitUsage : kExitRuntime;
  } catch (const std::exception& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return kExitRuntime;
  }
  return kExitUsage;
}
