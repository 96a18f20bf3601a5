// SPDX-License-Identifier: Apache-2.0
// tandem/base/cpu_relax.hpp — TANDEM_CPU_RELAX(): the spin-wait hint (x86
// `pause`), so a spinning core yields its pipeline to its sibling thread.
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define TANDEM_CPU_RELAX() _mm_pause()
#else
#define TANDEM_CPU_RELAX() ((void)0)
#endif
