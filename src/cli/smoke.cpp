#include "smoke.hpp"

#include <chrono>
#include <cstring>
#include <vector>

#include "tandem/scenario/device_json.hpp"
#include "tandem/context.hpp"
#include "tandem/errors.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"

namespace tandem::cli {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

struct Checks {
  json list = json::array();
  bool ok = true;
  template <class T>
  void add(const char* what, const T& expected, const T& actual) {
    const bool pass = expected == actual;
    ok = ok && pass;
    list.push_back({{"what", what}, {"expected", expected}, {"actual", actual}, {"ok", pass}});
  }
};

// Fills each buffer with its cycle number, reads one back, forgets the
// futures, drops the buffers while transfers may still be in flight.
void cycle_buffers(const Stream& s, const SmokeOptions& o, Checks& checks, std::uint64_t& submissions) {
  std::vector<std::byte> expect(o.buffer_bytes);
  bool contents_ok = true;
  for (int i = 0; i < o.cycles; ++i) {
    View buf = allocate(s, DType::u8, o.buffer_bytes);
    std::move(memset_bytes(s, buf, static_cast<std::uint8_t>(i))).forget();
    ++submissions;
    if (i % 16 == 15) {
      std::memset(expect.data(), i, expect.size());
      contents_ok = contents_ok && read_back(s, buf) == expect;
      ++submissions;
    }
  }
  checks.add("contents after memset", true, contents_ok);
}

// Reject policy: a write on another stream to bytes an in-flight write holds
// is refused (or, if that write already completed, accepted); once the first
// write has retired, the same write must be accepted.
void conflicts(const Device& dev, Checks& checks) {
  Context reject = Context::create(dev, {ConflictPolicy::reject});
  Stream a = Stream::create(reject), b = Stream::create(reject);
  View buf = allocate(a, DType::u8, 4096);
  LaunchFuture first = memset_bytes(a, buf, 1);
  bool rejected = false;
  try {
    (void)memset_bytes(b, buf, 2);
  } catch (const ConflictError&) {
    rejected = true;
  }
  checks.add("conflicting write rejected unless the first had already retired", true,
             rejected || first.done());
  checks.add("first write retired", true, first.wait(std::chrono::seconds(30)));
  bool accepted = true;
  try {
    (void)memset_bytes(b, buf, 3);
  } catch (const Error&) {
    accepted = false;
  }
  checks.add("same write accepted after retirement", true, accepted);
  reject.wait_for_retirement(std::chrono::seconds(30));
}

}  // namespace

json run_smoke(const Device& device, const SmokeOptions& o) {
  const auto start = Clock::now();
  Checks checks;
  json errors = json::array();
  std::uint64_t submissions = 0;
  Context ctx = Context::create(device);
  ctx.trim();
  const MemoryInfo baseline = ctx.memory_info();
  MemoryInfo final_mem = baseline;
  bool settled = false;
  try {
    {
      Stream s = Stream::create(ctx);
      cycle_buffers(s, o, checks, submissions);
    }
    // The baseline covers this context's pool only: measure before anything
    // else (another context has a pool of its own) allocates.
    settled = ctx.wait_for_retirement(std::chrono::seconds(60));
    ctx.trim();
    final_mem = ctx.memory_info();
    Stream s = Stream::create(ctx);
    View kept = allocate(s, DType::f32, 256);
    checks.add("unique buffer is unique", true, kept.is_unique());
    View slice = kept.slice(0, 128);
    checks.add("sliced buffer is not unique", false, kept.is_unique());
    conflicts(device, checks);
  } catch (const Error& e) {
    errors.push_back({{"code", std::string(error_code_name(e.code()))}, {"message", e.what()}});
  }
  settled = ctx.wait_for_retirement(std::chrono::seconds(60)) && settled;
  const RuntimeStats st = ctx.stats();
  const auto delta = static_cast<std::int64_t>(baseline.free_bytes) - static_cast<std::int64_t>(final_mem.free_bytes);
  const bool vram_ok = (delta < 0 ? -delta : delta) <= static_cast<std::int64_t>(o.vram_tolerance);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  checks.add("retirement settled", true, settled);
  const bool pass = checks.ok && errors.empty() && vram_ok && st.live_allocations == 0 &&
                    st.quarantined_allocations == 0 && st.foreign_owners_unreleased == 0;
  return {{"format", "tandem.report/1"},
          {"tool", {{"name", "tandem"}, {"version", TANDEM_VERSION}, {"git", TANDEM_GIT}}},
          {"scenario", {{"name", "smoke"}, {"file", nullptr}}},
          {"backend", std::string(device.platform().backend_name())},
          {"device", scenario::device_json(device)},
          {"status", pass ? "pass" : "fail"},
          {"duration_s", seconds},
          {"checks", checks.list},
          {"errors", errors},
          {"leaks", {{"live_allocations", st.live_allocations}, {"live_bytes", st.live_bytes},
                     {"quarantined_allocations", st.quarantined_allocations},
                     {"quarantined_bytes", st.quarantined_bytes},
                     {"foreign_owners_unreleased", st.foreign_owners_unreleased}}},
          {"uniqueness", {{"checks", st.uniqueness_checks}, {"failures", 0}}},
          {"vram", {{"baseline_free", baseline.free_bytes}, {"final_free", final_mem.free_bytes},
                    {"delta", delta}, {"tolerance", o.vram_tolerance}, {"ok", vram_ok}}},
          {"throughput", {{"submissions", submissions}, {"retired", st.retired_submissions},
                          {"submissions_per_s", seconds > 0 ? submissions / seconds : 0.0}}},
          {"violations", json::array()}};
}

}  // namespace tandem::cli
