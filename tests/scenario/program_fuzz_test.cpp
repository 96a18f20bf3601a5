// SPDX-License-Identifier: Apache-2.0
// Random scenario programs on the simulated device: interleaved SIMT and Tile
// launches, slices, tensor conversions, copies, transfers, graphs, drops and
// waits over three streams with random device delays, under the order
// policy. Every program is valid by construction (a step that must fail
// says so with expect_error), so each must pass: every `contents shadow`
// check equals the host model replayed in program order (a missed ordering
// shows up as different contents), every `unique` check matches the
// generator's own view count, and the default expectations hold (nothing
// live, nothing quarantined, no sim violation). A failing program is
// written out as a scenario file: the bug report. Other kinds: reject-policy
// programs (one deliberate conflict, no false one), quarantine programs
// (one launch's completion unknown: exactly its allocations quarantined),
// oom programs (one allocation fails: nothing of it remains), two-device
// programs (copies across devices) and threaded programs
// (threads crossing streams over shared buffers: no shadow model, so no
// violation and nothing live).
// TANDEM_FUZZ_SCALE multiplies the number of programs (default 1 -> 60
// serial, 30 of each other kind), TANDEM_FUZZ_STEPS their length (default
// 1 -> 60 steps, 40 per thread), TANDEM_FUZZ_SEED picks the first seed,
// TANDEM_FUZZ_DUMP=1 writes every program out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sanitizers.hpp"
#include "scenario/program_generator.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"

namespace tandem::scenario {
namespace {

using test::json;
using test::ProgramGenerator;

// The same programs on the GPU (target scenario_program_gpu_test, label
// gpu): the files' sim settings are ignored there and the shadow checks are
// the race detector; skipped where no CUDA device exists.
#if defined(TANDEM_PROGRAM_FUZZ_ON_GPU)
constexpr BackendKind kBackend = BackendKind::cuda;
#else
constexpr BackendKind kBackend = BackendKind::sim;
#endif

double fuzz_scale() {
  const char* s = std::getenv("TANDEM_FUZZ_SCALE");
  const double v = s ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

// TANDEM_FUZZ_STEPS scales each program's length (longer programs keep more
// handles and work in flight).
int steps(int fallback) {
  const char* s = std::getenv("TANDEM_FUZZ_STEPS");
  const double v = s ? std::atof(s) : 1.0;
  return std::max(1, static_cast<int>(fallback * (v > 0 ? v : 1.0)));
}

// TANDEM_FUZZ_SEED explores other programs; the default keeps CI's fixed.
std::uint64_t first_seed() {
  const char* s = std::getenv("TANDEM_FUZZ_SEED");
  return s ? std::strtoull(s, nullptr, 0) : 0x7a4d3e00ULL;
}

// Writes a program where a developer finds it, and says where.
std::string keep(const json& program, const std::string& kind, std::uint64_t seed) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("tandem-program-fuzz-" + kind + "-" + std::to_string(seed) + ".json");
  std::ofstream(p) << program.dump(2) << "\n";
  return p.string();
}

// Runs `count` programs from `make`; reports (and writes out) the first
// three that do not pass.
template <class Make>
void run_programs(const std::string& kind, int count, Make make) {
  int failed = 0;
  for (int i = 0; i < count && failed < 3; ++i) {
    const std::uint64_t seed = first_seed() + static_cast<std::uint64_t>(i);
    ProgramGenerator gen(seed);
    const json program = make(gen);
    if (std::getenv("TANDEM_FUZZ_DUMP")) (void)keep(program, kind, seed);
    const std::string text = program.dump();
    RunOptions o;
    o.file_text = text;
    o.backend = kBackend;
    const RunResult r = run(load_text(text, "program-fuzz.json"), o);
    if (r.outcome == Outcome::unavailable)
      GTEST_SKIP() << "backend or device not available: " << r.report["errors"].dump();
    if (r.outcome != Outcome::pass) {
      ++failed;
      json bad = json::array();
      for (const auto& c : r.report["checks"]) {
        if (!c["ok"].get<bool>()) bad.push_back(c);
      }
      ADD_FAILURE() << kind << " program " << seed << " ended " << outcome_name(r.outcome)
                    << " (scenario: " << keep(program, kind, seed) << ")\nfailed checks: " << bad.dump()
                    << "\nerrors: " << r.report["errors"].dump()
                    << "\nviolations: " << r.report["violations"].dump();
    }
  }
}

TEST(ProgramFuzz, EveryValidRandomProgramPassesWithShadowContentsAndNoLeak) {
  run_programs("serial", static_cast<int>(60 * fuzz_scale()),
               [](ProgramGenerator& g) { return g.make(steps(60)); });
}

TEST(ProgramFuzz, EveryRandomRejectPolicyProgramRejectsOnlyItsOneRealConflict) {
  run_programs("reject", static_cast<int>(30 * fuzz_scale()),
               [](ProgramGenerator& g) { return g.make_reject(steps(60)); });
}

TEST(ProgramFuzz, AnUnknownCompletionQuarantinesExactlyTheAllocationsOfItsLaunch) {
#if defined(TANDEM_TEST_ASAN)
  GTEST_SKIP() << "quarantined memory is retained forever by contract, which LeakSanitizer reports";
#endif
  if (kBackend != BackendKind::sim) GTEST_SKIP() << "injected faults exist on the simulated device only";
  run_programs("quarantine", static_cast<int>(30 * fuzz_scale()),
               [](ProgramGenerator& g) { return g.make_quarantine(steps(60)); });
}

TEST(ProgramFuzz, AFailedAllocationLeavesNothingBehindAndTheProgramRunsOn) {
  if (kBackend != BackendKind::sim) GTEST_SKIP() << "injected faults exist on the simulated device only";
  run_programs("oom", static_cast<int>(30 * fuzz_scale()),
               [](ProgramGenerator& g) { return g.make_oom(steps(60)); });
}

TEST(ProgramFuzz, EveryValidRandomTwoDeviceProgramPassesWithShadowContentsAndNoLeak) {
  run_programs("two-devices", static_cast<int>(30 * fuzz_scale()),
               [](ProgramGenerator& g) { return g.make_two_devices(steps(60)); });
}

TEST(ProgramFuzz, EveryValidRandomThreadedProgramPassesWithNoViolationAndNoLeak) {
  run_programs("threads", static_cast<int>(30 * fuzz_scale()),
               [](ProgramGenerator& g) { return g.make_threaded(steps(40)); });
}

}  // namespace
}  // namespace tandem::scenario
