// SPDX-License-Identifier: Apache-2.0
// tandem/multi_stream_release.hpp — how a context releases a pool
// allocation whose last view is dropped while submissions on SEVERAL of its
// streams still lease it (spec/runtime.md §6, docs/runtime.md "Several
// streams"). Memory leased on one stream only is always freed on that
// stream behind the work; foreign and graph-held memory is always
// host-proven. Neither mode ever makes a stream the user owns wait on
// another stream's work.
//
//   host_proven     the free waits until retirement has proven every lease
//                   done, then goes on the allocation's birth stream
//   release_stream  the free goes at once (from the retirement thread or the
//                   next allocating thread) on a stream of the context's
//                   own, behind a wait on each lease stream's covering
//                   event; it counts as freed once proven executed there
//
// Spelled "host_proven" and "release_stream" in TANDEM_MULTI_STREAM_RELEASE
// and in the scenario report's `runtime`.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tandem {

enum class MultiStreamRelease : std::uint8_t { host_proven, release_stream };

inline constexpr MultiStreamRelease kAllMultiStreamReleases[] = {MultiStreamRelease::host_proven,
                                                                 MultiStreamRelease::release_stream};

[[nodiscard]] constexpr std::string_view multi_stream_release_name(MultiStreamRelease m) noexcept {
  switch (m) {
    case MultiStreamRelease::host_proven:
      return "host_proven";
    case MultiStreamRelease::release_stream:
      return "release_stream";
  }
  return "?";
}

// The inverse of multi_stream_release_name; nullopt for any other text.
[[nodiscard]] constexpr std::optional<MultiStreamRelease> parse_multi_stream_release(
    std::string_view text) noexcept {
  for (MultiStreamRelease m : kAllMultiStreamReleases) {
    if (multi_stream_release_name(m) == text) return m;
  }
  return std::nullopt;
}

}  // namespace tandem
