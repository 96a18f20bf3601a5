// SPDX-License-Identifier: Apache-2.0
// The report's sampled timeline and latency histograms (run_record.hpp,
// timeline.hpp): bounded, evenly spaced, every sample in a bin.
#include "timeline.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "run_record.hpp"
#include "tandem/latency_histogram.hpp"
#include "tandem/scenario/executor.hpp"
#include "tandem/scenario/loader.hpp"

namespace tandem::scenario::detail {
namespace {

TimelineSample at(double t, std::uint64_t live) { return {t, live, live / 2, 1}; }

TEST(ReportTimeline, NeverHoldsMoreThanItsBoundAndKeepsTheSamplesEvenlySpaced) {
  Timeline tl(std::chrono::milliseconds(1));
  double last_t = 0;
  for (int added = 0; added < 3000; ++added) {  // a long run: tick k at k ms (~2^23 ticks)
    const std::uint64_t tick = tl.next_tick();
    last_t = static_cast<double>(tick) * 1e-3;
    tl.add(at(last_t, tick));
    ASSERT_LT(tl.samples().size(), Timeline::kMaxSamples);
  }
  const auto& s = tl.samples();
  ASSERT_GE(s.size(), Timeline::kMaxSamples / 2);
  const double step = s[1].t_s - s[0].t_s;
  EXPECT_DOUBLE_EQ(step, std::chrono::duration<double>(tl.interval()).count());
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_NEAR(s[i].t_s - s[i - 1].t_s, step, 1e-9) << i;
  // The series spans the run: its last sample is at most an interval before
  // the last one added.
  EXPECT_GT(last_t, 1000.0);
  EXPECT_GE(s.back().t_s, last_t - step);
}

TEST(ReportTimeline, KeepsTheEndSampleEvenWhenFull) {
  Timeline tl(std::chrono::microseconds(500));
  for (std::size_t i = 0; i < Timeline::kMaxSamples - 1; ++i) tl.add(at(static_cast<double>(i), 1));
  tl.add_last(at(1e6, 7));
  ASSERT_LE(tl.samples().size(), Timeline::kMaxSamples);
  EXPECT_EQ(tl.samples().back().live_bytes, 7U);
  tl.add(at(2e6, 9));  // nothing after the end
  EXPECT_EQ(tl.samples().back().live_bytes, 7U);
  const auto j = tl.json();
  EXPECT_EQ(j["t_s"].size(), tl.samples().size());
  EXPECT_EQ(j["in_flight_bytes"].size(), tl.samples().size());
}

TEST(ReportHistogram, EverySampleLiesInItsBinAndTheBinsAreContiguous) {
  LatencyHistogram h;
  const std::uint64_t values[] = {0, 3, 9, 63, 64, 100, 1000, 1000, 5000, 123456, 9999999};
  for (const std::uint64_t v : values) h.record(v);
  const auto j = histogram_json(h, 1.0);
  const auto& b = j["bounds"];
  const auto& c = j["counts"];
  ASSERT_EQ(b.size(), c.size() + 1);
  ASSERT_LE(c.size(), 240U);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_LT(b[i].get<double>(), b[i + 1].get<double>()) << i;
    total += c[i].get<std::uint64_t>();
  }
  EXPECT_EQ(total, h.count());
  for (const std::uint64_t v : values) {
    std::uint64_t in_bin = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (static_cast<double>(v) >= b[i].get<double>() && static_cast<double>(v) < b[i + 1].get<double>())
        in_bin = c[i].get<std::uint64_t>();
    }
    EXPECT_GT(in_bin, 0U) << v;
  }
  EXPECT_EQ(histogram_json(LatencyHistogram{}, 1.0)["counts"].size(), 0U);
}

TEST(ReportTimeline, ARunReportsItsTimelineAndHistograms) {
  const Scenario s = load_text(R"({"format": "tandem.scenario/1", "backend": "sim", "streams": ["s0"],
    "sim": {"stream_delay_us": {"s0": 50000}},
    "steps": [{"op": "alloc", "id": "a", "dtype": "f32", "len": 1024, "init": "zero"},
              {"op": "launch", "model": "simt", "kernel": "scale", "stream": "s0", "args": {"x": "a"},
               "scalars": {"a": 2}},
              {"op": "drop", "id": "a"}]})",
                               "timeline.json");
  const RunResult r = run(s, {});
  ASSERT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  const auto& tl = r.report["timeline"];
  ASSERT_TRUE(tl.is_object()) << r.report.dump(2);
  ASSERT_GE(tl["t_s"].size(), 2U);
  // The dropped buffer is held by its launch for the 50 ms delay: some sample
  // sees it in flight, and the last sees nothing live.
  std::uint64_t most_in_flight = 0;
  for (const auto& v : tl["in_flight_bytes"])
    most_in_flight = std::max(most_in_flight, v.get<std::uint64_t>());
  EXPECT_GE(most_in_flight, 4096U) << tl.dump();
  EXPECT_EQ(tl["live_bytes"].back().get<std::uint64_t>(), 0U);
  const auto& retire = r.report["throughput"]["retire_latency_us"];
  std::uint64_t n = 0;
  for (const auto& c : retire["histogram"]["counts"]) n += c.get<std::uint64_t>();
  EXPECT_EQ(n, retire["samples"].get<std::uint64_t>());
}

TEST(ReportTimeline, ARunWithTheTimelineOffHasNone) {
  const Scenario s = load_text(R"({"format": "tandem.scenario/1", "backend": "sim", "streams": ["s0"],
    "steps": [{"op": "alloc", "id": "a", "dtype": "f32", "len": 1024, "init": "zero"},
              {"op": "drop", "id": "a"}]})",
                               "no-timeline.json");
  RunOptions o;
  o.timeline = false;
  const RunResult r = run(s, o);
  ASSERT_EQ(r.outcome, Outcome::pass) << r.report.dump(2);
  EXPECT_FALSE(r.report.contains("timeline")) << r.report.dump(2);
  EXPECT_TRUE(run(s, {}).report.contains("timeline"));
}

}  // namespace
}  // namespace tandem::scenario::detail
