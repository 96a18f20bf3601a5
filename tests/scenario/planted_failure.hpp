// SPDX-License-Identifier: Apache-2.0
// planted_failure.hpp — scenarios of 30–60 steps with one planted failure
// among random passing padding (tests/scenario/shrink_test.cpp shrinks them).
//
// Padding comes in self-contained groups (fresh handle names, one stream
// each, every group ends with its buffers dropped and its contents checked
// right), optionally inside loops and threads; the groups and the planted
// steps are interleaved at random, each keeping its own order.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace tandem::scenario::test {

using ojson = nlohmann::ordered_json;

enum class Plant {
  wrong_contents,   // a contents check expecting a wrong value
  leak,             // a forgotten buffer: expect.live_allocations
  aliased,          // to_tensor of a sliced buffer without expect_error
  conflict,         // the reject policy: a launch over a buffer a spin holds (both in a loop of 1)
  expect_error,     // expect_error aliased on a unique buffer (it succeeds)
  thread_contents,  // a wrong contents check in a loop in one of two threads
};

class PlantedScenario {
 public:
  PlantedScenario(Plant plant, std::uint64_t seed) : plant_(plant), rng_(seed) {}

  // About `steps` steps in all (nested ones counted).
  ojson make(int steps) {
    ojson doc = {{"format", "tandem.scenario/1"},
                 {"name", "planted-" + std::to_string(static_cast<int>(plant_))},
                 {"description", "padding around one planted failure"},
                 {"backend", "sim"}};
    if (plant_ == Plant::conflict) doc["conflict_policy"] = "reject";
    doc["streams"] = ojson::array({"s0", "s1", "s2"});
    if (plant_ == Plant::thread_contents) {
      ojson t0 = interleave(planted(), steps / 3);
      ojson t1 = interleave(ojson::array(), steps / 3);
      doc["steps"] = interleave(ojson::array(), steps - count(t0) - count(t1));
      doc["threads"] = {{"t0", t0}, {"t1", t1}};
    } else {
      ojson core = planted();
      doc["steps"] = interleave(core, steps - count(core));
    }
    doc["sim"] = {{"stream_delay_us", {{"s1", 20}}}};
    // The conflict's own stream slow too: whatever the shrinker keeps of it
    // (the spin, or only the buffer's zero fill on s0) is still in flight when
    // s1 touches the buffer, however slowly a sanitizer build runs the steps.
    if (plant_ == Plant::conflict) doc["sim"]["stream_delay_us"]["s0"] = 20000;
    return doc;
  }

 private:
  static int count(const ojson& list) {
    int n = 0;
    for (const ojson& s : list) n += 1 + (s.contains("steps") ? count(s["steps"]) : 0);
    return n;
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  std::string fresh(const char* prefix) { return prefix + std::to_string(next_++); }
  std::string stream() { return plant_ == Plant::conflict ? "s2" : "s" + std::to_string(below(3)); }

  ojson planted() {
    switch (plant_) {
      case Plant::wrong_contents:
        return ojson::parse(R"([{"op": "alloc", "id": "x", "dtype": "f32", "len": 64, "init": {"fill": 5}},
          {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s1", "args": {"x": "x"}, "scalars": {"a": 2}},
          {"op": "check", "what": "contents", "of": "x", "equals": {"fill": 11}},
          {"op": "drop", "id": "x"}])");
      case Plant::leak:
        return ojson::parse(R"([{"op": "alloc", "id": "y", "dtype": "f32", "len": 256, "init": "zero"},
          {"op": "forget", "id": "y"}])");
      case Plant::aliased:
        return ojson::parse(R"([{"op": "alloc", "id": "z", "dtype": "f32", "len": 16, "init": "iota"},
          {"op": "slice", "id": "zs", "of": "z", "offset": 0, "len": 8},
          {"op": "to_tensor", "id": "zt", "from": "z", "shape": [4, 4]}])");
      case Plant::conflict:
        return ojson::parse(
            R"([{"op": "alloc", "id": "c", "dtype": "f32", "len": 1024, "init": "zero", "stream": "s0"},
          {"op": "loop", "count": 1, "steps": [
            {"op": "launch", "id": "k", "model": "simt", "kernel": "spin", "stream": "s0", "args": {"x": "c"},
             "scalars": {"ns": 20000000}},
            {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s1", "args": {"x": "c"}, "scalars": {"a": 3}}]},
          {"op": "wait", "all": true}])");
      case Plant::expect_error:
        return ojson::parse(R"([{"op": "alloc", "id": "e", "dtype": "f32", "len": 8, "init": "zero"},
          {"op": "to_tensor", "id": "et", "from": "e", "shape": [2, 4], "expect_error": "aliased"}])");
      case Plant::thread_contents:
        return ojson::parse(R"([{"op": "loop", "count": 4, "steps": [
            {"op": "alloc", "id": "w", "dtype": "f32", "len": 32, "init": {"fill": 8}},
            {"op": "sleep", "us": 5},
            {"op": "check", "what": "contents", "of": "w", "equals": {"fill": 9}},
            {"op": "drop", "id": "w"}]}])");
    }
    return ojson::array();
  }

  // One padding group: steps that pass on their own.
  ojson group() {
    const std::string s = stream(), h = fresh("p");
    const int len = 8 << below(4);
    switch (below(5)) {
      case 0: {
        const int v = static_cast<int>(below(50));
        return ojson::array(
            {{{"op", "alloc"}, {"id", h}, {"dtype", "f32"}, {"len", len}, {"init", "zero"}, {"stream", s}},
             {{"op", "launch"},
              {"model", "simt"},
              {"kernel", "fill"},
              {"stream", s},
              {"args", {{"out", h}}},
              {"scalars", {{"value", v}}}},
             {{"op", "wait"}, {"stream", s}},
             {{"op", "check"}, {"what", "contents"}, {"of", h}, {"equals", {{"fill", v}}}},
             {{"op", "drop"}, {"id", h}}});
      }
      case 1:
        return ojson::array(
            {{{"op", "alloc"}, {"id", h}, {"dtype", "i32"}, {"len", len}, {"init", "iota"}, {"stream", s}},
             {{"op", "slice"}, {"id", h + "s"}, {"of", h}, {"offset", 0}, {"len", len / 2}},
             {{"op", "check"}, {"what", "views"}, {"of", h}, {"value", 2}},
             {{"op", "drop"}, {"id", h + "s"}},
             {{"op", "check"}, {"what", "unique"}, {"of", h}, {"value", true}},
             {{"op", "drop"}, {"id", h}}});
      case 2:
        return ojson::array(
            {{{"op", "loop"},
              {"count", 1 + below(4)},
              {"steps",
               ojson::array({{{"op", "alloc"},
                              {"id", h},
                              {"dtype", "f32"},
                              {"len", 16},
                              {"init", {{"fill", 2}}},
                              {"stream", s}},
                             {{"op", "launch"},
                              {"model", "simt"},
                              {"kernel", "scale"},
                              {"stream", s},
                              {"args", {{"x", h}}},
                              {"scalars", {{"a", 2}}}},
                             {{"op", "wait"}, {"stream", s}},
                             {{"op", "check"}, {"what", "contents"}, {"of", h}, {"equals", {{"fill", 4}}}},
                             {{"op", "drop"}, {"id", h}}})}}});
      case 3:
        return ojson::array({{{"op", "sleep"}, {"us", 1 + below(20)}}});
      default:
        return ojson::array({{{"op", "alloc"}, {"id", h}, {"dtype", "u32"}, {"len", len}, {"stream", s}},
                             {{"op", "upload"}, {"buf", h}, {"stream", s}, {"from", {{"fill", 3}}}},
                             {{"op", "wait"}, {"stream", s}},
                             {{"op", "check"}, {"what", "contents"}, {"of", h}, {"equals", {{"fill", 3}}}},
                             {{"op", "drop"}, {"id", h}}});
    }
  }

  // `core` and padding groups of about `padding` steps, interleaved.
  ojson interleave(const ojson& core, int padding) {
    std::vector<ojson> lists;
    if (!core.empty()) lists.push_back(core);
    for (int n = 0; n < padding;) {
      lists.push_back(group());
      n += count(lists.back());
    }
    std::vector<std::size_t> next(lists.size(), 0);
    ojson out = ojson::array();
    for (std::size_t left = lists.size(); left > 0;) {
      const std::size_t i = below(lists.size());
      if (next[i] >= lists[i].size()) continue;
      out.push_back(lists[i][next[i]++]);
      if (next[i] == lists[i].size()) --left;
    }
    return out;
  }

  Plant plant_;
  std::mt19937_64 rng_;
  int next_ = 0;
};

}  // namespace tandem::scenario::test
