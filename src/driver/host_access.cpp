// SPDX-License-Identifier: Apache-2.0
#include "tandem/driver/host_access.hpp"

#include <utility>

namespace tandem::driver {

namespace {
thread_local HostAccessFrame* t_frame = nullptr;
}  // namespace

HostAccessFrame* current_host_access() noexcept { return t_frame; }

HostAccessScope::HostAccessScope(HostAccessFrame* frame) noexcept
    : previous_(std::exchange(t_frame, frame)) {}

HostAccessScope::~HostAccessScope() { t_frame = previous_; }

}  // namespace tandem::driver
