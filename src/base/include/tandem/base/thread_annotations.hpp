// SPDX-License-Identifier: Apache-2.0
// tandem/base/thread_annotations.hpp — clang thread-safety annotations.
//
// The one set of annotation macros of every layer (driver, sim, runtime).
// Every field a lock guards is marked TANDEM_GUARDED_BY(lock); clang
// (-Wthread-safety, on in clang builds) checks them. Other compilers ignore
// the macros.
#pragma once

#if defined(__clang__)
#define TANDEM_TSA(x) __attribute__((x))
#else
#define TANDEM_TSA(x)
#endif

#define TANDEM_CAPABILITY(name) TANDEM_TSA(capability(name))
#define TANDEM_SCOPED_CAPABILITY TANDEM_TSA(scoped_lockable)
#define TANDEM_GUARDED_BY(x) TANDEM_TSA(guarded_by(x))
#define TANDEM_PT_GUARDED_BY(x) TANDEM_TSA(pt_guarded_by(x))
#define TANDEM_REQUIRES(...) TANDEM_TSA(requires_capability(__VA_ARGS__))
#define TANDEM_ACQUIRE(...) TANDEM_TSA(acquire_capability(__VA_ARGS__))
#define TANDEM_RELEASE(...) TANDEM_TSA(release_capability(__VA_ARGS__))
#define TANDEM_TRY_ACQUIRE(...) TANDEM_TSA(try_acquire_capability(__VA_ARGS__))
#define TANDEM_EXCLUDES(...) TANDEM_TSA(locks_excluded(__VA_ARGS__))
#define TANDEM_NO_THREAD_SAFETY_ANALYSIS TANDEM_TSA(no_thread_safety_analysis)
