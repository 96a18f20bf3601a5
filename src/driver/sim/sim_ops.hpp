// SPDX-License-Identifier: Apache-2.0
// sim_ops.hpp — the operations a simulated stream runs (private to
// src/driver/sim).
//
// Two forms:
//   Command  what a caller submitted, as captured into a graph: records and
//            waits name the Event, because which Record they mean is decided
//            only when the command is enqueued (each replay records anew and
//            waits on the event's latest record at replay time);
//   Op       a Command bound to a stream's queue: records and waits hold
//            their Record, work holds the stream delay in force when queued.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "sim_events.hpp"
#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/driver/types.hpp"

namespace tandem::driver::sim {

// std::visit with one lambda per alternative.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// A launch's parameter values, copied out of the caller's storage (which may
// die as soon as launch() returns), each 16-byte aligned like a kernel
// parameter buffer.
class ParamBuffer {
 public:
  ParamBuffer() = default;
  ParamBuffer(const KernelSymbol& symbol, void* const* values);

  [[nodiscard]] std::size_t count() const noexcept { return offsets_.size(); }
  [[nodiscard]] std::byte* value(std::size_t i) noexcept;
  // params[i] for the host reference: pointers into this buffer.
  [[nodiscard]] std::vector<void*> pointers();

 private:
  struct alignas(16) Chunk {
    std::byte bytes[16];
  };
  std::vector<Chunk> chunks_;
  std::vector<std::size_t> offsets_;
};

struct LaunchWork {
  const KernelSymbol* symbol = nullptr;
  LaunchDims dims;
  ParamBuffer params;
  std::vector<Access> accesses;  // as declared by the caller
  std::uint64_t id = 0;          // the backend's launch count at submission, for messages
};
struct CopyWork {
  DevicePtr dst = 0;
  DevicePtr src = 0;
  std::size_t bytes = 0;
};
struct UploadWork {
  DevicePtr dst = 0;
  const void* src = nullptr;
  std::size_t bytes = 0;
};
struct DownloadWork {
  void* dst = nullptr;
  DevicePtr src = 0;
  std::size_t bytes = 0;
};
struct MemsetWork {
  DevicePtr dst = 0;
  std::uint8_t value = 0;
  std::size_t bytes = 0;
};
struct FreeWork {
  DevicePtr ptr = 0;
};
// mem_reuse_async: the block passes to a new owner here, in stream order. A
// write of the whole block (fresh bytes, as a new allocation has), so that
// the old owner's work on any stream must be ordered before it and the new
// owner's work on another stream after it.
struct ReuseWork {
  DevicePtr ptr = 0;
  std::size_t bytes = 0;
};
using Work = std::variant<LaunchWork, CopyWork, UploadWork, DownloadWork, MemsetWork, FreeWork, ReuseWork>;

struct RecordCommand {
  std::shared_ptr<Event> event;
};
struct WaitCommand {
  std::shared_ptr<Event> event;
};
using Command = std::variant<Work, RecordCommand, WaitCommand>;

// Work stays "running" (its accesses active) for at least `delay`.
struct TimedWork {
  Work work;
  std::chrono::microseconds delay{0};
};
struct MarkerOp {
  std::shared_ptr<Record> record;  // completed when the worker reaches it
};
struct WaitOp {
  std::shared_ptr<Record> record;  // null: the event was never recorded
};
using Op = std::variant<TimedWork, MarkerOp, WaitOp>;

}  // namespace tandem::driver::sim
