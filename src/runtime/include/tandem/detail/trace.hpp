// SPDX-License-Identifier: Apache-2.0
// tandem/detail/trace.hpp — a debugging trace of the runtime's lease and
// retirement decisions, compiled in only with -DTANDEM_TRACE=ON (CMake) and
// printed only when the environment sets TANDEM_TRACE=1. A CUDA-only
// ordering bug cannot be stepped through; a trace of which event proved
// what, with the submission and allocation ids, can be read afterwards.
#pragma once

#ifdef TANDEM_RUNTIME_TRACE
namespace tandem::detail {
[[gnu::format(printf, 1, 2)]] void trace_line(const char* fmt, ...) noexcept;
}  // namespace tandem::detail
#define TANDEM_TRACE(...) ::tandem::detail::trace_line(__VA_ARGS__)
#else
#define TANDEM_TRACE(...) ((void)0)
#endif
