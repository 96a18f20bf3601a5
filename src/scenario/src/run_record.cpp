// SPDX-License-Identifier: Apache-2.0
#include "run_record.hpp"

#include <bit>
#include <map>

namespace tandem::scenario::detail {

namespace {

// The report's bins: 4 per power of two (8 wide below 64), the histogram's
// own 32 per octave merged, so that a report holds at most ~240 of them.
std::uint64_t bin_lower(std::uint64_t v) {
  if (v < 64) return v & ~std::uint64_t{7};
  const int e = 63 - std::countl_zero(v);
  return v & ~((std::uint64_t{1} << (e - 2)) - 1);
}
std::uint64_t bin_upper(std::uint64_t lo) {
  if (lo < 64) return lo + 8;
  const int e = 63 - std::countl_zero(lo);
  const std::uint64_t hi = lo + (std::uint64_t{1} << (e - 2));
  return hi < lo ? ~std::uint64_t{0} : hi;
}

}  // namespace

ojson histogram_json(const LatencyHistogram& h, double unit_per_sample) {
  std::map<std::uint64_t, std::uint64_t> bins;  // lower bound -> count
  h.for_each_bucket([&bins](std::uint64_t lo, std::uint64_t, std::uint64_t n) { bins[bin_lower(lo)] += n; });
  ojson bounds = ojson::array(), counts = ojson::array();
  if (!bins.empty()) {
    // Every bin from the first non-empty one to the last, the empty ones too:
    // bin i is [bounds[i], bounds[i + 1]).
    const std::uint64_t last = bins.rbegin()->first;
    std::uint64_t lo = bins.begin()->first;
    for (;;) {
      bounds.push_back(static_cast<double>(lo) * unit_per_sample);
      const auto it = bins.find(lo);
      counts.push_back(it == bins.end() ? 0 : it->second);
      const std::uint64_t hi = bin_upper(lo);
      if (lo == last || hi <= lo) {
        bounds.push_back(static_cast<double>(hi) * unit_per_sample);
        break;
      }
      lo = hi;
    }
  }
  return {{"bounds", std::move(bounds)}, {"counts", std::move(counts)}};
}

namespace {

ojson latency_us(const LatencyHistogram* h) {
  if (h == nullptr) return {{"p50", 0.0}, {"p99", 0.0}, {"max", 0.0}, {"samples", 0}};
  auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  return {{"p50", us(h->quantile(0.50))},
          {"p99", us(h->quantile(0.99))},
          {"max", us(h->max())},
          {"samples", h->count()},
          {"histogram", histogram_json(*h, 1e-3)}};
}

ojson checks_json(const RunRecord& r) {
  ojson checks = ojson::array();
  for (const CheckRecord& c : r.checks) {
    checks.push_back({{"step", c.step},
                      {"what", c.what},
                      {"expected", c.expected},
                      {"actual", c.actual},
                      {"ok", c.ok},
                      {"repetition", c.repetition}});
  }
  return checks;
}

ojson errors_json(const RunRecord& r) {
  ojson errors = ojson::array();
  for (const ErrorRecord& e : r.errors) {
    errors.push_back({{"step", e.step},
                      {"op", e.op},
                      {"code", e.code},
                      {"message", e.message},
                      {"repetition", e.repetition}});
  }
  return errors;
}

ojson submit_json(const RunRecord& r) {
  if (r.submit_ns == nullptr) return {{"p50", 0}, {"p99", 0}, {"max", 0}};
  auto ns = [&r](std::uint64_t ticks) {
    return static_cast<std::uint64_t>(static_cast<double>(ticks) * r.submit_ns_per_tick + 0.5);
  };
  return {{"p50", ns(r.submit_ns->quantile(0.50))},
          {"p99", ns(r.submit_ns->quantile(0.99))},
          {"max", ns(r.submit_ns->max())},
          {"histogram", histogram_json(*r.submit_ns, r.submit_ns_per_tick)}};
}

ojson vram_json(const VramRecord& v) {
  return ojson{{"baseline_free", v.baseline_free},
               {"final_free", v.final_free},
               {"delta", v.delta},
               {"tolerance", v.tolerance},
               {"ok", v.ok},
               {"checked", v.checked}};
}

ojson vram_json(const RunRecord& r) {
  ojson vram = vram_json(r.vram);
  if (!r.vram_devices.empty()) {  // several devices: each one's figures
    ojson devices = ojson::array();
    for (const auto& [d, v] : r.vram_devices) {
      ojson e = vram_json(v);
      e["device"] = d;
      devices.push_back(std::move(e));
    }
    vram["devices"] = std::move(devices);
  }
  return vram;
}

}  // namespace

ojson report_json(const RunRecord& r) {
  const ojson checks = checks_json(r), errors = errors_json(r), submit = submit_json(r), vram = vram_json(r);
  const double lps = r.body_seconds > 0 ? static_cast<double>(r.launches) / r.body_seconds : 0.0;
  ojson report = {{"format", "tandem.report/1"},
                  {"tool", r.tool},
                  {"scenario", r.scenario},
                  {"backend", r.backend},
                  {"device", r.device},
                  {"runtime", r.runtime},
                  {"status", r.status},
                  {"duration_s", r.duration_s},
                  {"setup_s", r.setup_s},
                  {"body_s", r.body_seconds},
                  {"settle_s", r.settle_s},
                  {"repetitions", r.repetitions},
                  {"checks", checks},
                  {"errors", errors},
                  {"skipped", r.skipped},
                  {"leaks",
                   {{"live_allocations", r.live_allocations},
                    {"live_bytes", r.live_bytes},
                    {"quarantined_allocations", r.quarantined_allocations},
                    {"quarantined_bytes", r.quarantined_bytes},
                    {"foreign_owners_unreleased", r.foreign_owners_unreleased}}},
                  {"uniqueness",
                   {{"checks", r.uniqueness_checks},
                    {"failures", r.uniqueness_failures},
                    {"runtime_checks", r.runtime_uniqueness_checks}}},
                  {"vram", vram},
                  {"throughput",
                   {{"submissions", r.submissions},
                    {"launches", r.launches},
                    {"launches_per_s", lps},
                    {"bytes_moved", r.bytes_moved},
                    {"retired", r.retired},
                    {"retire_latency_us", latency_us(r.retire_ns)},
                    {"submit_ns", submit}}},
                  {"violations", r.violations},
                  {"notes", r.notes},
                  {"step_latency_ns", r.step_latency_ns},
                  {"step_notes", r.step_notes}};
  if (!r.timeline.is_null()) report["timeline"] = r.timeline;
  return report;
}

}  // namespace tandem::scenario::detail
