// SPDX-License-Identifier: Apache-2.0
// ids.hpp — process-unique identities (never reused in a process).
#pragma once

#include <atomic>
#include <cstdint>

namespace tandem::detail {

enum class IdKind : std::uint8_t { allocation, submission, stream, context, graph };

// Ids start at 1; 0 means "none". Submission and allocation ids come from
// per-thread blocks: they increase along each thread, in no order across
// threads.
std::uint64_t next_id(IdKind kind) noexcept;

}  // namespace tandem::detail
