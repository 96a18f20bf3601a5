// SPDX-License-Identifier: Apache-2.0
// tandem/driver/forwarding_backend.hpp — a backend that passes every call to
// another one: the base of instrumenting backends (count, delay, fail or
// skip chosen calls by overriding them, forward the rest).
//
//   class CountingCreates : public tandem::driver::ForwardingBackend {
//    public:
//     using ForwardingBackend::ForwardingBackend;
//     Result event_create(ContextHandle c, EventHandle& out) noexcept override {
//       ++creates;
//       return ForwardingBackend::event_create(c, out);
//     }
//     std::atomic<int> creates{0};
//   };
//   auto p = tandem::Platform::with_backend(
//       std::make_unique<CountingCreates>(std::make_unique<SimBackend>()));
//
// Same contract as Backend (backend.hpp): each method behaves as the inner
// backend's, plus whatever an override adds.
#pragma once

#include <memory>
#include <utility>

#include "tandem/driver/backend.hpp"

namespace tandem::driver {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}

  [[nodiscard]] Backend& inner() const noexcept { return *inner_; }

  [[nodiscard]] std::string_view name() const noexcept override { return inner_->name(); }
  [[nodiscard]] std::string driver_version() const override { return inner_->driver_version(); }
  [[nodiscard]] std::string describe(const Result& r) const override { return inner_->describe(r); }
  Result device_count(int& out) noexcept override { return inner_->device_count(out); }
  Result device_info(int ordinal, DeviceInfo& out) noexcept override {
    return inner_->device_info(ordinal, out);
  }
  Result primary_context_retain(int ordinal, ContextHandle& out) noexcept override {
    return inner_->primary_context_retain(ordinal, out);
  }
  Result primary_context_release(int ordinal) noexcept override {
    return inner_->primary_context_release(ordinal);
  }
  Result context_create(int ordinal, ContextHandle& out) noexcept override {
    return inner_->context_create(ordinal, out);
  }
  Result context_destroy(ContextHandle ctx) noexcept override { return inner_->context_destroy(ctx); }
  Result context_device(ContextHandle ctx, int& ordinal) noexcept override {
    return inner_->context_device(ctx, ordinal);
  }
  Result device_can_access_peer(int ordinal, int peer, bool& out) noexcept override {
    return inner_->device_can_access_peer(ordinal, peer, out);
  }
  Result context_enable_peer_access(ContextHandle ctx, ContextHandle peer) noexcept override {
    return inner_->context_enable_peer_access(ctx, peer);
  }
  Result pool_grant_access(ContextHandle ctx, PoolHandle p, int peer) noexcept override {
    return inner_->pool_grant_access(ctx, p, peer);
  }
  Result stream_create(ContextHandle ctx, StreamHandle& out) noexcept override {
    return inner_->stream_create(ctx, out);
  }
  Result stream_destroy(ContextHandle ctx, StreamHandle s) noexcept override {
    return inner_->stream_destroy(ctx, s);
  }
  Result stream_synchronize(ContextHandle ctx, StreamHandle s) noexcept override {
    return inner_->stream_synchronize(ctx, s);
  }
  Result stream_query(ContextHandle ctx, StreamHandle s) noexcept override {
    return inner_->stream_query(ctx, s);
  }
  Result event_create(ContextHandle ctx, EventHandle& out) noexcept override {
    return inner_->event_create(ctx, out);
  }
  Result event_destroy(ContextHandle ctx, EventHandle e) noexcept override {
    return inner_->event_destroy(ctx, e);
  }
  Result event_record(ContextHandle ctx, EventHandle e, StreamHandle s) noexcept override {
    return inner_->event_record(ctx, e, s);
  }
  Result event_query(ContextHandle ctx, EventHandle e) noexcept override {
    return inner_->event_query(ctx, e);
  }
  Result event_synchronize(ContextHandle ctx, EventHandle e) noexcept override {
    return inner_->event_synchronize(ctx, e);
  }
  Result stream_wait_event(ContextHandle ctx, StreamHandle s, EventHandle e) noexcept override {
    return inner_->stream_wait_event(ctx, s, e);
  }
  Result pool_create(ContextHandle ctx, PoolHandle& out) noexcept override {
    return inner_->pool_create(ctx, out);
  }
  Result pool_destroy(ContextHandle ctx, PoolHandle p) noexcept override {
    return inner_->pool_destroy(ctx, p);
  }
  Result pool_trim(ContextHandle ctx, PoolHandle p, std::size_t keep_bytes) noexcept override {
    return inner_->pool_trim(ctx, p, keep_bytes);
  }
  Result mem_alloc_async(ContextHandle ctx, PoolHandle p, std::size_t bytes, StreamHandle s,
                         DevicePtr& out) noexcept override {
    return inner_->mem_alloc_async(ctx, p, bytes, s, out);
  }
  Result mem_free_async(ContextHandle ctx, DevicePtr ptr, StreamHandle s) noexcept override {
    return inner_->mem_free_async(ctx, ptr, s);
  }
  Result mem_reuse_async(ContextHandle ctx, PoolHandle p, DevicePtr ptr, std::size_t bytes,
                         StreamHandle s) noexcept override {
    return inner_->mem_reuse_async(ctx, p, ptr, bytes, s);
  }
  Result mem_alloc(ContextHandle ctx, std::size_t bytes, DevicePtr& out) noexcept override {
    return inner_->mem_alloc(ctx, bytes, out);
  }
  Result mem_free(ContextHandle ctx, DevicePtr ptr) noexcept override { return inner_->mem_free(ctx, ptr); }
  Result mem_info(ContextHandle ctx, std::size_t& free_bytes, std::size_t& total_bytes) noexcept override {
    return inner_->mem_info(ctx, free_bytes, total_bytes);
  }
  Result memcpy_async(ContextHandle ctx, DevicePtr dst, DevicePtr src, std::size_t bytes,
                      StreamHandle s) noexcept override {
    return inner_->memcpy_async(ctx, dst, src, bytes, s);
  }
  Result upload_async(ContextHandle ctx, DevicePtr dst, const void* src, std::size_t bytes,
                      StreamHandle s) noexcept override {
    return inner_->upload_async(ctx, dst, src, bytes, s);
  }
  Result download_async(ContextHandle ctx, void* dst, DevicePtr src, std::size_t bytes,
                        StreamHandle s) noexcept override {
    return inner_->download_async(ctx, dst, src, bytes, s);
  }
  Result memset8_async(ContextHandle ctx, DevicePtr dst, std::uint8_t value, std::size_t count,
                       StreamHandle s) noexcept override {
    return inner_->memset8_async(ctx, dst, value, count, s);
  }
  Result kernel_function(ContextHandle ctx, const KernelSymbol& symbol,
                         FunctionHandle& out) noexcept override {
    return inner_->kernel_function(ctx, symbol, out);
  }
  Result launch(const LaunchRequest& request) noexcept override { return inner_->launch(request); }
  [[nodiscard]] bool reads_declared_accesses() const noexcept override {
    return inner_->reads_declared_accesses();
  }
  Result capture_begin(ContextHandle ctx, StreamHandle s) noexcept override {
    return inner_->capture_begin(ctx, s);
  }
  Result capture_end(ContextHandle ctx, StreamHandle s, GraphHandle& out) noexcept override {
    return inner_->capture_end(ctx, s, out);
  }
  Result graph_launch(ContextHandle ctx, GraphHandle g, StreamHandle s) noexcept override {
    return inner_->graph_launch(ctx, g, s);
  }
  Result graph_destroy(ContextHandle ctx, GraphHandle g) noexcept override {
    return inner_->graph_destroy(ctx, g);
  }

 private:
  std::unique_ptr<Backend> inner_;
};

}  // namespace tandem::driver
