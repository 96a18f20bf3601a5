// SPDX-License-Identifier: Apache-2.0
// step_folding.cpp — see step_folding.hpp.
#include "step_folding.hpp"

#include <algorithm>
#include <cstddef>

namespace tandem::detail {

namespace {

constexpr std::size_t kMaxBlock = 64;
constexpr std::size_t kMinRepeats = 3;

bool same_block(const std::vector<std::string>& s, std::size_t a, std::size_t b, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i)
    if (s[a + i] != s[b + i]) return false;
  return true;
}

}  // namespace

std::vector<std::string> fold_repeats(const std::vector<std::string>& steps) {
  std::vector<std::string> out;
  const std::size_t n = steps.size();
  std::size_t i = 0;
  while (i < n) {
    std::size_t best_len = 0, best_count = 0;
    for (std::size_t len = 1; len <= kMaxBlock && i + len * kMinRepeats <= n; ++len) {
      std::size_t count = 1;
      while (i + (count + 1) * len <= n && same_block(steps, i, i + count * len, len)) ++count;
      if (count >= kMinRepeats && count * len > best_count * best_len) {
        best_len = len;
        best_count = count;
      }
    }
    if (best_len == 0) {
      out.push_back(steps[i++]);
      continue;
    }
    std::string loop = "{\"op\": \"loop\", \"count\": " + std::to_string(best_count) + ", \"steps\": [";
    for (std::size_t k = 0; k < best_len; ++k) loop += (k ? ", " : "") + steps[i + k];
    out.push_back(loop + "]}");
    i += best_count * best_len;
  }
  return out;
}

}  // namespace tandem::detail
