// SPDX-License-Identifier: Apache-2.0
#include "smoke.hpp"

#include <nlohmann/json.hpp>

#include "tandem/scenario/loader.hpp"

namespace tandem::cli {

namespace {

// 64 buffers of 1 MiB filled and dropped at once; free memory back within
// 8 MiB after retirement; then uniqueness and a conflict on two streams.
constexpr const char* kSmoke = R"({
  "format": "tandem.scenario/1",
  "name": "smoke",
  "description": "tandem smoke: buffers cycled and dropped with their fills in flight, free memory back after retirement, uniqueness of a buffer and its slice, a cross-stream write refused under the reject policy while a spin kernel holds the buffer and accepted after.",
  "conflict_policy": "reject",
  "streams": ["s0", "s1"],
  "steps": [
    {"op": "vram", "mark": true},
    {"op": "loop", "count": 64, "steps": [
      {"op": "alloc", "id": "buf", "dtype": "u8", "len": 1048576, "init": {"fill": 7}, "stream": "s0"},
      {"op": "drop", "id": "buf"}
    ]},
    {"op": "alloc", "id": "buf", "dtype": "u8", "len": 1048576, "init": {"fill": 9}, "stream": "s0"},
    {"op": "check", "what": "contents", "of": "buf", "equals": {"fill": 9}},
    {"op": "drop", "id": "buf"},
    {"op": "retire"},
    {"op": "vram", "check": true, "tolerance_bytes": 8388608},
    {"op": "alloc", "id": "kept", "dtype": "f32", "len": 256, "init": "zero", "stream": "s0"},
    {"op": "check", "what": "unique", "of": "kept", "value": true},
    {"op": "slice", "id": "half", "of": "kept", "offset": 0, "len": 128},
    {"op": "check", "what": "unique", "of": "kept", "value": false},
    {"op": "launch", "id": "spin", "model": "simt", "kernel": "spin", "stream": "s0", "args": {"x": "kept"}, "scalars": {"ns": 50000000}},
    {"op": "launch", "model": "simt", "kernel": "fill", "stream": "s1", "args": {"out": "kept"}, "scalars": {"value": 2}, "expect_error": "conflict"},
    {"op": "wait", "id": "spin"},
    {"op": "launch", "id": "f", "model": "simt", "kernel": "fill", "stream": "s1", "args": {"out": "kept"}, "scalars": {"value": 3}},
    {"op": "wait", "id": "f"},
    {"op": "check", "what": "contents", "of": "kept", "equals": {"fill": 3}},
    {"op": "drop", "id": "half"}, {"op": "drop", "id": "kept"}, {"op": "drop", "id": "spin"}, {"op": "drop", "id": "f"},
    {"op": "retire"}
  ]
})";

}  // namespace

std::string smoke_scenario(int device) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(kSmoke);
  j["device"] = device;
  return j.dump(2);
}

scenario::RunResult run_smoke(BackendKind backend, int device) {
  const std::string text = smoke_scenario(device);
  const scenario::Scenario sc = scenario::load_text(text, "<smoke>");
  scenario::RunOptions opt;
  opt.backend = backend;
  opt.file_text = text;
  opt.tool_version = TANDEM_VERSION;
  opt.tool_git = TANDEM_GIT;
  return scenario::run(sc, opt);
}

}  // namespace tandem::cli
