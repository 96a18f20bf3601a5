// SPDX-License-Identifier: Apache-2.0
// tandem/driver/sim_backend.hpp — the simulated device.
//
// A second implementation of the driver surface on host memory and host
// threads (spec/scenario-format.md §5). It is not a shortcut: every stream is
// an in-order queue run by its own worker thread, so submitted work completes
// later, on another thread, concurrently across streams. Kernels run their
// host references (KernelSymbol::host).
//
// It also checks the runtime from below:
//   - memory of a freed allocation is poisoned; any operation that touches an
//     address that is no longer allocated, or a free not ordered after every
//     other use of the block, is a `use_after_free` violation;
//   - two accesses to overlapping bytes, at least one writing, with no
//     happens-before order between them (stream order, event waits, host
//     synchronization or a host query that saw completion), are an
//     `unordered_conflict` whether or not they ran at the same time;
//   - a kernel's host reference touching memory outside the launch's
//     declared accesses, or writing through a read-only one, is refused and
//     is an `unordered_conflict` too (tandem/driver/host_access.hpp).
// Violations are recorded, never thrown.
//
// Several devices (SimConfig::devices) each have their own capacity and
// free-memory figure. As on CUDA, a stream's work may touch memory of another
// device only once its context enabled peer access to that device's context
// and, for pool memory, that device's pool granted access to the stream's
// device: memcpy_async across devices without them fails with not_permitted.
// Events and stream waits work across devices.
//
// Pools behave like CUDA's stream-ordered pools: mem_alloc_async on stream S
// may use the bytes of blocks of the same pool whose mem_free_async is queued
// on S and has not run yet (stream order puts the new block's work after the
// free); other streams and mem_alloc get them only once the free ran.
// Addresses are still never reused: the old block stays live and checked
// until its free runs, and the new one is fresh. mem_reuse_async is the
// exception the runtime asks for (its same-stream reuse): the block passes
// to its new owner whole, its address kept; a stream that touches it out
// of order is still an unordered_conflict.
//
//   SimConfig cfg; cfg.memory_bytes = 64 << 20;
//   SimBackend sim(cfg);
//   sim.set_stream_delay(stream, std::chrono::microseconds(500));
//   sim.arm_completion_unknown(stream);   // next event recorded on it fails
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tandem/driver/backend.hpp"

namespace tandem::driver {

struct Violation {
  enum class Kind : std::uint8_t { use_after_free, unordered_conflict };
  Kind kind = Kind::use_after_free;
  std::string detail;  // addresses, byte ranges, streams, operations involved
};

[[nodiscard]] const char* violation_kind_name(Violation::Kind k) noexcept;

class SimBackend final : public Backend {
 public:
  explicit SimBackend(SimConfig config = {});
  ~SimBackend() override;  // joins the worker threads (drains their queues)

  // --- Backend ---------------------------------------------------------------
  std::string_view name() const noexcept override { return backend_kind_name(BackendKind::sim); }
  SimBackend* as_sim() noexcept override { return this; }
  std::string driver_version() const override;
  std::string describe(const Result& r) const override;
  Result device_count(int& out) noexcept override;
  Result device_info(int ordinal, DeviceInfo& out) noexcept override;
  Result primary_context_retain(int ordinal, ContextHandle& out) noexcept override;
  Result primary_context_release(int ordinal) noexcept override;
  Result context_create(int ordinal, ContextHandle& out) noexcept override;
  Result context_destroy(ContextHandle ctx) noexcept override;
  Result context_device(ContextHandle ctx, int& ordinal) noexcept override;
  Result device_can_access_peer(int ordinal, int peer, bool& out) noexcept override;
  Result context_enable_peer_access(ContextHandle ctx, ContextHandle peer) noexcept override;
  Result pool_grant_access(ContextHandle ctx, PoolHandle p, int peer) noexcept override;
  Result stream_create(ContextHandle ctx, StreamHandle& out) noexcept override;
  Result stream_destroy(ContextHandle ctx, StreamHandle s) noexcept override;
  Result stream_synchronize(ContextHandle ctx, StreamHandle s) noexcept override;
  Result stream_query(ContextHandle ctx, StreamHandle s) noexcept override;
  Result event_create(ContextHandle ctx, EventHandle& out) noexcept override;
  Result event_destroy(ContextHandle ctx, EventHandle e) noexcept override;
  Result event_record(ContextHandle ctx, EventHandle e, StreamHandle s) noexcept override;
  Result event_query(ContextHandle ctx, EventHandle e) noexcept override;
  Result event_synchronize(ContextHandle ctx, EventHandle e) noexcept override;
  Result stream_wait_event(ContextHandle ctx, StreamHandle s, EventHandle e) noexcept override;
  Result pool_create(ContextHandle ctx, PoolHandle& out) noexcept override;
  Result pool_destroy(ContextHandle ctx, PoolHandle p) noexcept override;
  Result pool_trim(ContextHandle ctx, PoolHandle p, std::size_t keep_bytes) noexcept override;
  Result mem_alloc_async(ContextHandle ctx, PoolHandle p, std::size_t bytes, StreamHandle s,
                         DevicePtr& out) noexcept override;
  Result mem_free_async(ContextHandle ctx, DevicePtr ptr, StreamHandle s) noexcept override;
  Result mem_reuse_async(ContextHandle ctx, PoolHandle p, DevicePtr ptr, std::size_t bytes,
                         StreamHandle s) noexcept override;
  Result mem_alloc(ContextHandle ctx, std::size_t bytes, DevicePtr& out) noexcept override;
  Result mem_free(ContextHandle ctx, DevicePtr ptr) noexcept override;
  Result mem_info(ContextHandle ctx, std::size_t& free_bytes, std::size_t& total_bytes) noexcept override;
  Result memcpy_async(ContextHandle ctx, DevicePtr dst, DevicePtr src, std::size_t bytes,
                      StreamHandle s) noexcept override;
  Result upload_async(ContextHandle ctx, DevicePtr dst, const void* src, std::size_t bytes,
                      StreamHandle s) noexcept override;
  Result download_async(ContextHandle ctx, void* dst, DevicePtr src, std::size_t bytes,
                        StreamHandle s) noexcept override;
  Result memset8_async(ContextHandle ctx, DevicePtr dst, std::uint8_t value, std::size_t count,
                       StreamHandle s) noexcept override;
  Result kernel_function(ContextHandle ctx, const KernelSymbol& symbol,
                         FunctionHandle& out) noexcept override;
  Result launch(const LaunchRequest& request) noexcept override;
  Result capture_begin(ContextHandle ctx, StreamHandle s) noexcept override;
  Result capture_end(ContextHandle ctx, StreamHandle s, GraphHandle& out) noexcept override;
  Result graph_launch(ContextHandle ctx, GraphHandle g, StreamHandle s) noexcept override;
  Result graph_destroy(ContextHandle ctx, GraphHandle g) noexcept override;

  // --- simulation controls (thread-safe) ------------------------------------
  // Every operation later enqueued on `s` takes at least `delay` before it
  // completes (it stays "running" for that long, so overlaps are observed).
  void set_stream_delay(StreamHandle s, std::chrono::microseconds delay);
  // The next event recorded on `s` reports Status::completion_unknown, marked
  // Result::injected, when queried or synchronized. Until that event has been
  // queried once, every later event recorded on `s` also reports it (the
  // error is pending on the stream); after that they report normally. So a
  // runtime that checks only its newest event still learns of the fault, and
  // one that then walks its events oldest-first attributes it to the right one.
  void arm_completion_unknown(StreamHandle s);
  // The n-th allocation call from now (1 = the next one; mem_alloc_async and
  // mem_alloc both count) fails with out_of_memory, marked Result::injected
  // (a real shortage is not). 0 disarms.
  void fail_nth_alloc(std::uint64_t n);
  // Driver errors on purpose: the n-th call from now of the kind named fails
  // with Status::unknown (a driver error, which the runtime reports as
  // `driver`, never out_of_memory), marked Result::injected, and enqueues or
  // allocates nothing. Each has its own one-shot countdown (1 = the next
  // call; 0 disarms; arming again restarts it). Only calls that would
  // otherwise be accepted count (a bad argument or dead handle fails as
  // before and counts for nothing).
  //   - fail_nth_alloc_with_driver_error: allocation calls, as fail_nth_alloc
  //     counts them (both countdowns see every call; when both land on the
  //     same call, out_of_memory wins);
  //   - fail_nth_launch: kernel launches (launch(), also while capturing); a
  //     graph replay (graph_launch) is not a launch;
  //   - fail_nth_copy: calls that move bytes: memcpy_async, upload_async and
  //     download_async (memset8_async writes a value, it is not a copy).
  void fail_nth_alloc_with_driver_error(std::uint64_t n);
  void fail_nth_launch(std::uint64_t n);
  void fail_nth_copy(std::uint64_t n);
  [[nodiscard]] std::vector<Violation> violations() const;
  [[nodiscard]] std::uint64_t violation_count() const noexcept;
  // Byte ranges the happens-before race check remembers accesses of; a
  // block's are forgotten when it is freed.
  [[nodiscard]] std::size_t race_check_ranges() const;
  // Live device allocations and their bytes, per the sim's own accounting
  // (a block whose free is queued is live until the free runs, even when a
  // newer block reuses its bytes: the sum may exceed the capacity).
  [[nodiscard]] std::uint64_t live_allocations() const noexcept;
  [[nodiscard]] std::uint64_t live_bytes() const noexcept;

  // Poison byte written over freed memory.
  static constexpr std::uint8_t kPoison = 0xDB;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tandem::driver
