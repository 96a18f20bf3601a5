// SPDX-License-Identifier: Apache-2.0
#include "retire_profile.hpp"

#include <cstdio>

#include "tuning.hpp"

namespace tandem::detail {

const bool RetireProfile::on = tuning_value("TANDEM_RETIRE_PROFILE", 0, 0) != 0;

void RetireProfile::Total::add(std::uint64_t ns_taken) noexcept {
  count.fetch_add(1, std::memory_order_relaxed);
  ns.fetch_add(ns_taken, std::memory_order_relaxed);
  std::uint64_t m = max_ns.load(std::memory_order_relaxed);
  while (ns_taken > m) {
    if (max_ns.compare_exchange_weak(m, ns_taken, std::memory_order_relaxed)) {
      // Two longest at once may leave the other's time: a diagnostic's race.
      max_at_ns.store(now_ns(), std::memory_order_relaxed);
      break;
    }
  }
}

RetireProfile& retire_profile() noexcept {
  // Never destroyed: printed at exit. Out of memory at the first call ends
  // the process, as noexcept says.
  static RetireProfile* p = new RetireProfile();  // NOLINT(bugprone-unhandled-exception-at-new)
  return *p;
}

void RetireProfile::print() const noexcept {
  if (!on) return;
  const struct {
    const char* name;
    const Total& t;
  } rows[] = {{"sweep", sweep},
              {"query", query},
              {"settle", settle},
              {"host_free", host_free},
              {"stream_lock", stream_lock},
              {"marker", marker},
              {"drain", drain},
              {"nap_over", nap_over},
              {"between", between},
              {"help", help},
              {"event_create", event_create},
              {"alloc", alloc},
              {"submitter_drain", submitter_drain}};
  std::fprintf(stderr, "tandem-retire-profile {");
  bool first = true;
  for (const auto& r : rows) {
    const std::uint64_t at = r.t.max_at_ns.load();
    std::fprintf(stderr, "%s\"%s\": {\"count\": %llu, \"ms\": %.3f, \"max_us\": %.1f, \"max_at_ms\": %.1f}",
                 first ? "" : ", ", r.name, static_cast<unsigned long long>(r.t.count.load()),
                 static_cast<double>(r.t.ns.load()) / 1e6, static_cast<double>(r.t.max_ns.load()) / 1e3,
                 at > start_ns ? static_cast<double>(at - start_ns) / 1e6 : 0.0);
    first = false;
  }
  std::fprintf(stderr, "}\n");
}

}  // namespace tandem::detail
