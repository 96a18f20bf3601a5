// SPDX-License-Identifier: Apache-2.0
#include <string>

#include "deadline.hpp"
#include "platform_state.hpp"
#include "record_hook.hpp"
#include "retirement.hpp"
#include "tandem/device.hpp"
#include "tandem/errors.hpp"

namespace tandem {

namespace detail {

PlatformState::PlatformState(std::unique_ptr<driver::Backend> b)
    : backend(std::move(b)), sim(backend->as_sim()) {
  int count = 0;
  const driver::Result r = backend->device_count(count);
  if (!r.ok()) throw Error(ErrorCode::driver, "counting devices: " + backend->describe(r));
  devices.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const driver::Result ri = backend->device_info(i, devices[static_cast<std::size_t>(i)]);
    if (!ri.ok()) {
      throw Error(ErrorCode::driver, "reading device " + std::to_string(i) + ": " + backend->describe(ri));
    }
  }
}

void ref_add(PlatformState* p) noexcept { p->add_ref(); }
void ref_release(PlatformState* p) noexcept { p->release(); }

}  // namespace detail

namespace {
Platform make(std::unique_ptr<driver::Backend> b) {
  return Platform(detail::Ref<detail::PlatformState>::adopt(new detail::PlatformState(std::move(b))));
}
}  // namespace

bool Platform::cuda_available(std::string& why) { return driver::load_cuda_backend(why) != nullptr; }

Platform Platform::cuda() {
  std::string why;
  std::unique_ptr<driver::Backend> b = driver::load_cuda_backend(why);
  if (!b) throw Error(ErrorCode::unsupported, "the cuda backend is not available: " + why);
  return make(std::move(b));
}

Platform Platform::sim(const driver::SimConfig& config) { return make(driver::make_sim_backend(config)); }

Platform Platform::with_backend(std::unique_ptr<driver::Backend> backend) {
  if (!backend) throw Error(ErrorCode::invalid_handle, "Platform::with_backend without a backend");
  return make(std::move(backend));
}

Platform Platform::open(BackendKind kind, const driver::SimConfig& sim_config) {
  switch (kind) {
    case BackendKind::cuda:
      return cuda();
    case BackendKind::sim:
      return sim(sim_config);
    case BackendKind::automatic:
      break;
  }
  std::string why;
  if (std::unique_ptr<driver::Backend> b = driver::load_cuda_backend(why)) return make(std::move(b));
  return sim(sim_config);
}

std::string_view Platform::backend_name() const noexcept { return s_->backend->name(); }
bool Platform::is_sim() const noexcept { return s_->sim != nullptr; }
int Platform::device_count() const noexcept { return static_cast<int>(s_->devices.size()); }
std::string Platform::driver_version() const { return s_->backend->driver_version(); }
driver::Backend& Platform::backend() const noexcept { return *s_->backend; }

Device Platform::device(int ordinal) const {
  if (ordinal < 0 || ordinal >= device_count()) {
    throw Error(ErrorCode::out_of_range, "device " + std::to_string(ordinal) + " asked; the " +
                                             std::string(backend_name()) + " backend has " +
                                             std::to_string(device_count()) + " device(s)");
  }
  return Device(*this, ordinal);
}

bool Platform::wait_for_retirement(std::chrono::nanoseconds timeout) const {
  const bool settled =
      detail::Retirement::instance().wait_settled(nullptr, s_.get(), detail::deadline_after(timeout));
  detail::record_retirement_wait(settled, timeout);
  return settled;
}

const driver::DeviceInfo& Device::info() const noexcept {
  return platform_.state()->devices[static_cast<std::size_t>(ordinal_)];
}

std::string Device::compute_capability() const {
  return std::to_string(info().cc_major) + "." + std::to_string(info().cc_minor);
}

}  // namespace tandem
