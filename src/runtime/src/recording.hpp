// SPDX-License-Identifier: Apache-2.0
// recording.hpp — the process's one recording into a file (docs/runtime.md
// "Recording"): started by TANDEM_RECORD before main, or by a context
// created with ContextOptions::record_to.
#pragma once

#include <string>

namespace tandem::detail {

// Starts the recording into `path`, or joins the one already recording into
// the same file. Throws Error(unsupported) naming both files when another
// file is being recorded.
void join_context_recording(const std::string& path);
// A context that joined is gone: when it was the last, and TANDEM_RECORD
// did not start the recording, the file is written and recording stops.
void leave_context_recording() noexcept;

}  // namespace tandem::detail
