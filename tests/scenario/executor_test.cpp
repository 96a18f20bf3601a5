// SPDX-License-Identifier: Apache-2.0
// The executor against the contract of scenario-format.md §1–§5: each test
// runs a scenario on the simulated device and checks the report.
#include "tandem/scenario/executor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "element_codec.hpp"
#include "sha256.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/latency_histogram.hpp"
#include "tandem/scenario/loader.hpp"
#include "tandem/scenario/validation_report.hpp"

namespace tandem::scenario {
namespace {

using ojson = nlohmann::ordered_json;

RunResult run_text(const std::string& body, std::optional<std::uint64_t> repeat = std::nullopt) {
  const std::string text = R"({"format": "tandem.scenario/1", "name": "t", "backend": "sim", )" + body + "}";
  const Scenario s = load_text(text, "test.json");
  RunOptions o;
  o.file_text = text;
  o.repeat = repeat;
  return run(s, o);
}

const ojson* find_check(const ojson& report, const std::string& step) {
  for (const ojson& c : report["checks"]) {
    if (c["step"] == step) return &c;
  }
  return nullptr;
}

TEST(ScenarioExecutor, ReportHasEveryFieldOfTheContract) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 64, "init": "iota"},
      {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "a"}, "scalars": {"a": 2}},
      {"op": "check", "what": "contents", "of": "a", "equals": {"iota": {"start": 0, "step": 2}}}])");
  const ojson& j = r.report;
  EXPECT_EQ(r.outcome, Outcome::pass) << j.dump(2);
  EXPECT_EQ(j["format"], "tandem.report/1");
  for (const char* k : {"tool", "scenario", "backend", "device", "status", "duration_s", "checks", "errors",
                        "leaks", "uniqueness", "vram", "throughput", "violations"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j["status"], "pass");
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["scenario"]["sha256"].get<std::string>().size(), 64U);
  for (const char* k : {"live_allocations", "live_bytes", "quarantined_allocations", "quarantined_bytes",
                        "foreign_owners_unreleased"}) {
    EXPECT_TRUE(j["leaks"][k].is_number_unsigned()) << k;
  }
  for (const char* k : {"baseline_free", "final_free", "delta", "tolerance", "ok"})
    EXPECT_TRUE(j["vram"].contains(k)) << k;
  for (const char* k : {"submissions", "launches", "launches_per_s", "bytes_moved", "retired",
                        "retire_latency_us", "submit_ns"}) {
    EXPECT_TRUE(j["throughput"].contains(k)) << k;
  }
  EXPECT_EQ(j["throughput"]["launches"], 1);
  EXPECT_EQ(j["throughput"]["submissions"], 2);  // init upload + launch
}

// `tandem run` measures the runtime users get: the default options (shared
// completion events), which the report lists.
TEST(ScenarioExecutor, TheRunUsesTheDefaultRuntimeOptionsAndReportsThem) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 64, "init": "zero"},
      {"op": "loop", "count": 16, "steps": [
        {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "a"}, "scalars": {"a": 2}}]}])");
  const ojson& rt = r.report["runtime"];
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  const tandem::ContextOptions defaults;
  EXPECT_EQ(rt["share_completion_events"], defaults.share_completion_events) << rt.dump();
  EXPECT_EQ(rt["conflict_policy"], "order") << rt.dump();
  EXPECT_EQ(rt["measure_retirement_latency"], true) << rt.dump();
  EXPECT_EQ(rt["out_of_memory_wait_ms"],
            std::chrono::duration_cast<std::chrono::milliseconds>(defaults.out_of_memory_wait).count())
      << rt.dump();
  // The options leave it to TANDEM_MULTI_STREAM_RELEASE; the report names the mode in force.
  const char* mode = std::getenv("TANDEM_MULTI_STREAM_RELEASE");
  EXPECT_EQ(rt["multi_stream_release"], mode ? mode : "host_proven") << rt.dump();
  // And TANDEM_MAX_QUEUED the bound on the device's queue (unset: 256).
  const char* queued = std::getenv("TANDEM_MAX_QUEUED");
  EXPECT_EQ(rt["max_queued_per_stream"], queued ? std::stoi(queued) : 256) << rt.dump();
}

// throughput.retire_latency_us comes from the runtime: one sample per
// retired submission, and a spin's latency is at least its duration.
TEST(ScenarioExecutor, RetireLatencyIsMeasuredForEveryRetiredSubmission) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 64, "init": "zero"},
      {"op": "launch", "model": "simt", "kernel": "spin", "stream": "s0", "args": {"x": "a"}, "scalars": {"ns": 20000000}},
      {"op": "retire"}])");
  const ojson& t = r.report["throughput"];
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_EQ(t["retire_latency_us"]["samples"], t["retired"]) << t.dump();
  EXPECT_GE(t["retire_latency_us"]["max"].get<double>(), 20000.0) << t.dump();
  EXPECT_GT(t["retire_latency_us"]["p50"].get<double>(), 0.0) << t.dump();
}

// A launch step keeps its views' binding between runs of it while no handle
// changes (ops/launch.cpp, LaunchPlan::bound_epoch): a name bound anew in
// between, here to a larger buffer, is looked up again, and the old,
// dropped buffer is never touched.
TEST(ScenarioExecutor, ALaunchStepRepeatedAfterItsNameWasBoundAnewUsesTheNewView) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 64, "init": {"fill": 1}},
      {"op": "alloc", "id": "b", "dtype": "f32", "len": 32, "init": {"fill": 1}},
      {"op": "loop", "count": 3, "steps": [
        {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "b"}, "scalars": {"a": 2}},
        {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "a"}, "scalars": {"a": 2}},
        {"op": "check", "what": "contents", "of": "a", "equals": "shadow"},
        {"op": "drop", "id": "a"},
        {"op": "alloc", "id": "a", "dtype": "f32", "len": 128, "init": {"fill": 3}}]},
      {"op": "check", "what": "contents", "of": "a", "equals": {"fill": 3}},
      {"op": "check", "what": "contents", "of": "b", "equals": {"fill": 8}}])");
  const ojson& j = r.report;
  EXPECT_EQ(r.outcome, Outcome::pass) << j.dump(2);
  EXPECT_EQ(j["violations"].size(), 0U) << j["violations"].dump(2);
  int loop_checks = 0;
  for (const ojson& c : j["checks"]) {
    EXPECT_TRUE(c["ok"].get<bool>()) << c.dump();
    if (c["step"] == "steps[2].steps[2]") ++loop_checks;
  }
  EXPECT_EQ(loop_checks, 3) << "the check inside the loop, once an iteration";
  ASSERT_NE(find_check(j, "steps[3]"), nullptr);
  ASSERT_NE(find_check(j, "steps[4]"), nullptr);
}

TEST(ScenarioExecutor, AFailedCheckFailsTheScenarioWithExitCode1AndTheRunContinues) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "i32", "len": 8, "init": {"fill": 3}},
      {"op": "check", "what": "contents", "of": "a", "equals": {"fill": 4}},
      {"op": "check", "what": "views", "of": "a", "value": 1}])");
  EXPECT_EQ(r.outcome, Outcome::fail);
  EXPECT_EQ(r.report["status"], "fail");
  const ojson* c = find_check(r.report, "steps[1]");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE((*c)["ok"].get<bool>());
  EXPECT_EQ((*c)["actual"]["mismatches"], 8);
  EXPECT_EQ((*c)["actual"]["first_mismatch"]["index"], 0);
  ASSERT_NE(find_check(r.report, "steps[2]"), nullptr) << "a failed check must not end the body";
}

TEST(ScenarioExecutor, AForgottenBufferIsCaughtByTheDefaultExpect) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 1024, "init": "zero"},
      {"op": "forget", "id": "a"}])");
  EXPECT_EQ(r.outcome, Outcome::fail);
  EXPECT_EQ(r.report["leaks"]["live_allocations"], 1);
  EXPECT_EQ(r.report["leaks"]["live_bytes"], 4096);
  const ojson* c = find_check(r.report, "expect.live_allocations");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE((*c)["ok"].get<bool>());
}

TEST(ScenarioExecutor, ExpectationsArePerRepetition) {
  const std::string body = R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "u8", "len": 16, "init": "zero"},
      {"op": "forget", "id": "a"}], "expect": {"live_allocations": 1})";
  const RunResult r = run_text(body, 3);
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_EQ(r.report["leaks"]["live_allocations"], 3);
  EXPECT_EQ(r.report["repetitions"], 3);
}

TEST(ScenarioExecutor, AStepErrorEndsTheBodyAndListsTheSkippedSteps) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 8},
      {"op": "slice", "id": "s", "of": "a", "offset": 4, "len": 8},
      {"op": "drop", "id": "a"},
      {"op": "loop", "count": 2, "steps": [{"op": "sleep", "us": 1}]}])");
  EXPECT_EQ(r.outcome, Outcome::fail);
  ASSERT_EQ(r.report["errors"].size(), 1U);
  EXPECT_EQ(r.report["errors"][0]["code"], "out_of_range");
  EXPECT_EQ(r.report["errors"][0]["step"], "steps[1]");
  EXPECT_EQ(r.report["skipped"], ojson::array({"steps[2]", "steps[3]"}));
  EXPECT_EQ(r.report["leaks"]["live_allocations"], 0) << "remaining handles are dropped at the end";
}

TEST(ScenarioExecutor, ExpectErrorPassesOnlyOnThatExactCode) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 8},
      {"op": "slice", "id": "s", "of": "a", "offset": 4, "len": 8, "expect_error": "out_of_range"},
      {"op": "slice", "id": "t", "of": "a", "offset": 4, "len": 8, "expect_error": "aliased"},
      {"op": "slice", "id": "u", "of": "a", "offset": 0, "len": 8, "expect_error": "out_of_range"}])");
  EXPECT_EQ(r.outcome, Outcome::fail);
  EXPECT_TRUE((*find_check(r.report, "steps[1]"))["ok"].get<bool>());
  EXPECT_FALSE((*find_check(r.report, "steps[2]"))["ok"].get<bool>());
  EXPECT_EQ((*find_check(r.report, "steps[3]"))["actual"], "success");
  EXPECT_TRUE(r.report["errors"].empty());
}

TEST(ScenarioExecutor, UnknownDroppedAndConsumedHandlesAreInvalidHandle) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 8},
      {"op": "to_tensor", "id": "t", "from": "a", "shape": [2, 4]},
      {"op": "slice", "id": "x", "of": "a", "offset": 0, "len": 1, "expect_error": "invalid_handle"},
      {"op": "drop", "id": "nope", "expect_error": "invalid_handle"},
      {"op": "alloc", "id": "t", "dtype": "f32", "len": 8, "expect_error": "invalid_handle"},
      {"op": "wait", "id": "t", "expect_error": "invalid_handle"}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
}

TEST(ScenarioExecutor, ForgottenFutureKeepsItsBufferAliveUntilRetired) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "u8", "len": 4096, "init": "zero"},
      {"op": "wait", "all": true},
      {"op": "launch", "id": "k", "model": "simt", "kernel": "spin", "stream": "s0", "args": {"x": "a"},
       "scalars": {"ns": 200000000}},
      {"op": "forget", "id": "k"},
      {"op": "drop", "id": "a"},
      {"op": "check", "what": "freed", "of": "a", "value": false},
      {"op": "check", "what": "pending", "value": 1},
      {"op": "retire"},
      {"op": "check", "what": "freed", "of": "a", "value": true}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_TRUE(r.report["violations"].empty());
}

TEST(ScenarioExecutor, CompletionUnknownFaultQuarantinesTheLaunchesMemory) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 256, "init": "zero"},
      {"op": "launch", "id": "k3", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "a"},
       "scalars": {"a": 2}},
      {"op": "drop", "id": "a"},
      {"op": "retire"},
      {"op": "check", "what": "freed", "of": "a", "value": false}],
      "sim": {"faults": [{"kind": "completion_unknown", "submission": "k3"}]},
      "expect": {"quarantined_allocations": 1})");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_EQ(r.report["leaks"]["quarantined_allocations"], 1);
  EXPECT_EQ(r.report["leaks"]["live_allocations"], 0);
}

TEST(ScenarioExecutor, AllocFailFaultIsOutOfMemoryOnTheNthAllocation) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 8},
      {"op": "alloc", "id": "b", "dtype": "f32", "len": 8, "expect_error": "out_of_memory"},
      {"op": "alloc", "id": "c", "dtype": "f32", "len": 8}],
      "sim": {"faults": [{"kind": "alloc_fail", "nth": 2}]})");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
}

// `len: {"fraction_of_free": f}` (extension): floor(f x the device's free
// memory when the run started / element size) elements, the same at every
// execution of the step; each such step's figures are noted once.
const ojson* note_of(const ojson& report, const std::string& step) {
  for (const ojson& n : report["notes"]) {
    if (n.get<std::string>().rfind(step + ".len: fraction_of_free", 0) == 0) return &n;
  }
  return nullptr;
}

TEST(ScenarioExecutor, FractionOfFreeLenIsOfTheFreeMemoryWhenTheRunStarted) {
  // 1 MiB device, all free at the start: 0.1 of it is 104857 u8 at every
  // execution of the loop's alloc, whatever is held by then (nothing here
  // depends on when a dropped buffer's memory comes back).
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": {"fraction_of_free": 0.25}, "init": {"fill": 3}},
      {"op": "check", "what": "contents", "of": "a", "equals": "shadow"},
      {"op": "peel", "id": "a_last", "of": "a", "index": 65535},
      {"op": "peel", "id": "a_past", "of": "a", "index": 65536, "expect_error": "out_of_range"},
      {"op": "loop", "count": 3, "steps": [
        {"op": "alloc", "id": "b", "dtype": "u8", "len": {"fraction_of_free": 0.1}, "init": "none"},
        {"op": "peel", "id": "b_last", "of": "b", "index": 104856},
        {"op": "peel", "id": "b_past", "of": "b", "index": 104857, "expect_error": "out_of_range"},
        {"op": "drop", "id": "b_last"},
        {"op": "drop", "id": "b"}]},
      {"op": "alloc", "id": "c", "dtype": "u8", "len": {"fraction_of_free": 0.8}, "init": "none", "expect_error": "out_of_memory"},
      {"op": "alloc", "id": "e", "dtype": "f64", "len": {"fraction_of_free": 1e-9}, "init": "zero"},
      {"op": "slice", "id": "e_all", "of": "e", "offset": 0, "len": 0},
      {"op": "slice", "id": "e_one", "of": "e", "offset": 0, "len": 1, "expect_error": "out_of_range"}],
      "sim": {"memory_bytes": 1048576})");
  const ojson& j = r.report;
  EXPECT_EQ(r.outcome, Outcome::pass) << j.dump(2);
  ASSERT_EQ(j["vram"]["baseline_free"], 1048576) << "the sim's free memory at the start is the whole device";
  for (const auto& [step, figures] :
       std::vector<std::pair<std::string, std::string>>{{"steps[0]", "= 65536 x f32 (262144 bytes)"},
                                                        {"steps[4].steps[0]", "= 104857 x u8 (104857 bytes)"},
                                                        {"steps[5]", "= 838860 x u8 (838860 bytes)"},
                                                        {"steps[6]", "= 0 x f64 (0 bytes)"}}) {
    ASSERT_NE(note_of(j, step), nullptr) << step << j["notes"].dump();
    EXPECT_NE(note_of(j, step)->get<std::string>().find(figures), std::string::npos) << j["notes"].dump();
  }
  EXPECT_EQ(j["notes"].size(), 4U) << "once per step, not per loop iteration: " << j["notes"].dump();
}

TEST(ScenarioExecutor, FractionOfFreeLenTakesAllTheFreeMemoryAtOne) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "i32", "len": {"fraction_of_free": 1}, "init": "none"},
      {"op": "peel", "id": "a_last", "of": "a", "index": 1048575},
      {"op": "alloc", "id": "b", "dtype": "u8", "len": 1, "init": "none", "expect_error": "out_of_memory"}],
      "sim": {"memory_bytes": 4194304})");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
}

TEST(ScenarioExecutor, RejectPolicyReportsTheConflictCode) {
  const RunResult r = run_text(R"("conflict_policy": "reject", "streams": ["s0", "s1"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "u8", "len": 64, "init": "zero"},
      {"op": "wait", "all": true},
      {"op": "launch", "model": "simt", "kernel": "spin", "stream": "s0", "args": {"x": "a"}, "scalars": {"ns": 200000000}},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s1", "args": {"out": "a"}, "scalars": {"value": 1},
       "expect_error": "conflict"}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
}

TEST(ScenarioExecutor, GraphReplayRunsTheCapturedWorkEachTimeAndTheShadowFollows) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 32, "init": {"fill": 1}},
      {"op": "capture", "graph": "g", "stream": "s0", "steps": [
        {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "a"}, "scalars": {"a": 2}}]},
      {"op": "check", "what": "unique", "of": "a", "value": false},
      {"op": "to_tensor", "id": "t", "from": "a", "shape": [32], "expect_error": "aliased"},
      {"op": "loop", "count": 3, "steps": [{"op": "replay", "graph": "g", "stream": "s0"}]},
      {"op": "check", "what": "contents", "of": "a", "equals": {"fill": 8}},
      {"op": "check", "what": "contents", "of": "a", "equals": "shadow"},
      {"op": "drop", "id": "g"},
      {"op": "retire"},
      {"op": "check", "what": "unique", "of": "a", "value": true}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_EQ(r.report["throughput"]["launches"], 3);
  EXPECT_EQ(r.report["uniqueness"]["failures"], 0);
  EXPECT_GE(r.report["uniqueness"]["checks"], 3);
}

TEST(ScenarioExecutor, ShadowIsRefusedInAScenarioWithThreads) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 8, "init": "zero"}],
      "threads": {"t": [{"op": "check", "what": "contents", "of": "a", "equals": "shadow", "expect_error": "unsupported"}]})");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
}

TEST(ScenarioExecutor, ThreadsRunOnTheirOwnStreamsAndUniquenessHoldsUnderRetirement) {
  const RunResult r = run_text(R"("streams": ["s0", "s1", "s2"], "steps": [
      {"op": "alloc", "id": "buf", "dtype": "f32", "len": 2048, "init": "iota"},
      {"op": "alloc", "id": "out", "dtype": "f32", "len": 4096, "init": "zero"},
      {"op": "split", "of": "out", "at": 2048, "ids": ["lo", "rest"]},
      {"op": "check", "what": "unique", "of": "lo", "value": false},
      {"op": "alloc", "id": "hi", "dtype": "f32", "len": 2048}],
      "threads": {
        "a": [{"op": "loop", "count": 200, "steps": [
          {"op": "launch", "model": "simt", "kernel": "copy", "stream": "s0", "args": {"src": "buf", "dst": "lo"}}]}],
        "b": [{"op": "loop", "count": 200, "steps": [
          {"op": "check", "what": "unique", "of": "buf", "value": true},
          {"op": "check", "what": "unique", "of": "hi", "value": true}]}],
        "c": [{"op": "loop", "count": 100, "steps": [
          {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s2", "args": {"out": "hi"}, "scalars": {"value": 5}}]}]})");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_EQ(r.report["uniqueness"]["checks"], 401);
  EXPECT_EQ(r.report["uniqueness"]["failures"], 0);
  EXPECT_EQ(r.report["throughput"]["launches"], 300);
  EXPECT_TRUE(r.report["violations"].empty());
}

TEST(ScenarioExecutor, ForeignOwnerIsReleasedOnlyAfterTheLastUse) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "foreign", "id": "f", "dtype": "u8", "len": 4096, "init": "zero"},
      {"op": "launch", "model": "simt", "kernel": "spin", "stream": "s0", "args": {"x": "f"}, "scalars": {"ns": 200000000}},
      {"op": "drop", "id": "f"},
      {"op": "check", "what": "owner_released", "of": "f", "value": false},
      {"op": "retire"},
      {"op": "check", "what": "owner_released", "of": "f", "value": true}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
}

TEST(ScenarioExecutor, VramMarkAndCheckMeasureTheDevicesFreeMemory) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "vram", "mark": true},
      {"op": "alloc", "id": "a", "dtype": "u8", "len": 1048576},
      {"op": "vram", "check": true, "tolerance_bytes": 0},
      {"op": "drop", "id": "a"},
      {"op": "vram", "check": true, "tolerance_bytes": 0}])");
  EXPECT_EQ(r.outcome, Outcome::fail) << "the first check sees 1 MiB in use";
  EXPECT_FALSE((*find_check(r.report, "steps[2]"))["ok"].get<bool>());
  EXPECT_TRUE((*find_check(r.report, "steps[4]"))["ok"].get<bool>());
  EXPECT_EQ(r.report["vram"]["checked"], true);
}

TEST(ScenarioExecutor, ASimtKernelRefusesATensorWithUnsupported) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 16},
      {"op": "to_tensor", "id": "t", "from": "a", "shape": [4, 4]},
      {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "t"}, "scalars": {"a": 1},
       "expect_error": "unsupported"},
      {"op": "as_buffer", "id": "b", "of": "t"},
      {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "b"}, "scalars": {"a": 1}}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
}

TEST(ScenarioExecutor, BackendThatIsNotAvailableExitsWith4) {
  std::string why;
  if (Platform::cuda_available(why)) GTEST_SKIP() << "a CUDA device is present here";
  const Scenario s =
      load_text(R"({"format": "tandem.scenario/1", "backend": "cuda", "steps": []})", "x.json");
  const RunResult r = run(s, {});
  EXPECT_EQ(r.outcome, Outcome::unavailable);
  EXPECT_EQ(r.report["status"], "error");
}

TEST(ScenarioExecutorParts, Sha256OfKnownVectors) {
  EXPECT_EQ(detail::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(detail::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail::sha256_hex(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST(ScenarioExecutorParts, LatencyHistogramQuantilesWithinThreePercent) {
  tandem::LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100000U);
  EXPECT_EQ(h.max(), 100000U);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.5)), 50000.0, 1500.0);
  EXPECT_NEAR(static_cast<double>(h.quantile(0.99)), 99000.0, 3000.0);
  EXPECT_EQ(tandem::LatencyHistogram{}.quantile(0.5), 0U);
}

TEST(ScenarioExecutorParts, ElementCodecWrapsIntegersAndRoundsHalves) {
  std::byte b[8] = {};
  detail::encode_element(DType::u32, -1.0, b);
  EXPECT_EQ(detail::decode_element(DType::u32, b), 4294967295.0);
  detail::encode_element(DType::i32, 2.9, b);
  EXPECT_EQ(detail::decode_element(DType::i32, b), 2.0);
  detail::encode_element(DType::f16, 1.0 / 3.0, b);
  EXPECT_NEAR(detail::decode_element(DType::f16, b), 1.0 / 3.0, 1e-3);
  detail::encode_element(DType::boolean, 7.0, b);
  EXPECT_EQ(detail::decode_element(DType::boolean, b), 1.0);
  ValueForm iota;
  iota.kind = ValueForm::Kind::iota;
  iota.iota_start = 10;
  iota.iota_step = -1;
  const auto v = detail::make_elements(DType::i32, iota, 12);
  EXPECT_EQ(detail::decode_element(DType::i32, v.data() + 11 * 4), -1.0);
}

}  // namespace
}  // namespace tandem::scenario

namespace tandem::scenario {
namespace {

TEST(ScenarioExecutor, ASimPresentsEveryDeviceTheScenarioUsesAndReportsVramPerDevice) {
  const RunResult r = run_text(R"("streams": ["s0", {"name": "g2", "device": 2}], "steps": [
      {"op": "vram", "mark": true},
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 1024, "init": "iota", "stream": "g2"},
      {"op": "vram", "check": true, "device": 0, "tolerance_bytes": 0},
      {"op": "drop", "id": "a"},
      {"op": "vram", "check": true, "tolerance_bytes": 0}])");
  const ojson& j = r.report;
  EXPECT_EQ(r.outcome, Outcome::pass) << j.dump(2);
  ASSERT_TRUE(j["vram"].contains("devices")) << j["vram"].dump();
  ASSERT_EQ(j["vram"]["devices"].size(), 2U);
  EXPECT_EQ(j["vram"]["devices"][0]["device"], 0);
  EXPECT_EQ(j["vram"]["devices"][1]["device"], 2);
  EXPECT_EQ(j["vram"]["devices"][1]["checked"], true);
  const ojson* c = find_check(j, "steps[2]");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["actual"]["device"], 0);
}

TEST(ScenarioExecutor, OneDeviceReportsNoPerDeviceVram) {
  const RunResult r = run_text(
      R"("streams": ["s0"], "steps": [{"op": "vram", "mark": true}, {"op": "vram", "check": true}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_FALSE(r.report["vram"].contains("devices"));
}

TEST(ScenarioExecutor, MixingDevicesIsDeviceMismatchUntilPeerAccessAllowsCopies) {
  const RunResult r =
      run_text(R"("conflict_policy": "reject", "streams": ["s0", {"name": "g1", "device": 1}], "steps": [
      {"op": "alloc", "id": "a", "dtype": "u32", "len": 16, "init": "iota"},
      {"op": "alloc", "id": "b", "dtype": "u32", "len": 16, "init": "zero", "stream": "g1"},
      {"op": "wait", "all": true},
      {"op": "copy", "src": "a", "dst": "b", "stream": "s0", "expect_error": "device_mismatch"},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "g1", "args": {"out": "a"}, "scalars": {"value": 1}, "expect_error": "device_mismatch"},
      {"op": "peer_access", "devices": [0, 1]},
      {"op": "copy", "src": "a", "dst": "b", "stream": "s0"},
      {"op": "check", "what": "contents", "of": "b", "equals": {"iota": {"start": 0, "step": 1}}}])");
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_EQ(r.report["violations"].size(), 0U);
}

}  // namespace
}  // namespace tandem::scenario

namespace tandem::scenario {
namespace {

// The op added as one table row plus one function: the message and the
// counters of that moment reach the report, in step order.
TEST(ScenarioNote, ANoteWritesItsMessageAndTheCountersAtThatMoment) {
  const RunResult r = run_text(R"("streams": ["s0"], "steps": [
      {"op": "note", "message": "before"},
      {"op": "alloc", "id": "x", "dtype": "f32", "len": 64, "init": "zero"},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s0", "args": {"out": "x"}, "scalars": {"value": 1}},
      {"op": "note", "message": "after"},
      {"op": "drop", "id": "x"}])");
  ASSERT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  const ojson& notes = r.report["step_notes"];
  ASSERT_EQ(notes.size(), 2U) << r.report.dump(2);
  EXPECT_EQ(notes[0]["message"], "before");
  EXPECT_EQ(notes[0]["step"], "steps[0]");
  EXPECT_EQ(notes[0]["counters"]["launches"], 0);
  EXPECT_EQ(notes[0]["counters"]["live_allocations"], 0);
  EXPECT_EQ(notes[1]["message"], "after");
  EXPECT_EQ(notes[1]["counters"]["launches"], 1);
  EXPECT_EQ(notes[1]["counters"]["submissions"], 2);  // the zero init and the launch
  EXPECT_EQ(notes[1]["counters"]["live_allocations"], 1);
  EXPECT_EQ(notes[1]["repetition"], 1);
}

TEST(ScenarioNote, ANoteWithoutAStringMessageIsRejectedByTheLoader) {
  const ValidationReport v = validate_text(
      R"({"format": "tandem.scenario/1", "steps": [{"op": "note"}, {"op": "note", "message": 3}]})",
      "n.json");
  ASSERT_FALSE(v.ok);
  ASSERT_EQ(v.errors.size(), 2U) << v.message();
  EXPECT_EQ(v.errors[0].path, "steps[0].message");
  EXPECT_NE(v.errors[0].message.find("missing required field 'message' for op 'note'"), std::string::npos);
  EXPECT_EQ(v.errors[1].path, "steps[1].message");
  EXPECT_NE(v.errors[1].message.find("expected a string"), std::string::npos);
}

}  // namespace
}  // namespace tandem::scenario

namespace tandem::scenario {
namespace {

// The handle table has no engine-wide lock: the model of an allocation's
// views changes under that allocation's shard together with the runtime's
// count, so threads slicing and dropping views of one buffer at once never
// make the model and the runtime disagree.
TEST(ScenarioHandleTable, ThreadsMakingAndDroppingViewsOfOneBufferNeverDisagreeWithTheModel) {
  std::string threads;
  for (int i = 0; i < 4; ++i) {
    const std::string s = "s" + std::to_string(i);
    threads += std::string(i == 0 ? "" : ", ") + "\"t" + std::to_string(i) +
               R"(": [{"op": "loop", "count": 300, "steps": [
        {"op": "slice", "id": ")" +
               s + R"(", "of": "base", "offset": 0, "len": 8},
        {"op": "check", "what": "unique", "of": "base", "value": false},
        {"op": "to_tensor", "id": ")" +
               s + R"(t", "from": ")" + s + R"(", "shape": [2, 4], "expect_error": "aliased"},
        {"op": "drop", "id": ")" +
               s + R"("}]}])";
  }
  const RunResult r =
      run_text(R"("steps": [{"op": "alloc", "id": "base", "dtype": "f32", "len": 64, "init": "zero"}],
      "threads": {)" +
               threads + "}");
  ASSERT_EQ(r.outcome, Outcome::pass) << r.report["errors"].dump(2);
  EXPECT_EQ(r.report["uniqueness"]["failures"], 0);
  // 4 threads x 300: every check unique and every refused conversion compared.
  EXPECT_EQ(r.report["uniqueness"]["checks"], 4 * 300 * 2);
}

}  // namespace
}  // namespace tandem::scenario
