// SPDX-License-Identifier: Apache-2.0
// ops/sync.cpp — waiting for work, time, loops and devices.
#include <thread>

#include "../engine.hpp"
#include "../json_reader.hpp"
#include "ops.hpp"
#include "tandem/errors.hpp"

namespace tandem::scenario::detail {

void read_wait(Reader& r, const json& j, const std::string& p, Step& s) {
  int n = 0;
  if (j.contains("id")) ++n;
  if (j.contains("stream")) ++n;
  if (auto it = j.find("all"); it != j.end()) {
    ++n;
    if (!it->is_boolean() || !it->get<bool>())
      r.expected(p + ".all", "true", *it);
    else
      s.wait_all = true;
  }
  if (n != 1)
    r.error(p, "wait takes exactly one of 'id', 'stream' or \"all\": true; found " + std::to_string(n));
}

void read_peer_access(Reader& r, const json& j, const std::string& p, Step& s) {
  auto it = j.find("devices");
  if (it == j.end()) return;  // reported as a missing required field
  if (!it->is_array() || it->size() != 2) {
    r.expected(p + ".devices", "an array of two device ordinals, e.g. [0, 1]", *it);
    return;
  }
  bool ok = true;
  const json& devices = *it;
  for (std::size_t i = 0; i < 2; ++i) {
    std::uint64_t d = 0;
    if (r.uint_in(devices.at(i), p + ".devices[" + std::to_string(i) + "]", 0, kMaxDevice, d))
      s.peer_devices[i] = static_cast<std::uint32_t>(d);
    else
      ok = false;
  }
  if (!ok) return;
  if (s.peer_devices[0] == s.peer_devices[1]) {
    r.error(p + ".devices", "peer access is between two different devices; found device " +
                                std::to_string(s.peer_devices[0]) + " twice");
    return;
  }
  r.step_devices.insert(s.peer_devices.begin(), s.peer_devices.end());
}
void exec_wait(Engine& e, const CompiledStep& s, ThreadState&) {
  const Step& st = *s.step;
  if (st.wait_all) {
    if (!e.session.settle(kLongWait))
      throw Error(ErrorCode::timeout, "waiting for all work: not settled after 10 minutes");
    return;
  }
  LaunchFuture f;
  std::string what;
  if (st.stream) {
    if (!e.handles.holds_stream(s.stream))
      HandleTable::refuse(ErrorCode::invalid_handle, "stream '" + *st.stream + "' was dropped");
    f = e.session.last_on(s.stream_index);
    what = "stream '" + *st.stream + "'";
  } else {
    f = e.handles.future(s.id);
    what = "future '" + st.id + "'";
  }
  if (f.valid() && !f.wait(kLongWait))
    throw Error(ErrorCode::timeout, "waiting for " + what + ": not done after 10 minutes");
}

void exec_retire(Engine& e, const CompiledStep& s, ThreadState&) {
  const auto timeout = std::chrono::milliseconds(s.step->timeout_ms.value_or(60'000));
  if (!e.session.settle(timeout)) {
    const RuntimeStats stats = e.session.total_stats();
    throw Error(ErrorCode::timeout, "retirement did not settle within " + std::to_string(timeout.count()) +
                                        " ms (" + std::to_string(stats.pending_submissions) +
                                        " submissions pending)");
  }
}

void exec_loop(Engine& e, const CompiledStep& s, ThreadState& t) {
  for (std::uint64_t i = 0; i < s.step->count; ++i)
    if (!e.run_steps(s.body, t)) throw BodyEnded{};
}

void exec_sleep(Engine&, const CompiledStep& s, ThreadState&) {
  std::this_thread::sleep_for(std::chrono::microseconds(s.step->us));
}

void exec_peer_access(Engine& e, const CompiledStep& s, ThreadState&) {
  const auto& d = s.step->peer_devices;
  e.session.ctx_of(d[0]).enable_peer_access(e.session.ctx_of(d[1]));
}

}  // namespace tandem::scenario::detail
