// SPDX-License-Identifier: Apache-2.0
// tandem/device.hpp — Platform (a driver backend) and Device (one GPU).
//
//   auto platform = tandem::Platform::open(tandem::BackendKind::automatic);
//   tandem::Device gpu = platform.device(0);
//   std::cout << gpu.name() << " cc " << gpu.compute_capability();
//
// A Platform owns one driver backend: the CUDA driver (loaded at run time)
// or a simulated device. Devices, contexts, streams and allocations keep
// their Platform alive. Both are cheap, copyable values.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tandem/base/backend_kind.hpp"  // BackendKind, backend_kind_name, parse_backend_kind
#include "tandem/detail/ref.hpp"
#include "tandem/driver/backend.hpp"
#include "tandem/driver/sim_config.hpp"

namespace tandem {

namespace detail {
struct PlatformState;
void ref_add(PlatformState* p) noexcept;
void ref_release(PlatformState* p) noexcept;
}  // namespace detail

class Device;

class Platform {
 public:
  // The CUDA driver. Throws Error(unsupported) naming why when no driver
  // library or no device is present (or the build has no CUDA support).
  static Platform cuda();
  // A fresh simulated device (its own memory, worker threads, faults).
  static Platform sim(const driver::SimConfig& config = {});
  // automatic: cuda when a driver and a device exist, else sim.
  static Platform open(BackendKind kind, const driver::SimConfig& sim_config = {});
  // Whether the CUDA backend can be loaded here; `why` says why not.
  static bool cuda_available(std::string& why);
  // Any backend (tests and instrumentation: a backend that wraps another,
  // counting or skipping calls). Throws Error(driver) when it reports no
  // devices it can describe.
  static Platform with_backend(std::unique_ptr<driver::Backend> backend);

  [[nodiscard]] std::string_view backend_name() const noexcept;
  [[nodiscard]] bool is_sim() const noexcept;
  [[nodiscard]] int device_count() const noexcept;
  // Throws Error(out_of_range) for an ordinal that does not exist.
  [[nodiscard]] Device device(int ordinal) const;
  [[nodiscard]] std::string driver_version() const;

  // Escape hatch for tests, tools and the scenario engine (the sim's own
  // controls are behind tandem/testing/sim.hpp).
  [[nodiscard]] driver::Backend& backend() const noexcept;

  // Blocks until everything submitted on this platform before the call has
  // retired or been quarantined, and its streams that no handle refers to
  // are destroyed, or `timeout` passes (returns false).
  bool wait_for_retirement(std::chrono::nanoseconds timeout) const;

  explicit Platform(detail::Ref<detail::PlatformState> s) noexcept : s_(std::move(s)) {}
  [[nodiscard]] detail::PlatformState* state() const noexcept { return s_.get(); }

 private:
  detail::Ref<detail::PlatformState> s_;
};

// One physical GPU (or simulated device). A value; cheap to copy.
class Device {
 public:
  Device(Platform platform, int ordinal) noexcept : platform_(std::move(platform)), ordinal_(ordinal) {}

  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }
  [[nodiscard]] const driver::DeviceInfo& info() const noexcept;
  [[nodiscard]] const std::string& name() const noexcept { return info().name; }
  [[nodiscard]] const std::string& uuid() const noexcept { return info().uuid; }
  [[nodiscard]] const std::string& pci_bus_id() const noexcept { return info().pci_bus_id; }
  [[nodiscard]] std::string compute_capability() const;  // "9.0"
  [[nodiscard]] std::size_t total_memory() const noexcept { return info().total_bytes; }
  [[nodiscard]] const Platform& platform() const noexcept { return platform_; }

  friend bool operator==(const Device& a, const Device& b) noexcept {
    return a.platform_.state() == b.platform_.state() && a.ordinal_ == b.ordinal_;
  }

 private:
  Platform platform_;
  int ordinal_;
};

}  // namespace tandem
