// SPDX-License-Identifier: Apache-2.0
// sanitizers.hpp — which sanitizer a test build runs under: TANDEM_TEST_ASAN
// and TANDEM_TEST_TSAN (GCC's __SANITIZE_*__ or Clang's __has_feature).
//
// LeakSanitizer: a forgotten LaunchFuture leaks its submission record and a
// quarantined allocation is retained forever, both by contract (spec §6,
// launch_future.hpp). Tests that do so on purpose either disable leak
// reporting for what they allocate (IntentionalLeakScope) or leave it out
// of ASan builds.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TANDEM_TEST_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define TANDEM_TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TANDEM_TEST_ASAN)
#define TANDEM_TEST_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(TANDEM_TEST_TSAN)
#define TANDEM_TEST_TSAN 1
#endif
