// SPDX-License-Identifier: Apache-2.0
// shrink() on the simulated device: scenarios of 30–60 steps with one
// planted failure (planted_failure.hpp: padding groups, loops and threads
// around it, from a seed) shrink to at most 10 steps that fail the same
// way; the same input and seed give the same bytes; passing and invalid
// files are refused; a program of the program fuzzer with one check made
// wrong shrinks too. Each case prints its sizes, runs and time;
// TANDEM_SHRINK_DUMP=DIR writes each input there, TANDEM_SHRINK_SHOW=1
// prints each result.
#include "tandem/scenario/shrink.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "scenario/planted_failure.hpp"
#include "scenario/program_generator.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"

namespace tandem::scenario {
namespace {

using test::Plant;
using test::PlantedScenario;
using ojson = nlohmann::ordered_json;

std::string signature_of(const std::string& text) {
  RunOptions o;
  o.backend = BackendKind::sim;
  const RunResult r = run(load_text(text, "shrink-test.json"), o);
  const auto sig = failure_signature(r.report);
  return sig ? sig->text() : "pass";
}

// Shrinks `doc`, which must fail with `sig`, and checks the result.
void shrinks_to_ten(const ojson& doc, const std::string& label, const std::string& sig,
                    std::uint64_t seed = 0) {
  const std::string text = doc.dump(2);
  const std::size_t before = count_steps(doc);
  if (const char* dir = std::getenv("TANDEM_SHRINK_DUMP")) {
    std::ofstream(std::filesystem::path(dir) / ("shrink-" + label + ".json")) << format_scenario(doc);
  }
  ASSERT_EQ(signature_of(text), sig) << label << ": the planted failure is not the one expected\n" << text;
  ShrinkOptions o;
  o.seed = seed;
  o.file_label = label;
  const ShrinkResult r = shrink(text, o);
  ASSERT_EQ(r.status, ShrinkStatus::shrunk) << label << ": " << r.message;
  EXPECT_EQ(r.signature.text(), sig) << label;
  EXPECT_EQ(r.steps_before, before);
  EXPECT_LE(r.steps_after, 10u) << label << ":\n" << r.text;
  EXPECT_TRUE(r.stopped_early.empty()) << label << ": " << r.stopped_early;
  // Run again. A conflict is timing-dependent when the shrinker dropped the
  // stream delay that makes it certain: it must still happen within ten runs
  // (like --confirm 10).
  std::string again;
  for (int i = 0; i < 10 && again != sig; ++i) again = signature_of(r.text);
  EXPECT_EQ(again, sig) << label << ": the minimal file fails differently:\n" << r.text;
  std::cout << "[ shrink   ] " << label << ": " << sig << ": " << before << " -> " << r.steps_after
            << " steps, " << r.runs << " runs, " << r.invalid_candidates << " invalid skipped, " << r.seconds
            << " s\n";
  if (std::getenv("TANDEM_SHRINK_SHOW")) std::cout << r.text;
}

void planted(Plant plant, const char* name, const std::string& sig) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const ojson doc = PlantedScenario(plant, seed).make(static_cast<int>(30 + 7 * (seed - 1)));
    const std::size_t n = count_steps(doc);
    EXPECT_GE(n, 30u);
    EXPECT_LE(n, 60u);
    shrinks_to_ten(doc, std::string(name) + "-" + std::to_string(seed), sig, seed);
  }
}

TEST(Shrink, AWrongContentsCheckShrinksToItsBuffer) {
  planted(Plant::wrong_contents, "wrong-contents", "check contents (values differ)");
}

TEST(Shrink, ALeakedBufferShrinksToTheLeak) { planted(Plant::leak, "leak", "check expect.live_allocations"); }

TEST(Shrink, AToTensorOfAnAliasedBufferShrinksToTheAlias) {
  planted(Plant::aliased, "aliased", "error aliased at to_tensor");
}

TEST(Shrink, AConflictUnderTheRejectPolicyShrinksToAConflict) {
  planted(Plant::conflict, "conflict", "error conflict at launch");
}

TEST(Shrink, AnExpectErrorThatDoesNotHappenShrinks) {
  planted(Plant::expect_error, "expect-error", "check expect_error (expected aliased, got success)");
}

TEST(Shrink, AWrongCheckInALoopInAThreadShrinksOutOfTheThreadAndLoop) {
  planted(Plant::thread_contents, "thread-loop", "check contents (values differ)");
}

TEST(Shrink, TheSameInputAndSeedGiveTheSameBytes) {
  const std::string text = PlantedScenario(Plant::thread_contents, 9).make(50).dump(2);
  ShrinkOptions o;
  o.seed = 17;
  const ShrinkResult a = shrink(text, o);
  const ShrinkResult b = shrink(text, o);
  ASSERT_EQ(a.status, ShrinkStatus::shrunk) << a.message;
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.runs, b.runs);
  EXPECT_EQ(a.invalid_candidates, b.invalid_candidates);
}

TEST(Shrink, APassingFileIsRefused) {
  const std::string text = test::ProgramGenerator(3).make(30).dump();
  const ShrinkResult r = shrink(text, {});
  EXPECT_EQ(r.status, ShrinkStatus::passes);
  EXPECT_NE(r.message.find("nothing to shrink"), std::string::npos) << r.message;
  EXPECT_EQ(r.runs, 0u);  // a refusal carries no stats
}

TEST(Shrink, AnInvalidFileIsRefusedWithTheLoadersMessage) {
  ShrinkOptions o;
  o.file_label = "bad.json";
  const ShrinkResult r =
      shrink(R"({"format": "tandem.scenario/1", "steps": [{"op": "alloc", "id": "a"}]})", o);
  EXPECT_EQ(r.status, ShrinkStatus::invalid);
  EXPECT_NE(r.message.find("bad.json: steps[0]"), std::string::npos) << r.message;
  EXPECT_EQ(shrink("{", {}).status, ShrinkStatus::invalid);
}

TEST(Shrink, ARunLimitStopsEarlyWithTheSmallestFailingFileSoFar) {
  const std::string text = PlantedScenario(Plant::leak, 4).make(50).dump(2);
  ShrinkOptions o;
  o.max_runs = 6;
  const ShrinkResult r = shrink(text, o);
  ASSERT_EQ(r.status, ShrinkStatus::shrunk) << r.message;
  EXPECT_EQ(r.runs, 6u);
  EXPECT_NE(r.stopped_early.find("run limit"), std::string::npos) << r.stopped_early;
  EXPECT_LT(r.steps_after, r.steps_before);
  EXPECT_EQ(signature_of(r.text), "check expect.live_allocations");
}

TEST(Shrink, TheSignatureComesFromTheReportInItsOrder) {
  ojson report = {
      {"status", "fail"},
      {"checks", ojson::array({{{"step", "steps[2]"}, {"what", "unique"}, {"ok", true}},
                               {{"step", "expect.violations"}, {"what", "violations"}, {"ok", false}}})},
      {"errors", ojson::array()},
      {"violations", ojson::array({{{"kind", "unordered_conflict"}, {"detail", "..."}}})}};
  EXPECT_EQ(failure_signature(report)->text(), "violation unordered_conflict");
  report["errors"].push_back({{"step", "steps[5]"}, {"op", "copy"}, {"code", "out_of_range"}});
  EXPECT_EQ(failure_signature(report)->text(), "error out_of_range at copy");
  report["checks"][0]["ok"] = false;
  EXPECT_EQ(failure_signature(report)->text(), "check unique");
  EXPECT_FALSE(failure_signature({{"status", "pass"}}).has_value());
}

// The program fuzzer's programs (serial and reject policy), one shadow
// check made to expect a wrong value.
void fuzz_program_shrinks(const ojson& program, const std::string& label) {
  ojson doc = program;
  ojson& steps = doc["steps"];
  for (std::size_t i = steps.size(); i-- > 0;) {
    if (steps[i].value("equals", ojson()) != ojson("shadow")) continue;
    ojson candidate = doc;
    candidate["steps"][i]["equals"] = {{"fill", 12345}};
    if (signature_of(candidate.dump()) != "check contents (values differ)") continue;
    shrinks_to_ten(candidate, label, "check contents (values differ)");
    return;
  }
  FAIL() << label << ": no shadow check to plant a wrong value in";
}

TEST(Shrink, AFuzzerProgramWithOneWrongCheckShrinks) {
  for (std::uint64_t seed = 100; seed < 103; ++seed) {
    fuzz_program_shrinks(test::ProgramGenerator(seed).make(60), "fuzz-serial-" + std::to_string(seed));
  }
  fuzz_program_shrinks(test::ProgramGenerator(200).make_reject(60), "fuzz-reject-200");
}

// keep_also (`tandem shrink --reference-env`) constrains what is kept: a
// step the failure does not need is removed without it and kept with a
// hook that rejects every candidate lacking it.
TEST(Shrink, KeepAlsoRejectsCandidatesThatFailTheSameWayButBreakTheReference) {
  const ojson doc = ojson::parse(R"({"format": "tandem.scenario/1", "name": "keep-also", "backend": "sim",
    "streams": ["s0"], "steps": [
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 16, "init": "zero"},
      {"op": "slice", "id": "s", "of": "a", "offset": 0, "len": 4},
      {"op": "to_tensor", "id": "t", "from": "a", "shape": [4, 4], "expect_error": "aliased"},
      {"op": "check", "what": "contents", "of": "a", "equals": {"fill": 5}}]})");
  ShrinkOptions o;
  const ShrinkResult plain = shrink(doc.dump(), o);
  ASSERT_EQ(plain.status, ShrinkStatus::shrunk) << plain.message;
  EXPECT_EQ(plain.text.find("\"slice\""), std::string::npos) << plain.text;
  std::size_t asked = 0;
  o.keep_also = [&asked](const std::string& text) {
    ++asked;
    return text.find("\"slice\"") != std::string::npos;
  };
  const ShrinkResult kept = shrink(doc.dump(), o);
  ASSERT_EQ(kept.status, ShrinkStatus::shrunk) << kept.message;
  EXPECT_EQ(kept.signature, plain.signature);
  EXPECT_NE(kept.text.find("\"slice\""), std::string::npos) << kept.text;
  EXPECT_GT(asked, 0u);
  EXPECT_LT(kept.steps_after, kept.steps_before);
}

// A borrowed context, a stream borrowed in it and a buffer used on that
// stream, interleaved with the failure's own steps, under a reference
// (keep_also, as `--reference-env` gives) that keeps a candidate only if
// the group is whole or gone: no chunk of adjacent steps holds the group
// and no single step of it may go alone, so only removing a step with
// everything that names it (and what those make) gets down to the failure.
TEST(Shrink, AGroupOfStepsThatNameEachOtherGoesAsOneEvenInterleaved) {
  const ojson doc =
      ojson::parse(R"({"format": "tandem.scenario/1", "name": "interleaved-group", "backend": "sim",
    "streams": ["s0"], "steps": [
      {"op": "borrow_context", "id": "bc"},
      {"op": "alloc", "id": "a", "dtype": "f32", "len": 16, "init": "zero"},
      {"op": "borrow_stream", "id": "bs", "context": "bc"},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s0", "args": {"out": "a"},
       "scalars": {"value": 3}},
      {"op": "alloc", "id": "xb", "dtype": "f32", "len": 16, "init": "zero", "stream": "bs"},
      {"op": "drop", "id": "bc"},
      {"op": "check", "what": "contents", "of": "a", "equals": {"fill": 5}},
      {"op": "launch", "model": "simt", "kernel": "scale", "stream": "bs", "args": {"x": "xb"}, "scalars": {"a": 2}},
      {"op": "drop", "id": "bs"}]})");
  const auto group_steps = [](const std::string& text) {
    std::size_t n = 0;
    const ojson parsed = ojson::parse(text);
    for (const ojson& st : parsed["steps"]) {
      const std::string d = st.dump();
      if (d.find("\"bc\"") != std::string::npos || d.find("\"bs\"") != std::string::npos ||
          d.find("\"xb\"") != std::string::npos)
        ++n;
    }
    return n;
  };
  ASSERT_EQ(group_steps(doc.dump()), 6u);
  ShrinkOptions o;
  o.keep_also = [&](const std::string& text) { return group_steps(text) % 6 == 0; };
  const ShrinkResult r = shrink(doc.dump(), o);
  ASSERT_EQ(r.status, ShrinkStatus::shrunk) << r.message;
  EXPECT_EQ(r.signature.text(), signature_of(doc.dump()));
  EXPECT_EQ(group_steps(r.text), 0u) << r.text;
  EXPECT_LE(r.steps_after, 3u) << r.text;
}

}  // namespace
}  // namespace tandem::scenario
