// SPDX-License-Identifier: Apache-2.0
// sanitizers.hpp — which sanitizer a test build runs under: TANDEM_TEST_ASAN
// and TANDEM_TEST_TSAN (tandem/base/sanitizers.hpp).
//
// LeakSanitizer: a forgotten LaunchFuture leaks its submission record and a
// quarantined allocation is retained forever, both by contract (spec §6,
// launch_future.hpp). Tests that do so on purpose either disable leak
// reporting for what they allocate (IntentionalLeakScope) or leave it out
// of ASan builds.
#pragma once

#include "tandem/base/sanitizers.hpp"

#if defined(TANDEM_ASAN)
#define TANDEM_TEST_ASAN 1
#endif
#if defined(TANDEM_TSAN)
#define TANDEM_TEST_TSAN 1
#endif
