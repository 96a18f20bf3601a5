// SPDX-License-Identifier: Apache-2.0
// tandem/driver/types.hpp — plain values shared by both driver backends.
//
// The driver layer is the bottom of tandem: one small interface (backend.hpp)
// with two implementations, `cuda` (the CUDA driver API, loaded at run time)
// and `sim` (the simulated device). Nothing here allocates on the hot path and
// nothing throws: every call returns a Result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tandem/base/access_mode.hpp"

namespace tandem::driver {

// A device address. On `cuda` a CUdeviceptr; on `sim` a virtual address that
// is never reused within a process (so a late touch is always detectable).
using DevicePtr = std::uint64_t;

// Opaque handles. `cuda` stores the driver's own handle in `raw`; `sim` a
// pointer to its own object. A default-constructed handle is "none".
template <class Tag>
struct Handle {
  void* raw = nullptr;
  explicit operator bool() const noexcept { return raw != nullptr; }
  friend bool operator==(Handle, Handle) = default;
};
using ContextHandle = Handle<struct ContextTag>;
using StreamHandle = Handle<struct StreamTag>;
using EventHandle = Handle<struct EventTag>;
using PoolHandle = Handle<struct PoolTag>;
using FunctionHandle = Handle<struct FunctionTag>;
using GraphHandle = Handle<struct GraphTag>;  // an instantiated, launchable graph

enum class Status : std::uint8_t {
  ok = 0,
  not_ready,  // event/stream query: work still pending (not an error)
  out_of_memory,
  invalid_value,  // bad argument (size, pointer, dims)
  invalid_handle,
  not_supported,       // e.g. a kernel built without device code
  not_permitted,       // e.g. an operation illegal during stream capture
  completion_unknown,  // the device cannot say whether the work finished
  no_device,           // no driver library or no device
  unknown,
};

// What a driver call returned. `raw` is the backend's own code (CUresult on
// `cuda`), `api` the entry point that produced it; both feed error messages.
struct Result {
  Status status = Status::ok;
  int raw = 0;
  const char* api = "";
  // A failure the backend made on purpose (the simulated device's injected
  // faults): asking again cannot succeed where it should not, so the
  // runtime does not retry it (an allocation under pressure retries real
  // out-of-memory only).
  bool injected = false;
  [[nodiscard]] constexpr bool ok() const noexcept { return status == Status::ok; }
};

inline constexpr Result kOk{};

[[nodiscard]] const char* status_name(Status s) noexcept;

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;        // "GPU-xxxxxxxx-xxxx-..." on cuda, "SIM-..." on sim
  std::string pci_bus_id;  // "0000:00:00.0"
  int cc_major = 0;
  int cc_minor = 0;
  std::size_t total_bytes = 0;
  int multiprocessors = 0;
};

// How a submission touches a byte range: the base layer's one enum. Atomic
// accesses are declared as writes by the runtime before they reach the
// driver (lease_mode_of), so a backend sees read, write or read_write.
using AccessMode = tandem::AccessMode;
using tandem::reads;
using tandem::writes;

// One declared access of a launch. `cuda` ignores them; `sim` uses them to
// detect use-after-free and unordered conflicting accesses.
struct Access {
  DevicePtr ptr = 0;
  std::uint64_t bytes = 0;
  AccessMode mode = AccessMode::read;
};

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  friend bool operator==(Dim3, Dim3) = default;
};

struct LaunchDims {
  Dim3 grid;
  Dim3 block;
  std::uint32_t shared_bytes = 0;
};

}  // namespace tandem::driver
