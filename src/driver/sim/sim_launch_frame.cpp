// SPDX-License-Identifier: Apache-2.0
#include "sim_launch_frame.hpp"

#include <utility>

#include "sim_text.hpp"

namespace tandem::driver::sim {

LaunchFrame::LaunchFrame(Checker& checker, std::string who, std::span<const Access> declared,
                         std::span<const Pin> pins, std::vector<ParamAddress> params)
    : checker_(checker), who_(std::move(who)), params_(std::move(params)) {
  for (std::size_t i = 0; i < declared.size() && i < pins.size(); ++i) {
    if (declared[i].bytes == 0 || pins[i].host == nullptr) {
      continue;
    }
    const std::byte* lo = pins[i].host;
    windows_.push_back(Window{HostWindow{lo, lo + declared[i].bytes, declared[i].mode}, declared[i]});
  }
}

LaunchFrame::~LaunchFrame() {
  if (refused_ == 0) {
    return;
  }
  std::string detail = first_refusal_;
  if (refused_ > 1) {
    detail += " (" + std::to_string(refused_) + " accesses refused in all)";
  }
  checker_.record(Violation::Kind::unordered_conflict, std::move(detail));
}

HostWindow LaunchFrame::window_of(const void* p) const noexcept {
  const auto* b = static_cast<const std::byte*>(p);
  for (const Window& w : windows_) {
    if (w.host.lo <= b && b < w.host.hi) {
      return w.host;
    }
  }
  return {};
}

bool LaunchFrame::admit(int param, const void* p, std::size_t bytes, bool write) noexcept {
  const auto* b = static_cast<const std::byte*>(p);
  const Window* read_only = nullptr;
  for (const Window& w : windows_) {
    if (w.host.lo <= b && b <= w.host.hi && bytes <= static_cast<std::size_t>(w.host.hi - b)) {
      if (!write || writes(w.host.mode)) {
        return true;
      }
      read_only = &w;
    }
  }
  if (refused_++ == 0) {
    try {
      first_refusal_ = explain(param, b, bytes, write, read_only);
    } catch (...) {  // out of memory while describing: the count still tells
      first_refusal_ = who_ + ": an access outside its declared ranges";
    }
  }
  return false;
}

std::string LaunchFrame::explain(int param, const std::byte* p, std::size_t bytes, bool write,
                                 const Window* read_only) const {
  std::string asked = "parameter " + std::to_string(param);
  for (const ParamAddress& a : params_) {
    if (a.index == param && a.host != nullptr) {
      const auto offset = static_cast<std::int64_t>(p - a.host);
      const DevicePtr at = a.device + static_cast<DevicePtr>(offset);
      asked += " (" + hex(a.device) + ") at byte offset " + std::to_string(offset) + ", device " +
               byte_range(at, bytes);
    }
  }
  std::string declared;
  if (read_only != nullptr) {
    declared = "declared read-only: " + std::string(access_mode_name(read_only->declared.mode)) + " " +
               byte_range(read_only->declared.ptr, read_only->declared.bytes);
  } else {
    declared = "outside every declared range:";
    for (const Window& w : windows_) {
      declared += " " + std::string(access_mode_name(w.declared.mode)) + " " +
                  byte_range(w.declared.ptr, w.declared.bytes);
    }
    if (windows_.empty()) {
      declared += " none";
    }
  }
  return who_ + " " + (write ? "wrote" : "read") + " through " + asked + ", " + declared +
         "; the access was not performed";
}

}  // namespace tandem::driver::sim
