// SPDX-License-Identifier: Apache-2.0
// tuning.hpp — knobs read once from the environment, for measuring the
// runtime's pacing on a given machine (docs/runtime.md, "Tuning"). A
// malformed or missing value keeps the default: a typo in a tuning knob
// should not end the process.
#pragma once

#include <cstdint>

namespace tandem::detail {

// Part `which` (0-based) of the comma-separated integers in `var`, or
// `fallback` when the variable, that part, or its number is missing.
std::int64_t tuning_value(const char* var, int which, std::int64_t fallback) noexcept;

// TANDEM_HOST_PROVEN_RELEASE=1: every release waits for host proof (no
// stream-ordered release, whatever ContextOptions say), to measure one
// against the other. Read once.
bool host_proven_release_forced() noexcept;

// Whether a context keeps spare allocation records (allocation_bin.hpp):
// off under AddressSanitizer, which must see each record freed, and with
// TANDEM_ALLOCATION_BIN=0, to measure one against the other.
bool allocation_bin_on() noexcept;

// Whether an allocation takes the block of a same-size release pending on
// its stream (StreamState::drain_releases' `wanted`): on unless
// TANDEM_SAME_STREAM_REUSE=0, to measure one against the other or to
// have every allocation come from the pool. Read once.
bool same_stream_reuse_on() noexcept;

}  // namespace tandem::detail
