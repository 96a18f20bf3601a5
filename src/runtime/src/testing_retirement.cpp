// SPDX-License-Identifier: Apache-2.0
#include "retirement.hpp"
#include "tandem/testing/retirement_pause.hpp"

namespace tandem::testing {

RetirementPause::RetirementPause() { detail::Retirement::instance().pause_thread(true); }

// Never throws: the lock it takes is the sweep's, which no sweep holds for long.
RetirementPause::~RetirementPause() { detail::Retirement::instance().pause_thread(false); }

}  // namespace tandem::testing
