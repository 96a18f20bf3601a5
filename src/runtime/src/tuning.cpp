// SPDX-License-Identifier: Apache-2.0
#include "tuning.hpp"

#include <cstdlib>
#include <exception>
#include <string>

#include "tandem/base/sanitizers.hpp"

namespace tandem::detail {

std::int64_t tuning_value(const char* var, int which, std::int64_t fallback) noexcept {
  const char* v = std::getenv(var);
  if (!v) return fallback;
  try {
    std::string part(v);
    for (int i = 0; i < which; ++i) {
      const auto comma = part.find(',');
      part = comma == std::string::npos ? std::string() : part.substr(comma + 1);
    }
    part = part.substr(0, part.find(','));
    return part.empty() ? fallback : std::stoll(part);
  } catch (const std::exception&) {
    return fallback;
  }
}

bool host_proven_release_forced() noexcept {
  static const bool forced = tuning_value("TANDEM_HOST_PROVEN_RELEASE", 0, 0) != 0;
  return forced;
}

bool allocation_bin_on() noexcept {
#if defined(TANDEM_ASAN)
  return false;
#else
  static const bool on = tuning_value("TANDEM_ALLOCATION_BIN", 0, 1) != 0;
  return on;
#endif
}

bool same_stream_reuse_on() noexcept {
  static const bool on = tuning_value("TANDEM_SAME_STREAM_REUSE", 0, 1) != 0;
  return on;
}

}  // namespace tandem::detail
