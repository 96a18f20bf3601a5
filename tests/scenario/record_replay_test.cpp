// SPDX-License-Identifier: Apache-2.0
// Recording (docs/runtime.md "Recording", issue 24) end to end on the
// simulated device: a context created with ContextOptions::record_to writes
// the process's runtime calls when it is destroyed; a launch of a kernel
// outside the catalog becomes a declared_launch step (its leases with no
// body); a launch refused above the runtime (by the engine or
// kernels::launch) is a launch step with its expect_error; and the scenario
// engine replays the file with the same submissions and no error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernel_params.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace tandem::scenario {
namespace {

namespace k = tandem::kernels;

// y[i] = 2 x[i]: a kernel of this test's own, unknown to the catalog (the
// simulated device runs its host reference; there is no device code).
void twice_host(void* const* params, const driver::LaunchDims& /*dims*/) {
  const auto* x = static_cast<const BufferParam<const float>*>(params[0]);
  const auto* y = static_cast<const BufferParam<float>*>(params[1]);
  for (std::uint64_t i = 0; i < y->len && i < x->len; ++i) y->data[i] = 2 * x->data[i];
}
constexpr driver::ParamSlot kTwiceSlots[] = {{driver::ParamKind::pointer_led, sizeof(BufferParam<float>)},
                                             {driver::ParamKind::pointer_led, sizeof(BufferParam<float>)}};
const driver::ModuleImage kNoImage{nullptr, 0, "record_replay_test.cpp"};
const driver::KernelSymbol kTwice{"test_twice_f32", &kNoImage, &twice_host, kTwiceSlots, 2};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path fresh_path(const std::string& name) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("tandem-record-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove(p);
  return p;
}

// Runs a recording on the sim.
RunResult replay(const std::string& recorded, const std::filesystem::path& file) {
  const Scenario sc = load_text(recorded, file.string());
  RunOptions ro;
  ro.backend = BackendKind::sim;
  ro.file_text = recorded;
  return run(sc, ro);
}

const k::KernelEntry& simt(const char* name) {
  const k::KernelEntry* e = k::find(k::Model::simt, name, DType::f32);
  if (e == nullptr) throw Error(ErrorCode::unsupported, std::string("no f32 simt kernel ") + name);
  return *e;
}

// Records a program that fills x with a catalog kernel, runs the test's own
// kernel (x read, y written) and scales x; returns the submissions it made.
std::uint64_t record_program(const std::filesystem::path& file) {
  const Platform platform = Platform::sim();
  ContextOptions o;
  o.record_to = file.string();
  const Context ctx = Context::create(platform.device(0), o);
  {
    const Stream s = Stream::create(ctx);
    View x = allocate(s, DType::f32, 256);
    View y = allocate(s, DType::f32, 256);
    const k::Arg fill[] = {k::Arg::of(x), k::Arg::value(3.0)};
    (void)k::launch(s, simt("fill"), fill);
    BufferParam<float> px = x.buffer_param<float>(), py = y.buffer_param<float>();
    void* params[] = {&px, &py};
    const ViewAccess accesses[] = {{&x, Access::read}, {&y, Access::write}};
    (void)launch(s, kTwice, {{1, 1, 1}, {64, 1, 1}, 0}, params, accesses);
    (void)read_back(s, y);  // its contents come from the kernel with no body on replay: not checked
    const k::Arg scale[] = {k::Arg::of(x), k::Arg::value(2.0)};
    (void)k::launch(s, simt("scale"), scale);
    (void)read_back(s, x);  // checked on replay: 6 everywhere
  }
  EXPECT_TRUE(ctx.wait_for_retirement(std::chrono::seconds(60)));
  EXPECT_FALSE(std::filesystem::exists(file)) << "written before its context was destroyed";
  return ctx.stats().submissions_total;
}

TEST(RecordReplay, ALaunchOutsideTheCatalogReplaysAsItsDeclaredLeasesWithTheSameSubmissions) {
  const std::filesystem::path file = fresh_path("declared.json");
  const std::uint64_t submissions = record_program(file);
  ASSERT_TRUE(std::filesystem::exists(file)) << "the last context that asked for the recording is gone";
  const std::string text = read_file(file);
  EXPECT_NE(text.find(R"("op": "declared_launch", "kernel": "test_twice_f32")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("access": "read"}, {"view": )"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("access": "write"}])"), std::string::npos) << text;
  EXPECT_NE(text.find("1 launch(es) of kernels outside the catalog replayed as their declared leases with no "
                      "body (declared_launch): test_twice_f32"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("what": "contents")"), std::string::npos) << text;  // x's read-back
  const RunResult r = replay(text, file);
  EXPECT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_TRUE(r.report["errors"].empty()) << r.report["errors"].dump(2);
  EXPECT_EQ(r.report["throughput"]["retired"], submissions) << r.report["throughput"].dump();
  std::filesystem::remove(file);
}

TEST(RecordReplay, ASecondContextMayJoinTheRecordingButNotAskForAnotherFile) {
  const std::filesystem::path file = fresh_path("join.json"), other = fresh_path("other.json");
  {
    const Platform platform = Platform::sim();
    ContextOptions o;
    o.record_to = file.string();
    const Context a = Context::create(platform.device(0), o);
    {
      const Context b = Context::create(platform.device(0), o);  // the same file: joins
      try {
        ContextOptions p;
        p.record_to = other.string();
        (void)Context::create(platform.device(0), p);
        ADD_FAILURE() << "a second file was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported);
        const std::string what = e.what();
        EXPECT_NE(what.find(file.string()), std::string::npos) << what;
        EXPECT_NE(what.find(other.string()), std::string::npos) << what;
      }
      { View v = allocate(Stream::create(b), DType::u32, 16); }
      EXPECT_TRUE(b.wait_for_retirement(std::chrono::seconds(60)));
    }
    EXPECT_FALSE(std::filesystem::exists(file)) << "written while a context that asked for it lives";
    EXPECT_TRUE(a.wait_for_retirement(std::chrono::seconds(60)));
  }
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists(other));
  EXPECT_NE(read_file(file).find(R"("op": "alloc")"), std::string::npos);
  std::filesystem::remove(file);
}

// Runs `text` on the sim while a recording to `file` is on (a context of
// the test's own asks for it: the hook is process-wide, so the engine's
// calls are recorded too); the file is written when that context goes.
RunResult run_recorded(const std::string& text, const std::filesystem::path& file) {
  const Scenario sc = load_text(text, "recorded-run");
  RunOptions ro;
  ro.backend = BackendKind::sim;
  ro.file_text = text;
  const Platform platform = Platform::sim();
  ContextOptions o;
  o.record_to = file.string();
  const Context ctx = Context::create(platform.device(0), o);
  return run(sc, ro);
}

// The recording's launch steps that expect an error, by code.
std::map<std::string, int> refused_launches(const Scenario& sc) {
  std::map<std::string, int> out;
  for (const Step& st : sc.steps)
    if (st.op == Op::launch && st.expect_error) ++out[*st.expect_error];
  return out;
}

TEST(RecordReplay, LaunchesTheEngineRefusesAreRecordedWithTheirErrorsAndReplayedTheSame) {
  const std::string text =
      read_file(std::filesystem::path(TANDEM_LIBRARY_DIR) / "15-bad-input-model-mismatch.json");
  const std::filesystem::path file = fresh_path("refused.json");
  const RunResult original = run_recorded(text, file);
  ASSERT_EQ(original.outcome, Outcome::pass) << original.report.dump(2);
  ASSERT_TRUE(std::filesystem::exists(file));
  const std::string recorded = read_file(file);
  const Scenario sc = load_text(recorded, file.string());
  // As the file has them: a tensor to SIMT scale and add, a buffer to Tile
  // scale, a tile not compiled (unsupported); f32 + i32 into SIMT add, f32
  // and f64 into Tile matmul (invalid_dtype). Each once: none twice.
  const std::map<std::string, int> want = {{"unsupported", 4}, {"invalid_dtype", 2}};
  EXPECT_EQ(refused_launches(sc), want) << recorded;
  EXPECT_NE(recorded.find(R"("tile": [16, 16], "expect_error": "unsupported")"), std::string::npos)
      << recorded;
  // The replay's expect_error steps fail the run unless each launch fails with its code.
  const RunResult again = replay(recorded, file);
  EXPECT_EQ(again.outcome, Outcome::pass) << again.report.dump(2);
  EXPECT_TRUE(again.report["errors"].empty()) << again.report["errors"].dump(2);
  EXPECT_EQ(again.report["throughput"]["retired"], original.report["throughput"]["retired"]);
  std::filesystem::remove(file);
}

TEST(RecordReplay, ALaunchKernelsRefusesUnderTheEngineIsRecordedOnce) {
  // The engine resolves simt copy by dtype; kernels::launch's own check
  // then refuses the lengths (out_of_range), after the engine's checks.
  const std::string text = R"({"format": "tandem.scenario/1", "name": "refused-by-kernels",
    "streams": ["s0"], "steps": [
      {"op": "alloc", "id": "src", "dtype": "f32", "len": 8, "init": "iota"},
      {"op": "alloc", "id": "dst", "dtype": "f32", "len": 16, "init": "zero"},
      {"op": "launch", "model": "simt", "kernel": "copy", "stream": "s0",
       "args": {"src": "src", "dst": "dst"}, "expect_error": "out_of_range"},
      {"op": "drop", "id": "src"}, {"op": "drop", "id": "dst"}]})";
  const std::filesystem::path file = fresh_path("refused-by-kernels.json");
  const RunResult original = run_recorded(text, file);
  ASSERT_EQ(original.outcome, Outcome::pass) << original.report.dump(2);
  const std::string recorded = read_file(file);
  const Scenario sc = load_text(recorded, file.string());
  const std::map<std::string, int> want = {{"out_of_range", 1}};
  EXPECT_EQ(refused_launches(sc), want) << recorded;
  const RunResult again = replay(recorded, file);
  EXPECT_EQ(again.outcome, Outcome::pass) << again.report.dump(2);
  std::filesystem::remove(file);
}

TEST(RecordReplay, StepsRefusedByANameAreRecordedOnceEachWithTheirCodesAndReplayTheSame) {
  // A launch on a dropped buffer (the engine's table refuses it while
  // binding: not also as a refused launch), a drop of a consumed name, a
  // wait on a name that never held a future, and a name taken twice.
  const std::string text = R"({"format": "tandem.scenario/1", "name": "refused-by-name",
    "streams": ["s0"], "steps": [
      {"op": "alloc", "id": "x", "dtype": "f32", "len": 64, "init": "zero"},
      {"op": "alloc", "id": "x", "dtype": "f32", "len": 8, "expect_error": "invalid_handle"},
      {"op": "alloc", "id": "gone", "dtype": "f32", "len": 16},
      {"op": "drop", "id": "gone"},
      {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s0", "args": {"out": "gone"},
       "scalars": {"value": 1}, "expect_error": "invalid_handle"},
      {"op": "to_tensor", "id": "t", "from": "x", "shape": [8, 8]},
      {"op": "drop", "id": "x", "expect_error": "invalid_handle"},
      {"op": "wait", "id": "t", "expect_error": "invalid_handle"},
      {"op": "drop", "id": "t"}]})";
  const std::filesystem::path file = fresh_path("refused-by-name.json");
  const RunResult original = run_recorded(text, file);
  ASSERT_EQ(original.outcome, Outcome::pass) << original.report.dump(2);
  const std::string recorded = read_file(file);
  std::size_t gone = 0;
  for (std::size_t at = 0;
       (at = recorded.find(R"({"op": "drop", "id": "gone", "expect_error": "invalid_handle"})", at)) !=
       std::string::npos;
       ++at)
    ++gone;
  EXPECT_EQ(gone, 4U) << recorded;
  EXPECT_EQ(recorded.find(R"("kernel": "fill")"), std::string::npos) << "also written as a refused launch:\n"
                                                                     << recorded;
  EXPECT_NE(recorded.find("alloc x1 drop x1 launch x1 wait x1"), std::string::npos) << recorded;
  const RunResult again = replay(recorded, file);
  EXPECT_EQ(again.outcome, Outcome::pass) << again.report.dump(2);
  EXPECT_TRUE(again.report["errors"].empty()) << again.report["errors"].dump(2);
  std::filesystem::remove(file);
}

TEST(RecordReplay, AStepRefusedByANameInsideACaptureIsRecordedInTheCapturedList) {
  const std::string text = R"({"format": "tandem.scenario/1", "name": "refused-in-capture",
    "streams": ["s0"], "steps": [
      {"op": "alloc", "id": "x", "dtype": "f32", "len": 64, "init": "zero"},
      {"op": "alloc", "id": "gone", "dtype": "f32", "len": 64},
      {"op": "drop", "id": "gone"},
      {"op": "capture", "graph": "g", "stream": "s0", "steps": [
        {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s0", "args": {"out": "x"},
         "scalars": {"value": 2}},
        {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s0", "args": {"out": "gone"},
         "scalars": {"value": 1}, "expect_error": "invalid_handle"}]},
      {"op": "replay", "graph": "g", "stream": "s0"},
      {"op": "check", "what": "contents", "of": "x", "equals": {"fill": 2}},
      {"op": "drop", "id": "g"}, {"op": "drop", "id": "x"}]})";
  const std::filesystem::path file = fresh_path("refused-in-capture.json");
  const RunResult original = run_recorded(text, file);
  ASSERT_EQ(original.outcome, Outcome::pass) << original.report.dump(2);
  const std::string recorded = read_file(file);
  const std::size_t capture = recorded.find(R"("op": "capture")");
  ASSERT_NE(capture, std::string::npos) << recorded;
  const std::size_t gone = recorded.find(R"({"op": "drop", "id": "gone", "expect_error": "invalid_handle"})");
  EXPECT_GT(gone, capture) << recorded;
  EXPECT_LT(gone, recorded.find(R"("op": "replay")")) << recorded;
  const RunResult again = replay(recorded, file);
  EXPECT_EQ(again.outcome, Outcome::pass) << again.report.dump(2);
  EXPECT_TRUE(again.report["errors"].empty()) << again.report["errors"].dump(2);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace tandem::scenario
