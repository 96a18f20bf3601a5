// SPDX-License-Identifier: Apache-2.0
// A launch refused above the runtime (record_refused_launch,
// tandem/refused_launch.hpp) in a recording (scenario_writer.hpp): written
// as the `launch` step that was asked, with `expect_error`, where a launch
// step can say it; left out and counted in the description where it cannot
// (no view, a view the recording cannot name, arguments that do not match
// the parameters by kind, shared memory, a tile launch's grid); nothing at
// all while the thread's recording is paused.
#include "tandem/refused_launch.hpp"

#include <string>

#include "runtime/runtime_test_support.hpp"
#include "scenario_writer.hpp"

namespace tandem::test {
namespace {

using V = RefusedLaunch::ViewArg;
using S = RefusedLaunch::ScalarArg;

class RefusedLaunchRecording : public RuntimeFixture {
 protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    previous_ = install_recorder(&writer_);
  }
  void TearDown() override {
    install_recorder(previous_);
    RuntimeFixture::TearDown();
  }
  static bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
  }
  detail::ScenarioWriter writer_{"unused.json"};
  Recorder* previous_ = nullptr;
};

TEST_F(RefusedLaunchRecording, ARefusalIsWrittenAsTheLaunchAskedWithItsError) {
  Env e = env();
  const View x = allocate(e.a, DType::f32, 64);
  const V views[] = {{"x", &x}};
  const S scalars[] = {{"a", 2.5}};
  record_refused_launch({e.a, "simt", "scale", views, scalars, {}, std::nullopt, driver::Dim3{64, 1, 1}},
                        ErrorCode::unsupported);
  const std::int64_t tile[] = {16, 16};
  record_refused_launch({e.a, "tile", "scale", views, scalars, tile}, ErrorCode::invalid_dtype);
  const std::string text = writer_.text();
  EXPECT_TRUE(has(
      text, R"({"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", )"
            R"("args": {"x": "b0"}, "scalars": {"a": 2.5}, "block": [64], "expect_error": "unsupported"})"))
      << text;
  EXPECT_TRUE(has(text, R"("kernel": "scale", "stream": "s0", "args": {"x": "b0"}, "scalars": {"a": 2.5}, )"
                        R"("tile": [16, 16], "expect_error": "invalid_dtype"})"))
      << text;
  EXPECT_FALSE(has(text, "not recorded")) << text;
}

TEST_F(RefusedLaunchRecording, ARefusalALaunchStepCannotSayIsLeftOutAndCounted) {
  Env e = env();
  View outside;
  {
    const RecordingPause pause;  // made where the recording cannot see it: no name
    outside = allocate(e.a, DType::f32, 64);
  }
  const View x = allocate(e.a, DType::f32, 64);
  const V named[] = {{"x", &x}}, none[] = {{"x", nullptr}}, unnamed[] = {{"x", &outside}};
  record_refused_launch({e.a, "simt", "scale", none}, ErrorCode::invalid_handle);
  record_refused_launch({e.a, "simt", "scale", unnamed}, ErrorCode::unsupported);
  RefusedLaunch misfit{e.a, "simt", "scale", named};
  misfit.args_fit = false;
  record_refused_launch(misfit, ErrorCode::out_of_range);
  RefusedLaunch shared{e.a, "simt", "scale", named};
  shared.shared_bytes = 128;
  record_refused_launch(shared, ErrorCode::out_of_range);
  record_refused_launch({e.a, "tile", "scale", named, {}, {}, driver::Dim3{}}, ErrorCode::out_of_range);
  {
    const RecordingPause pause;  // not counted either: the recorder never hears of it
    record_refused_launch({e.a, "simt", "scale", named}, ErrorCode::unsupported);
  }
  const std::string text = writer_.text();
  EXPECT_FALSE(has(text, R"("op": "launch")")) << text;
  EXPECT_TRUE(has(text, "5 launch(es) not recorded")) << text;
}

}  // namespace
}  // namespace tandem::test
