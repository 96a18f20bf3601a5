// SPDX-License-Identifier: Apache-2.0
#include "shrink_cmd.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "exit_codes.hpp"
#include "files.hpp"
#include "reference_run.hpp"
#include "tandem/scenario/shrink.hpp"

namespace tandem::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kFooter =
    "The failure signature (how the original fails; a candidate must fail the same way: same outcome and\n"
    "signature), from the run's report, the first that applies:\n"
    "  1. the first failed check of a step: its `what` (contents also says 'values differ' or 'value count\n"
    "     differs'; expect_error also the expected code and what happened);\n"
    "  2. else the first step error: its code at its op kind (e.g. 'aliased at to_tensor');\n"
    "  3. else, when expect.violations failed, the kind of the sim's first violation (e.g. "
    "unordered_conflict);\n"
    "  4. else the first failed end-of-run check (e.g. expect.live_allocations).\n"
    "Passes, repeated until none makes progress: repeat -> 1; ddmin over every step list (steps, each "
    "thread's,\n"
    "loop and capture bodies); a step with every step that names what it makes (a borrowed context, its\n"
    "streams, their buffers and their users as one); loop count -> 1 or halved, one-iteration loops inlined; "
    "a thread dropped, or "
    "a\n"
    "single thread's steps moved into steps; a stream removed (its users moved to another of the same "
    "device);\n"
    "alloc/foreign len -> 1 or halved; a view (slice, peel, atomic, as_buffer, tensor_view) removed, its "
    "users\n"
    "given its source; optional fields removed (init -> none, ...; device, conflict_policy,\n"
    "expect keys, sim entries). Invalid candidates are skipped without a run. Deterministic for a seed: the\n"
    "seed orders ddmin's chunk tries. Runs on the simulated device unless --backend says otherwise.\n"
    "On a terminal: a progress line on stderr (steps now, runs, the current pass). Then a summary.\n"
    "Exit codes: 0 the minimal file was written (also when a limit stopped it early: the smallest failing "
    "file\n"
    "so far), 2 the file is unreadable or invalid, it passes (nothing to shrink) or --out is unusable,\n"
    "4 the backend (or a device the file needs) is not available.";

std::string default_out(const std::string& file) {
  const fs::path p(file);
  if (p.extension() == ".json") return (p.parent_path() / (p.stem().string() + ".min.json")).string();
  return file + ".min.json";
}

// A progress line on stderr, redrawn in place at most every 100 ms once the
// search has run half a second.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() {
    if (drawn_) std::cerr << "\r\033[K" << std::flush;
  }
  void operator()(const scenario::ShrinkProgress& p) {
    if (!enabled_ || p.elapsed_s < 0.5 || p.elapsed_s - last_ < 0.1) return;
    last_ = p.elapsed_s;
    std::ostringstream line;
    line << "\rshrink: " << p.steps_now << "/" << p.steps_before << " steps, " << p.runs << " runs, "
         << p.invalid_candidates << " invalid skipped, pass " << p.pass << ", "
         << static_cast<int>(p.elapsed_s) << " s\033[K";
    std::cerr << line.str() << std::flush;
    drawn_ = true;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  double last_ = -1;
};

int refuse(const scenario::ShrinkResult& r, const std::string& file) {
  if (r.status == scenario::ShrinkStatus::invalid) {
    std::cerr << "tandem shrink: " << file << " is not a valid scenario:\n"
              << r.message << (r.message.ends_with("\n") ? "" : "\n");
  } else {
    std::cerr << "tandem shrink: " << file << ": " << r.message << "\n";
  }
  return r.status == scenario::ShrinkStatus::unavailable ? kExitNoBackend : kExitUsage;
}

}  // namespace

CLI::App* add_shrink(CLI::App& app, ShrinkCommand& cmd) {
  CLI::App* s = app.add_subcommand(
      "shrink", "Reduce a failing scenario to a minimal one that fails the same way; writes FILE.min.json");
  s->add_option("file", cmd.file, "the failing scenario file")->required();
  s->add_option(
       "--backend", cmd.backend,
       "sim (default: what CI has), cuda, auto, or file (the file's own backend, as tandem run uses)")
      ->check(CLI::IsMember({"auto", "cuda", "sim", "file"}));
  s->add_option("--seed", cmd.seed, "the seed of the only randomness (ddmin's chunk order); default 0");
  s->add_option("--out", cmd.out, "where the minimal file goes (default: FILE with .json -> .min.json)");
  s->add_option("--max-runs", cmd.max_runs,
                "at most this many scenario runs, the original's included (default 2000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100000000}));
  s->add_option("--time-limit", cmd.time_limit_s,
                "stop after this many seconds (default 600; checked between runs)")
      ->check(CLI::Range(0.001, 1e7));
  s->add_option(
       "--confirm", cmd.confirm,
       "runs per verdict, for timing-dependent failures: a candidate is kept when one of up to K runs "
       "fails the same way, and the original is run up to K times until it fails (default 1)")
      ->check(CLI::Range(1u, 1000u));
  s->add_option(
      "--reference-env", cmd.reference_env,
      "NAME=VALUE (repeatable): a candidate that fails the same way is kept only if it also passes when "
      "this tandem runs it with these set (e.g. TANDEM_MUTANT= for the build without its planted bug); "
      "the original must pass there too");
  s->add_flag("--quiet", cmd.quiet, "no progress line and no summary");
  s->footer(kFooter);
  return s;
}

int shrink_command(const ShrinkCommand& cmd) {
  std::string why;
  const std::optional<std::string> read = read_file(cmd.file, why);
  if (!read) {
    std::cerr << "tandem shrink: " << why << "\n";
    return kExitUsage;
  }
  const std::string& text = *read;
  const std::string out = cmd.out.empty() ? default_out(cmd.file) : cmd.out;
  if (!out_file_writable(out, why)) {
    std::cerr << "tandem shrink: " << why << "\n";
    return kExitUsage;
  }
  scenario::ShrinkOptions o;
  o.backend = cmd.backend == "file" ? std::nullopt : parse_backend_kind(cmd.backend);
  o.seed = cmd.seed;
  o.max_runs = cmd.max_runs;
  o.time_limit_s = cmd.time_limit_s;
  o.confirm = cmd.confirm;
  o.file_label = cmd.file;
  std::optional<ReferenceRun> reference;
  if (!cmd.reference_env.empty()) {
    std::vector<std::pair<std::string, std::string>> env;
    for (const std::string& a : cmd.reference_env) {
      std::pair<std::string, std::string> kv;
      if (!parse_env_assignment(a, kv)) {
        std::cerr << "tandem shrink: --reference-env '" << a << "' is not NAME=VALUE\n";
        return kExitUsage;
      }
      env.push_back(std::move(kv));
    }
    reference.emplace(std::move(env), cmd.backend);
    if (!reference->passes(text)) {
      std::cerr << "tandem shrink: " << cmd.file
                << " does not pass under --reference-env: nothing tells its failure "
                << "apart from the reference's\n";
      return kExitUsage;
    }
    o.keep_also = [&reference](const std::string& candidate) { return reference->passes(candidate); };
  }
  scenario::ShrinkResult r;
  {
    ProgressLine line(!cmd.quiet && isatty(STDERR_FILENO) != 0);
    o.progress = [&line](const scenario::ShrinkProgress& p) { line(p); };
    r = scenario::shrink(text, o);
  }
  if (r.status != scenario::ShrinkStatus::shrunk) return refuse(r, cmd.file);
  std::ofstream w(out, std::ios::binary);
  w << r.text;
  if (!w.flush()) {
    std::cerr << "tandem shrink: cannot write '" << out << "'\n";
    return kExitUsage;
  }
  if (cmd.quiet) return kExitPass;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f s", r.seconds);
  std::cout << cmd.file << ": fails with " << r.signature.text() << " (" << scenario::outcome_name(r.outcome)
            << ")\n"
            << "shrunk " << r.steps_before << " -> " << r.steps_after << " steps in " << r.runs << " runs ("
            << r.invalid_candidates << " invalid candidates skipped, " << r.accepted << " reductions kept), "
            << secs << "\n";
  if (!r.stopped_early.empty()) {
    std::cout << "stopped early: " << r.stopped_early << "; this is the smallest failing file so far\n";
  }
  std::cout << "wrote " << out << "\n";
  return kExitPass;
}

}  // namespace tandem::cli
