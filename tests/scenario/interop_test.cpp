// SPDX-License-Identifier: Apache-2.0
// Interop as scenario ops (issue 24 item 6): borrow_stream and
// borrow_context. A driver object the run makes outside the runtime is
// borrowed, used and dropped; the runtime must never destroy it, and the
// run checks that at the end of each repetition (borrowed.hpp): a planted
// destroy fails the check, naming the object.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "borrowed.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"
#include "tandem/scenario/step.hpp"
#include "tandem/scenario/validation_report.hpp"

namespace tandem::scenario {
namespace {

using ojson = nlohmann::ordered_json;
constexpr auto kPatience = std::chrono::seconds(60);

RunResult run_text(const std::string& body) {
  const std::string text = R"({"format": "tandem.scenario/1", "name": "t", "backend": "sim", )" + body + "}";
  RunOptions o;
  o.file_text = text;
  return run(load_text(text, "interop.json"), o);
}

std::vector<ojson> checks_of(const ojson& report, const std::string& what) {
  std::vector<ojson> out;
  for (const ojson& c : report["checks"])
    if (c["what"] == what) out.push_back(c);
  return out;
}

Step step_at(const std::string& path) {
  Step s;
  s.path = path;
  return s;
}

// --- the check itself, with a destroy planted where a faulty runtime would make it ---

TEST(ScenarioInterop, ABorrowedStreamTheRuntimeDestroyedFailsItsCheckNamingIt) {
  const Platform p = Platform::sim();
  const Context ctx = Context::create(p.device(0));
  const Step st = step_at("steps[2]");
  detail::Borrowed b;
  std::optional<Stream> s = b.stream(ctx, "lib", st);
  EXPECT_FALSE(s->owned());
  const driver::StreamHandle raw = s->native();
  s.reset();
  ASSERT_TRUE(p.wait_for_retirement(kPatience));
  // Planted: the driver stream destroyed behind its owner's back, as a
  // runtime that treated it as owned would when its last handle went.
  ASSERT_TRUE(p.backend().stream_destroy(ctx.native(), raw).ok());
  b.let_go();
  const std::vector<detail::BorrowCheck> checks = b.release();
  ASSERT_EQ(checks.size(), 1U);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_STREQ(checks[0].what, "borrowed_stream");
  EXPECT_EQ(checks[0].step, &st);
  EXPECT_EQ(checks[0].actual["stream"], "lib") << checks[0].actual.dump();
  EXPECT_EQ(checks[0].actual["alive"], false);
  EXPECT_NE(checks[0].actual["detail"].get<std::string>().find("the runtime destroyed it"), std::string::npos)
      << checks[0].actual.dump();
}

TEST(ScenarioInterop, ABorrowedContextTheRuntimeDestroyedFailsItsCheckNamingIt) {
  const Platform p = Platform::sim();
  const Step st = step_at("threads.w[0]");
  detail::Borrowed b;
  std::optional<Context> c = b.context(p.device(0), {}, "lib_ctx", st);
  EXPECT_FALSE(c->owned());
  const driver::ContextHandle raw = c->native();
  c.reset();
  b.let_go();
  ASSERT_TRUE(p.wait_for_retirement(kPatience));
  ASSERT_TRUE(b.runtime_let_go()) << "the runtime still holds a context nothing uses";
  // Planted: destroyed as the runtime let go of it.
  ASSERT_TRUE(p.backend().context_destroy(raw).ok());
  const std::vector<detail::BorrowCheck> checks = b.release();
  ASSERT_EQ(checks.size(), 1U);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_STREQ(checks[0].what, "borrowed_context");
  EXPECT_EQ(checks[0].actual["context"], "lib_ctx") << checks[0].actual.dump();
  EXPECT_EQ(checks[0].actual["released_by_runtime"], true);
  EXPECT_EQ(checks[0].actual["alive"], false);
}

TEST(ScenarioInterop, WithoutAPlantedDestroyTheRunDestroysWhatItBorrowedItself) {
  const Platform p = Platform::sim();
  const Step sc = step_at("steps[0]"), ss = step_at("steps[1]");
  detail::Borrowed b;
  std::optional<Context> c = b.context(p.device(0), {}, "c", sc);
  std::optional<Stream> s = b.stream(*c, "s", ss);
  const driver::ContextHandle raw_ctx = c->native();
  const driver::StreamHandle raw_stream = s->native();
  EXPECT_EQ(b.held_contexts().size(), 1U);
  s.reset();
  c.reset();
  b.let_go();
  EXPECT_TRUE(b.held_contexts().empty());
  ASSERT_TRUE(p.wait_for_retirement(kPatience));
  const std::vector<detail::BorrowCheck> checks = b.release();
  ASSERT_EQ(checks.size(), 2U);
  for (const detail::BorrowCheck& k : checks) EXPECT_TRUE(k.ok) << k.what << " " << k.actual.dump();
  // Gone now: the run destroyed both (the sim refuses a second destroy).
  EXPECT_FALSE(p.backend().stream_destroy(raw_ctx, raw_stream).ok());
  EXPECT_FALSE(p.backend().context_destroy(raw_ctx).ok());
}

// --- through scenario files ---

TEST(ScenarioInterop, BorrowedStreamsAndContextsPassTheirChecksInEveryRepetition) {
  const RunResult r = run_text(R"("streams": ["s0"], "repeat": 2, "steps": [
      {"op": "borrow_context", "id": "c"},
      {"op": "borrow_stream", "id": "lib"},
      {"op": "borrow_stream", "id": "in_c", "context": "c"},
      {"op": "alloc", "id": "x", "dtype": "f32", "len": 64, "init": "iota", "stream": "lib"},
      {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "x"}, "scalars": {"a": 2}},
      {"op": "alloc", "id": "y", "dtype": "f32", "len": 64, "init": "zero", "stream": "in_c"},
      {"op": "check", "what": "live_allocations", "value": 2},
      {"op": "drop", "id": "lib"}, {"op": "drop", "id": "c"},
      {"op": "check", "what": "contents", "of": "x", "equals": {"iota": {"start": 0, "step": 2}}},
      {"op": "check", "what": "contents", "of": "y", "equals": {"fill": 0}}])");
  ASSERT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  const std::vector<ojson> streams = checks_of(r.report, "borrowed_stream");
  const std::vector<ojson> contexts = checks_of(r.report, "borrowed_context");
  ASSERT_EQ(streams.size(), 4U) << r.report.dump(2);  // two per repetition
  ASSERT_EQ(contexts.size(), 2U);
  EXPECT_EQ(streams[0]["step"], "steps[1]");
  EXPECT_EQ(streams[0]["actual"]["stream"], "lib");
  EXPECT_EQ(streams[1]["actual"]["stream"], "in_c");
  EXPECT_EQ(contexts[0]["step"], "steps[0]");
  EXPECT_EQ(contexts[0]["actual"], contexts[0]["expected"]);
}

TEST(ScenarioInterop, ABorrowedStreamIsUnusableBeforeItsBorrowAndAfterItsDrop) {
  const RunResult r = run_text(R"("steps": [
      {"op": "alloc", "id": "x", "dtype": "f32", "len": 16, "init": "zero"},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "lib", "args": {"out": "x"}, "scalars": {"value": 1}, "expect_error": "invalid_handle"},
      {"op": "borrow_stream", "id": "lib"},
      {"op": "borrow_stream", "id": "lib", "expect_error": "invalid_handle"},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "lib", "args": {"out": "x"}, "scalars": {"value": 1}},
      {"op": "drop", "id": "lib"},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "lib", "args": {"out": "x"}, "scalars": {"value": 2}, "expect_error": "invalid_handle"},
      {"op": "borrow_stream", "id": "lib", "context": "x", "expect_error": "invalid_handle"},
      {"op": "check", "what": "contents", "of": "x", "equals": {"fill": 1}}])");
  ASSERT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  // The refused borrows made no driver stream (the name was live; `x` is no context).
  EXPECT_EQ(checks_of(r.report, "borrowed_stream").size(), 1U) << r.report.dump(2);
}

TEST(ScenarioInterop, AContextTheRuntimeStillHoldsAtTheEndFailsItsCheckAndIsLeftAlone) {
  // A buffer of the borrowed context forgotten: the runtime holds the
  // context until the report is written, so the run must not destroy it.
  const RunResult r = run_text(R"("steps": [
      {"op": "borrow_context", "id": "c"},
      {"op": "borrow_stream", "id": "b", "context": "c"},
      {"op": "alloc", "id": "x", "dtype": "f32", "len": 16, "init": "zero", "stream": "b"},
      {"op": "forget", "id": "x"}])");
  EXPECT_EQ(r.outcome, Outcome::fail);
  const std::vector<ojson> contexts = checks_of(r.report, "borrowed_context");
  ASSERT_EQ(contexts.size(), 1U) << r.report.dump(2);
  EXPECT_FALSE(contexts[0]["ok"].get<bool>());
  EXPECT_EQ(contexts[0]["actual"]["context"], "c");
  EXPECT_EQ(contexts[0]["actual"]["released_by_runtime"], false);
  EXPECT_TRUE(checks_of(r.report, "borrowed_stream").empty())
      << "a stream of a held context is left alone too";
}

// --- the static check of stream names ---

TEST(ScenarioInterop, ABorrowStepDeclaresItsStreamNameWhereverItIs) {
  // Used before its borrow step in the file, in a loop and in a thread: the
  // name is accepted; whether it is live is decided when the step runs.
  const ValidationReport v = validate_text(R"({"format": "tandem.scenario/1", "streams": ["s0"],
      "steps": [{"op": "wait", "stream": "late"},
                {"op": "loop", "count": 2, "steps": [{"op": "borrow_stream", "id": "late"}, {"op": "drop", "id": "late"}]}],
      "threads": {"t": [{"op": "borrow_stream", "id": "mine"}, {"op": "alloc", "id": "a", "dtype": "f32", "len": 4, "stream": "mine"}]},
      "sim": {"stream_delay_us": {"mine": 5}}})",
                                           "v.json");
  EXPECT_TRUE(v.ok) << v.message();
  const Scenario s = load_text(R"({"format": "tandem.scenario/1", "streams": ["s0"],
      "steps": [{"op": "borrow_stream", "id": "b"}, {"op": "borrow_stream", "id": "a"}, {"op": "borrow_stream", "id": "b"}]})",
                               "v.json");
  EXPECT_EQ(s.streams, std::vector<std::string>{"s0"});
  EXPECT_EQ(s.borrowed_streams, (std::vector<std::string>{"b", "a"}));
}

TEST(ScenarioInterop, ABorrowedStreamCannotTakeADeclaredStreamsName) {
  const ValidationReport v = validate_text(
      R"({"format": "tandem.scenario/1", "streams": ["s0"], "steps": [{"op": "borrow_stream", "id": "s0"}]})",
      "v.json");
  ASSERT_EQ(v.errors.size(), 1U) << v.message();
  EXPECT_EQ(v.errors[0].path, "steps[0].id");
  EXPECT_NE(v.errors[0].message.find("stream 's0' is declared in 'streams'"), std::string::npos)
      << v.message();
}

TEST(ScenarioInterop, AnUnknownStreamListsTheBorrowedStreamsApart) {
  const ValidationReport v = validate_text(R"({"format": "tandem.scenario/1", "streams": ["s0"],
      "steps": [{"op": "borrow_stream", "id": "lib"}, {"op": "wait", "stream": "lbi"}]})",
                                           "v.json");
  ASSERT_EQ(v.errors.size(), 1U) << v.message();
  EXPECT_EQ(v.errors[0].path, "steps[1].stream");
  EXPECT_EQ(v.errors[0].message,
            "unknown stream 'lbi' (did you mean 'lib'?); declared streams: [s0]; borrowed streams: [lib]");
}

}  // namespace
}  // namespace tandem::scenario
