// SPDX-License-Identifier: Apache-2.0
// recording.cpp — see recording.hpp. One ScenarioWriter at a time: the
// Recorder hook is process-wide, so two recordings would each see every
// call and neither could be replayed alone.
#include "recording.hpp"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <vector>

#include "record_hook.hpp"
#include "scenario_writer.hpp"
#include "tandem/errors.hpp"

namespace tandem::detail {

namespace {

struct Recording {
  std::mutex mu;
  // Never destroyed once made: a hook may still be running on another
  // thread when the recording stops.
  ScenarioWriter* writer = nullptr;
  // Writers whose recording ended: kept (reachable, for LeakSanitizer too)
  // because a hook that loaded one may still be running.
  std::vector<ScenarioWriter*> finished;
  std::string path;  // as asked
  std::string key;   // absolute and normalised: what "the same file" compares
  bool from_env = false;
  int contexts = 0;  // contexts that asked for it and are not destroyed yet
  bool at_exit = false;
};

Recording& recording() {
  static Recording* r = new Recording;  // never destroyed: contexts may go during exit
  return *r;
}

std::string key_of(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

// Under r.mu: stops recording and writes the file.
void finish(Recording& r) {
  if (r.writer == nullptr) return;
  Recorder* mine = r.writer;
  g_recorder.compare_exchange_strong(mine, nullptr, std::memory_order_acq_rel);  // not someone else's
  r.writer->write_file();
  r.finished.push_back(r.writer);
  r.writer = nullptr;
  r.path.clear();
  r.key.clear();
  r.from_env = false;
  r.contexts = 0;
}

void write_at_exit() {
  Recording& r = recording();
  const std::lock_guard lock(r.mu);
  finish(r);
}

// Under r.mu.
void start(Recording& r, const std::string& path, bool from_env) {
  r.writer = new ScenarioWriter(path);
  r.path = path;
  r.key = key_of(path);
  r.from_env = from_env;
  install_recorder(r.writer);
  if (!r.at_exit) r.at_exit = std::atexit(write_at_exit) == 0;
}

// TANDEM_RECORD: made before main, written at exit.
const bool g_env_recording = [] {
  const char* path = std::getenv("TANDEM_RECORD");
  if (path == nullptr || *path == '\0') return false;
  Recording& r = recording();
  const std::lock_guard lock(r.mu);
  start(r, path, true);
  return true;
}();

}  // namespace

void join_context_recording(const std::string& path) {
  Recording& r = recording();
  const std::lock_guard lock(r.mu);
  if (r.writer == nullptr) {
    start(r, path, false);
  } else if (key_of(path) != r.key) {
    throw Error(ErrorCode::unsupported, "ContextOptions::record_to asks to record into '" + path +
                                            "' while this process records into '" + r.path + "' (" +
                                            (r.from_env ? "TANDEM_RECORD" : "another context's record_to") +
                                            "): a process records into one file at a time");
  }
  ++r.contexts;
}

void leave_context_recording() noexcept {
  Recording& r = recording();
  const std::lock_guard lock(r.mu);
  if (r.writer == nullptr || r.contexts == 0) return;  // written already (at exit)
  if (--r.contexts == 0 && !r.from_env) finish(r);
}

}  // namespace tandem::detail
