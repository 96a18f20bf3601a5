// SPDX-License-Identifier: Apache-2.0
// The simulated device facade (sim_backend.cpp): pools, allocations and
// transfers.
#include "sim_backend_impl.hpp"

namespace tandem::driver {

// --- memory ----------------------------------------------------------------------

Result SimBackend::pool_create(ContextHandle ctx, PoolHandle& out) noexcept {
  constexpr const char* api = "pool_create";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  base::Lock lock(impl_->mu);
  auto pool = std::make_unique<Pool>(Pool{device, impl_->next_pool_id++});
  out.raw = pool.get();
  impl_->pools.emplace(pool.get(), std::move(pool));
  return succeeded(api);
}

Result SimBackend::pool_destroy(ContextHandle ctx, PoolHandle p) noexcept {
  constexpr const char* api = "pool_destroy";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  base::Lock lock(impl_->mu);
  if (impl_->pools.erase(p.raw) == 0) {
    return not_live(api, "pool", p.raw);
  }
  return succeeded(api);
}

Result SimBackend::pool_trim(ContextHandle ctx, PoolHandle p, std::size_t /*keep_bytes*/) noexcept {
  constexpr const char* api = "pool_trim";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  // The sim's pools cache nothing (an executed free returns its bytes to the
  // device), so there is never anything to trim.
  Pool pool;
  return impl_->find_pool(api, p, pool);
}

namespace {

// The stream and pool of a stream-ordered allocation (mem_alloc_async,
// mem_reuse_async), which the sim does not capture.
Result find_allocating_stream(SimBackend::Impl& impl, const char* api, ContextHandle ctx, PoolHandle p,
                              StreamHandle s, std::shared_ptr<sim::Stream>& stream, Pool& pool) {
  if (Result r = impl.find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  if (Result r = impl.find_pool(api, p, pool); !r.ok()) {
    return r;
  }
  if (stream->capturing()) {
    return fail(api, Status::not_permitted,
                sim::stream_name(stream->id()) +
                    " is capturing: the sim does not capture "
                    "stream-ordered allocation");
  }
  return kOk;
}

}  // namespace

Result SimBackend::mem_alloc_async(ContextHandle ctx, PoolHandle p, std::size_t bytes, StreamHandle s,
                                   DevicePtr& out) noexcept {
  constexpr const char* api = "mem_alloc_async";
  std::shared_ptr<sim::Stream> stream;
  Pool pool;
  if (Result r = find_allocating_stream(*impl_, api, ctx, p, s, stream, pool); !r.ok()) {
    return r;
  }
  // Allocated now, which is earlier than stream order requires: harmless.
  return impl_->allocate(api, sim::AllocRequest{pool.device, bytes, pool.id, stream->id()}, out);
}

Result SimBackend::mem_free_async(ContextHandle ctx, DevicePtr ptr, StreamHandle s) noexcept {
  constexpr const char* api = "mem_free_async";
  std::shared_ptr<sim::Stream> stream;
  if (Result r = impl_->find_context_stream(api, ctx, s, stream); !r.ok()) {
    return r;
  }
  std::string why;
  if (!impl_->memory.accept_free(ptr, why)) {
    return fail(api, Status::invalid_value, std::move(why));
  }
  const Status status = stream->submit(sim::Work{sim::FreeWork{ptr}}, sim::Stream::DuringCapture::forbid);
  if (status != Status::ok) {
    impl_->memory.withdraw_free(ptr);
    return fail(api, status,
                sim::stream_name(stream->id()) + (status == Status::not_permitted
                                                      ? " is capturing: the sim does not capture "
                                                        "stream-ordered frees"
                                                      : " is being destroyed"));
  }
  // Only now, once it is queued: a free that was withdrawn must lend nothing.
  impl_->memory.lend_until_freed(ptr, stream->id());
  return succeeded(api);
}

Result SimBackend::mem_reuse_async(ContextHandle ctx, PoolHandle p, DevicePtr ptr, std::size_t bytes,
                                   StreamHandle s) noexcept {
  constexpr const char* api = "mem_reuse_async";
  std::shared_ptr<sim::Stream> stream;
  Pool pool;
  if (Result r = find_allocating_stream(*impl_, api, ctx, p, s, stream, pool); !r.ok()) {
    return r;
  }
  sim::Refusal refusal;
  if (const Status status = impl_->memory.reuse(ptr, bytes, pool.id, refusal); status != Status::ok) {
    return fail(api, status, std::move(refusal.why), refusal.injected ? Cause::injected : Cause::real);
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::ReuseWork{ptr, bytes}});
}

Result SimBackend::mem_alloc(ContextHandle ctx, std::size_t bytes, DevicePtr& out) noexcept {
  constexpr const char* api = "mem_alloc";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  return impl_->allocate(api, sim::AllocRequest{device, bytes}, out);
}

Result SimBackend::mem_free(ContextHandle ctx, DevicePtr ptr) noexcept {
  constexpr const char* api = "mem_free";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  std::string why;
  if (!impl_->memory.accept_free(ptr, why)) {
    return fail(api, Status::invalid_value, std::move(why));
  }
  impl_->executor.free_from_host(ptr, api);
  return succeeded(api);
}

Result SimBackend::mem_info(ContextHandle ctx, std::size_t& free_bytes, std::size_t& total_bytes) noexcept {
  constexpr const char* api = "mem_info";
  int device = 0;
  if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
    return r;
  }
  impl_->memory.info(device, free_bytes, total_bytes);
  return succeeded(api);
}

// --- transfers ---------------------------------------------------------------------
// Addresses are checked when the operation runs (a dead one is a violation,
// as on a device); here only arguments that can never be right.

Result SimBackend::memcpy_async(ContextHandle ctx, DevicePtr dst, DevicePtr src, std::size_t bytes,
                                StreamHandle s) noexcept {
  constexpr const char* api = "memcpy_async";
  if (bytes > 0 && (dst == 0 || src == 0)) {
    return fail(api, Status::invalid_value,
                "copy of " + std::to_string(bytes) + " bytes from " + sim::hex(src) + " to " + sim::hex(dst) +
                    ": null device pointer");
  }
  if (bytes > 0) {
    int device = 0;
    if (Result r = impl_->find_context(api, ctx, device); !r.ok()) {
      return r;
    }
    for (const DevicePtr p : {src, dst}) {
      if (std::string why = impl_->peer_problem(ctx, device, p); !why.empty()) {
        return fail(api, Status::not_permitted, "copy of " + std::to_string(bytes) + " bytes: " + why);
      }
    }
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::CopyWork{dst, src, bytes}}, &impl_->copy_faults);
}

Result SimBackend::upload_async(ContextHandle ctx, DevicePtr dst, const void* src, std::size_t bytes,
                                StreamHandle s) noexcept {
  constexpr const char* api = "upload_async";
  if (bytes > 0 && (dst == 0 || src == nullptr)) {
    return fail(api, Status::invalid_value,
                "upload of " + std::to_string(bytes) + " bytes to " + sim::hex(dst) +
                    ": null device or host pointer");
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::UploadWork{dst, src, bytes}}, &impl_->copy_faults);
}

Result SimBackend::download_async(ContextHandle ctx, void* dst, DevicePtr src, std::size_t bytes,
                                  StreamHandle s) noexcept {
  constexpr const char* api = "download_async";
  if (bytes > 0 && (dst == nullptr || src == 0)) {
    return fail(api, Status::invalid_value,
                "download of " + std::to_string(bytes) + " bytes from " + sim::hex(src) +
                    ": null device or host pointer");
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::DownloadWork{dst, src, bytes}}, &impl_->copy_faults);
}

Result SimBackend::memset8_async(ContextHandle ctx, DevicePtr dst, std::uint8_t value, std::size_t count,
                                 StreamHandle s) noexcept {
  constexpr const char* api = "memset8_async";
  if (count > 0 && dst == 0) {
    return fail(api, Status::invalid_value,
                "memset of " + std::to_string(count) + " bytes: null device pointer");
  }
  return impl_->submit(api, ctx, s, sim::Work{sim::MemsetWork{dst, value, count}});
}

}  // namespace tandem::driver
