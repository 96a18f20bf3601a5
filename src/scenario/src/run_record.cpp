#include "run_record.hpp"

namespace tandem::scenario::detail {

namespace {

ojson latency_us(const LatencyHistogram* h) {
  if (h == nullptr) return {{"p50", 0.0}, {"p99", 0.0}, {"max", 0.0}, {"samples", 0}};
  auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  return {{"p50", us(h->quantile(0.50))}, {"p99", us(h->quantile(0.99))}, {"max", us(h->max())},
          {"samples", h->count()}};
}

}  // namespace

ojson report_json(const RunRecord& r) {
  ojson checks = ojson::array();
  for (const CheckRecord& c : r.checks) {
    checks.push_back({{"step", c.step}, {"what", c.what}, {"expected", c.expected}, {"actual", c.actual},
                      {"ok", c.ok}, {"repetition", c.repetition}});
  }
  ojson errors = ojson::array();
  for (const ErrorRecord& e : r.errors) {
    errors.push_back({{"step", e.step}, {"op", e.op}, {"code", e.code}, {"message", e.message},
                      {"repetition", e.repetition}});
  }
  ojson submit = {{"p50", 0}, {"p99", 0}, {"max", 0}};
  if (r.submit_ns != nullptr) {
    auto ns = [&r](std::uint64_t ticks) {
      return static_cast<std::uint64_t>(static_cast<double>(ticks) * r.submit_ns_per_tick + 0.5);
    };
    submit = {{"p50", ns(r.submit_ns->quantile(0.50))}, {"p99", ns(r.submit_ns->quantile(0.99))},
              {"max", ns(r.submit_ns->max())}};
  }
  const double lps = r.body_seconds > 0 ? static_cast<double>(r.launches) / r.body_seconds : 0.0;
  auto vram_json = [](const VramRecord& v) {
    return ojson{{"baseline_free", v.baseline_free}, {"final_free", v.final_free}, {"delta", v.delta},
                 {"tolerance", v.tolerance}, {"ok", v.ok}, {"checked", v.checked}};
  };
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
  return {{"format", "tandem.report/1"},
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
          {"leaks", {{"live_allocations", r.live_allocations}, {"live_bytes", r.live_bytes},
                     {"quarantined_allocations", r.quarantined_allocations},
                     {"quarantined_bytes", r.quarantined_bytes},
                     {"foreign_owners_unreleased", r.foreign_owners_unreleased}}},
          {"uniqueness", {{"checks", r.uniqueness_checks}, {"failures", r.uniqueness_failures},
                          {"runtime_checks", r.runtime_uniqueness_checks}}},
          {"vram", vram},
          {"throughput", {{"submissions", r.submissions}, {"launches", r.launches},
                          {"launches_per_s", lps}, {"bytes_moved", r.bytes_moved}, {"retired", r.retired},
                          {"retire_latency_us", latency_us(r.retire_ns)}, {"submit_ns", submit}}},
          {"violations", r.violations},
          {"notes", r.notes},
          {"step_latency_ns", r.step_latency_ns},
          {"step_notes", r.step_notes}};
}

}  // namespace tandem::scenario::detail
