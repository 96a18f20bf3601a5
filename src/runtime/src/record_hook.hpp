// SPDX-License-Identifier: Apache-2.0
// record_hook.hpp — how runtime calls reach the installed Recorder
// (tandem/recorder.hpp). Off, a hook costs one load of a pointer and a
// predicted branch; acquire because the hook then reads the Recorder the
// installing thread built (on x86 an acquire load is a plain load).
#pragma once

#include <atomic>
#include <chrono>

#include "tandem/recorder.hpp"

namespace tandem::detail {

extern std::atomic<Recorder*> g_recorder;
extern thread_local int t_record_paused;

[[nodiscard]] inline Recorder* active_recorder() noexcept {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  if (r == nullptr) [[likely]]
    return nullptr;
  return t_record_paused == 0 ? r : nullptr;
}

// A wait for retirement (Context's or Platform's) that returned `settled`,
// told after it returned: the waiting thread made no other call meanwhile.
inline void record_retirement_wait(bool settled, std::chrono::nanoseconds timeout) {
  if (Recorder* r = active_recorder()) [[unlikely]] {
    r->on_wait_retirement();
    if (!settled) r->on_retirement_wait_timed_out(timeout);
  }
}

// Silences the hooks on this thread while the runtime makes and drops
// views of its own (a strided read-back's covering range): they are no
// calls of the user's and must not appear in a recording.
class RecordPause {
 public:
  RecordPause() noexcept { ++t_record_paused; }
  ~RecordPause() { --t_record_paused; }
  RecordPause(const RecordPause&) = delete;
  RecordPause& operator=(const RecordPause&) = delete;
};

}  // namespace tandem::detail
