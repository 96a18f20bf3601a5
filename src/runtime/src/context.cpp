#include "tandem/context.hpp"

#include "context_state.hpp"
#include "deadline.hpp"
#include "retirement.hpp"

namespace tandem {

namespace {
Context make(const Device& device, driver::ContextHandle borrowed, std::shared_ptr<void> keep_alive,
             const ContextOptions& options) {
  Context c(detail::Ref<detail::ContextState>::adopt(detail::ContextState::create(
      *device.platform().state(), device.ordinal(), borrowed, std::move(keep_alive),
      options.conflict_policy)));
  // Before the context is shared: no submission can exist yet.
  if (options.measure_retirement_latency) c.state()->retire_latency = std::make_unique<LatencyHistogram>();
  return c;
}
}  // namespace

Context Context::create(const Device& device, const ContextOptions& options) {
  return make(device, {}, {}, options);
}

Context Context::borrow(const Device& device, driver::ContextHandle handle,
                        std::shared_ptr<void> keep_alive, const ContextOptions& options) {
  if (!handle) throw Error(ErrorCode::invalid_handle, "borrowing a null context handle");
  int ordinal = -1;
  const driver::Result r = device.platform().backend().context_device(handle, ordinal);
  if (!r.ok() || ordinal != device.ordinal()) {
    throw Error(ErrorCode::device_mismatch, "borrowing a context of device " + std::to_string(ordinal) +
                                                " as a context of device " + std::to_string(device.ordinal()));
  }
  return make(device, handle, std::move(keep_alive), options);
}

Device Context::device() const {
  return Device(Platform(detail::Ref<detail::PlatformState>(s_->platform)), s_->ordinal);
}
std::uint64_t Context::id() const noexcept { return s_->id; }
bool Context::owned() const noexcept { return s_->owned; }
ConflictPolicy Context::conflict_policy() const noexcept { return s_->policy; }
driver::ContextHandle Context::native() const noexcept { return s_->handle; }
RuntimeStats Context::stats() const { return s_->stats(); }

MemoryInfo Context::memory_info() const {
  MemoryInfo m;
  s_->check(s_->backend().mem_info(s_->handle, m.free_bytes, m.total_bytes), "reading device memory info");
  return m;
}

void Context::trim() const {
  driver::Backend& b = s_->backend();
  // Frees go onto the streams the memory was allocated on; the free stream
  // waits for those that are not proven done yet.
  s_->order_free_stream_after_untracked_work();
  s_->check(b.stream_synchronize(s_->handle, s_->free_stream), "waiting for the runtime's frees");
  s_->check(b.pool_trim(s_->handle, s_->pool, 0), "trimming the memory pool");
}

const LatencyHistogram* Context::retire_latency() const noexcept { return s_->retire_latency.get(); }

void Context::load_kernel(const driver::KernelSymbol& symbol) const { (void)s_->function(symbol); }

bool Context::wait_for_retirement(std::chrono::nanoseconds timeout) const {
  return detail::Retirement::instance().wait_settled(s_.get(), nullptr, detail::deadline_after(timeout));
}

}  // namespace tandem
