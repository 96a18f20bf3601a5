// SPDX-License-Identifier: Apache-2.0
// tandem/base/sanitizers.hpp — which sanitizer this translation unit is
// built under: TANDEM_ASAN and TANDEM_TSAN are 1 or undefined (GCC's
// __SANITIZE_*__ or Clang's __has_feature). The runtime keeps no spare
// allocation records under ASan (allocation_bin.hpp), tandem_bench counts
// no heap under either, and tests leave out what a sanitizer cannot run.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TANDEM_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define TANDEM_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TANDEM_ASAN)
#define TANDEM_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(TANDEM_TSAN)
#define TANDEM_TSAN 1
#endif
