// SPDX-License-Identifier: Apache-2.0
#include "tandem/detail/trace.hpp"

#ifdef TANDEM_RUNTIME_TRACE
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

namespace tandem::detail {

void trace_line(const char* fmt, ...) noexcept {
  static const bool on = [] {
    const char* v = std::getenv("TANDEM_TRACE");
    return v != nullptr && v[0] != '\0' && v[0] != '0';
  }();
  if (!on) return;
  static const auto t0 = std::chrono::steady_clock::now();
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  char body[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  const auto tid = std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000;
  std::fprintf(stderr, "[trace %9lld us t%03zu] %s\n", static_cast<long long>(us), tid, body);
}

}  // namespace tandem::detail
#endif
