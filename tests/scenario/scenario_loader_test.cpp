// SPDX-License-Identifier: Apache-2.0
// Scenario loader: valid files load into the AST; every malformed file is
// rejected with the expected JSON path and message.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "scenario/scenario_test_util.hpp"
#include "tandem/scenario/loader.hpp"
#include "tandem/scenario/op_list.hpp"
#include "tandem/scenario/validation_report.hpp"

namespace ts = tandem::scenario;
using ts::test::data_dir;
using ts::test::files_in;
using ts::test::read_all;

TEST(ScenarioLoader, ValidFilesLoad) {
  const auto files = files_in("valid", ".json");
  ASSERT_GE(files.size(), 5u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const auto r = ts::validate_file(f.string());
    EXPECT_TRUE(r.ok) << r.message();
    EXPECT_TRUE(r.ok);
  }
}

TEST(ScenarioLoader, ValidFilesCoverEveryOpAndCheckForm) {
  std::vector<bool> ops(static_cast<std::size_t>(ts::Op::sleep) + 1, false);
  std::vector<bool> whats(static_cast<std::size_t>(ts::CheckWhat::contents) + 1, false);
  std::function<void(const std::vector<ts::Step>&)> visit = [&](const std::vector<ts::Step>& steps) {
    for (const auto& s : steps) {
      ops[static_cast<std::size_t>(s.op)] = true;
      if (s.op == ts::Op::check) whats[static_cast<std::size_t>(s.what)] = true;
      visit(s.steps);
    }
  };
  for (const auto& f : files_in("valid", ".json")) {
    const auto sc = ts::load(f.string());
    visit(sc.steps);
    for (const auto& [name, steps] : sc.threads) visit(steps);
  }
  for (std::size_t i = 0; i < ops.size(); ++i) EXPECT_TRUE(ops[i]) << "op #" << i << " not covered";
  for (std::size_t i = 0; i < whats.size(); ++i) EXPECT_TRUE(whats[i]) << "check #" << i << " not covered";
}

TEST(ScenarioLoader, AstIsTyped) {
  const auto sc = ts::load((data_dir() / "valid" / "03_launches.json").string());
  EXPECT_EQ(sc.format, "tandem.scenario/1");
  ASSERT_EQ(sc.streams.size(), 2u);
  const auto& k1 = sc.steps.at(3);
  EXPECT_EQ(k1.op, ts::Op::launch);
  EXPECT_EQ(k1.path, "steps[3]");
  EXPECT_EQ(k1.kernel, "axpy");
  EXPECT_EQ(k1.args.at("x"), "x");
  EXPECT_DOUBLE_EQ(k1.scalars.at("a"), 2.0);
  ASSERT_TRUE(k1.grid.has_value());
  EXPECT_EQ((*k1.grid)[0], 16u);
  ASSERT_TRUE(k1.block.has_value());
  EXPECT_EQ((*k1.block)[0], 256u);
  EXPECT_EQ(sc.steps.at(1).init.kind, ts::ValueForm::Kind::fill);
  EXPECT_DOUBLE_EQ(sc.steps.at(1).init.fill, 1.5);
  const auto g = ts::load((data_dir() / "valid" / "04_graphs_loops.json").string());
  EXPECT_EQ(g.sim.memory_bytes, 1048576u);
  EXPECT_EQ(g.sim.stream_delay_us.at("s0"), 500u);
  ASSERT_EQ(g.sim.faults.size(), 2u);
  EXPECT_EQ(g.sim.faults[0].submission, "r");
  EXPECT_EQ(g.steps.at(2).steps.at(4).steps.at(0).op, ts::Op::sleep);
  EXPECT_EQ(g.expect.quarantined_allocations, 1u);
}

TEST(ScenarioLoader, MalformedCorpus) {
  const auto files = files_in("malformed", ".json");
  ASSERT_GE(files.size(), 100u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    auto ex = f;
    ex.replace_extension(".expect");
    const std::string spec = read_all(ex);
    const auto nl = spec.find('\n');
    ASSERT_NE(nl, std::string::npos);
    const std::string path = spec.substr(0, nl);
    std::string msg = spec.substr(nl + 1);
    if (!msg.empty() && msg.back() == '\n') msg.pop_back();
    const auto r = ts::validate_file(f.string());
    ASSERT_FALSE(r.ok);
    EXPECT_FALSE(r.ok);
    ASSERT_FALSE(r.errors.empty());
    bool found = false;
    for (const auto& d : r.errors) {
      const std::string shown = d.path.empty() ? "<document>" : d.path;
      EXPECT_EQ(d.file, f.string());
      // Messages are valid UTF-8 (a report can embed them): dump() throws otherwise.
      EXPECT_NO_THROW((void)nlohmann::json(d.message).dump());
      if (shown.find(path) != std::string::npos && d.message.find(msg) != std::string::npos) found = true;
    }
    EXPECT_TRUE(found) << "wanted path '" << path << "' and message '" << msg << "'; got:\n" << r.message();
  }
}

TEST(ScenarioLoader, ReportsAllErrors) {
  const auto r = ts::validate_text(R"({"format": "tandem.scenario/1", "repeat": -1, "backend": "gpu",
    "streams": ["s0"], "steps": [{"op": "alloc", "id": "x", "dtype": "f3", "len": -1, "stream": "s1"},
    {"op": "lanch"}], "expect": {"leaks": 1}})",
                                   "inline.json");
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.errors.size(), 7u) << r.message();
  const std::string m = r.message();
  for (const char* frag : {"inline.json: repeat:", "inline.json: backend:", "steps[0].dtype", "steps[0].len",
                           "steps[0].stream", "steps[1].op", "expect.leaks"})
    EXPECT_NE(m.find(frag), std::string::npos) << frag << "\n" << m;
}

TEST(ScenarioLoader, ErrorCapIsRespected) {
  std::string text = R"({"format": "tandem.scenario/1", "steps": [)";
  for (int i = 0; i < 500; ++i) text += std::string(i ? "," : "") + R"({"op": "nope"})";
  text += "]}";
  const auto r = ts::validate_text(text, "many.json");
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.errors.size(), ts::kMaxDiagnostics);
}

TEST(ScenarioLoader, MissingFileAndTooLarge) {
  auto r = ts::validate_file((data_dir() / "no-such-file.json").string());
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message().find("cannot open"), std::string::npos);
  std::string big(ts::kMaxFileBytes + 1, ' ');
  r = ts::validate_text(big, "big.json");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message().find("too large"), std::string::npos);
}

TEST(ScenarioLoader, LoadThrowsScenarioError) {
  try {
    (void)ts::load_text(R"({"format": "tandem.scenario/1", "streems": []})", "t.json");
    FAIL() << "no throw";
  } catch (const ts::ScenarioError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "streems");
    EXPECT_NE(std::string(e.what()).find("did you mean 'streams'"), std::string::npos) << e.what();
  }
}

// Editors check a file against the JSON Schema its "$schema" names; the
// loader accepts the key at the top level only, as a string, and ignores it.
TEST(ScenarioLoader, TopLevelSchemaKeyIsAcceptedAndIgnored) {
  const auto sc = ts::load_text(R"({"$schema": "../schemas/tandem.scenario-1.schema.json",
      "format": "tandem.scenario/1", "name": "s", "steps": [{"op": "sleep", "us": 1}]})",
                                "s.json");
  EXPECT_EQ(sc.name, "s");
  EXPECT_EQ(sc.steps.size(), 1u);
  const auto not_string = ts::validate_text(R"({"$schema": 1, "format": "tandem.scenario/1"})", "n.json");
  ASSERT_FALSE(not_string.ok);
  EXPECT_NE(not_string.message().find("n.json: $schema: expected a string"), std::string::npos)
      << not_string.message();
  const auto in_step = ts::validate_text(
      R"({"format": "tandem.scenario/1", "steps": [{"op": "sleep", "us": 1, "$schema": "x"}]})", "t.json");
  ASSERT_FALSE(in_step.ok);
  EXPECT_NE(in_step.message().find("steps[0].$schema: unknown field '$schema'"), std::string::npos)
      << in_step.message();
}

namespace {

TEST(ScenarioLoader, AllocLenMayBeAFractionOfFreeMemory) {
  const auto sc = ts::load((data_dir() / "valid" / "08_fraction_of_free.json").string());
  const auto& big = sc.steps.at(0).steps.at(0);
  EXPECT_EQ(big.op, ts::Op::alloc);
  ASSERT_TRUE(big.len_fraction_of_free.has_value());
  EXPECT_DOUBLE_EQ(*big.len_fraction_of_free, 0.6);
  EXPECT_EQ(big.len, 0u);
  ASSERT_TRUE(sc.steps.at(1).len_fraction_of_free.has_value());
  EXPECT_DOUBLE_EQ(*sc.steps.at(1).len_fraction_of_free, 1.0);  // written 1: the bound is included
  // An integer len keeps meaning elements.
  EXPECT_FALSE(sc.steps.at(2).len_fraction_of_free.has_value());
  EXPECT_EQ(sc.steps.at(2).len, 16u);

  // Every error names its JSON path; the integer form's message is unchanged.
  const auto r = ts::validate_text(R"({"format": "tandem.scenario/1", "steps": [
      {"op": "alloc", "id": "a", "dtype": "u8", "len": {"fraction_of_free": 0}},
      {"op": "alloc", "id": "b", "dtype": "u8", "len": {"fraction_of_fre": 0.5}},
      {"op": "alloc", "id": "c", "dtype": "u8", "len": {"fraction_of_free": 1.0000001, "x": 1}},
      {"op": "alloc", "id": "d", "dtype": "u8", "len": "half"},
      {"op": "slice", "id": "e", "of": "a", "offset": 0, "len": {"fraction_of_free": 0.5}},
      {"op": "loop", "count": 1, "steps": [{"op": "alloc", "id": "f", "dtype": "u8", "len": {"fraction_of_free": "all"}}]}]})",
                                   "f.json");
  ASSERT_FALSE(r.ok);
  const std::string m = r.message();
  for (const char* line :
       {"f.json: steps[0].len.fraction_of_free: expected a number in (0, 1] (a fraction of the device's free "
        "memory), found number 0\n",
        "f.json: steps[1].len.fraction_of_fre: unknown len field 'fraction_of_fre' (did you mean "
        "'fraction_of_free'?); expected fraction_of_free\n",
        "f.json: steps[1].len.fraction_of_free: missing required field 'fraction_of_free' of a len object, "
        "e.g. {\"fraction_of_free\": 0.6}\n",
        "f.json: steps[2].len.x: unknown len field 'x'; expected fraction_of_free\n",
        "f.json: steps[2].len.fraction_of_free: expected a number in (0, 1] (a fraction of the device's free "
        "memory), found number 1.0000001\n",
        "f.json: steps[3].len: expected an integer in [0, 1099511627776], found string \"half\"\n",
        "f.json: steps[4].len: expected an integer in [0, 1099511627776] (the {\"fraction_of_free\": f} form "
        "is for alloc only), found an object\n",
        "f.json: steps[5].steps[0].len.fraction_of_free: expected a number in (0, 1] (a fraction of the "
        "device's free memory), found string \"all\"\n"})
    EXPECT_NE(m.find(line), std::string::npos) << line << "\n" << m;
  EXPECT_EQ(r.errors.size(), 8u) << m;
}

TEST(ScenarioLoader, StreamsMayNameTheirDeviceAndPlainNamesKeepTheScenarioDevice) {
  const auto sc = ts::load((data_dir() / "valid" / "07_multi_device.json").string());
  ASSERT_EQ(sc.streams.size(), 3u);
  EXPECT_EQ(sc.streams[1], "g0b");
  EXPECT_EQ(sc.stream_devices.at("s0"), 0u);
  EXPECT_EQ(sc.stream_devices.at("g0b"), 0u);
  EXPECT_EQ(sc.stream_devices.at("g1"), 1u);
  EXPECT_EQ(sc.devices, (std::set<std::uint32_t>{0, 1}));
  const auto& peer = sc.steps.at(2);
  EXPECT_EQ(peer.op, ts::Op::peer_access);
  EXPECT_EQ(peer.peer_devices[0], 0u);
  EXPECT_EQ(peer.peer_devices[1], 1u);
  EXPECT_FALSE(sc.steps.at(0).device.has_value());
  ASSERT_TRUE(sc.steps.at(1).device.has_value());
  EXPECT_EQ(*sc.steps.at(1).device, 1u);
  // A plain name follows the top-level `device`.
  const auto one = ts::load_text(
      R"({"format": "tandem.scenario/1", "device": 3, "streams": ["a", {"name": "b", "device": 0}],
      "steps": [{"op": "peer_access", "devices": [3, 5]}]})",
      "x.json");
  EXPECT_EQ(one.stream_devices.at("a"), 3u);
  EXPECT_EQ(one.stream_devices.at("b"), 0u);
  EXPECT_EQ(one.devices, (std::set<std::uint32_t>{0, 3, 5}));
}

}  // namespace

namespace {

// The op table is what the loader reads: every row's op is accepted, its
// required fields are demanded and exactly its fields are allowed.
TEST(ScenarioOpTable, TheLoaderAcceptsExactlyTheTablesOpsAndFields) {
  const nlohmann::ordered_json ops = ts::op_list_json();
  ASSERT_GE(ops.size(), 27U);
  for (const auto& op : ops) {
    const std::string name = op["op"];
    SCOPED_TRACE(name);
    nlohmann::json doc = {{"format", "tandem.scenario/1"}, {"steps", {{{"op", name}, {"zzz", 1}}}}};
    const ts::ValidationReport v = ts::validate_text(doc.dump(), "t.json");
    ASSERT_FALSE(v.ok);
    std::string expected = "; expected op, expect_error";
    std::size_t required = 0;
    for (const auto& f : op["fields"]) {
      expected += ", " + f["name"].get<std::string>();
      if (!f["required"].get<bool>()) continue;
      ++required;
      const std::string want =
          "missing required field '" + f["name"].get<std::string>() + "' for op '" + name + "'";
      bool found = false;
      for (const auto& d : v.errors) found = found || d.message == want;
      EXPECT_TRUE(found) << want << "\n" << v.message();
    }
    ASSERT_GE(v.errors.size(), 1 + required) << v.message();
    EXPECT_EQ(v.errors[0].path, "steps[0].zzz");
    EXPECT_EQ(v.errors[0].message, "unknown field 'zzz' for op '" + name + "'" + expected) << v.message();
  }
}

TEST(ScenarioOpTable, AnUnknownOpListsEveryRowOfTheTable) {
  const ts::ValidationReport v =
      ts::validate_text(R"({"format": "tandem.scenario/1", "steps": [{"op": "qqqqqqqq"}]})", "t.json");
  ASSERT_EQ(v.errors.size(), 1U);
  std::string names;
  for (const auto& op : ts::op_list_json())
    names += (names.empty() ? "" : ", ") + op["op"].get<std::string>();
  EXPECT_EQ(v.errors[0].message, "unknown op 'qqqqqqqq'; expected one of " + names);
}

}  // namespace
