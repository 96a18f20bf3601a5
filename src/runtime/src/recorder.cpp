// SPDX-License-Identifier: Apache-2.0
// recorder.cpp — the process-wide Recorder and the catalog-name registry
// (TANDEM_RECORD and ContextOptions::record_to: recording.cpp).
#include "tandem/recorder.hpp"

#include <map>
#include <mutex>

#include "record_hook.hpp"
#include "tandem/kernel_name.hpp"

namespace tandem {

namespace detail {
std::atomic<Recorder*> g_recorder{nullptr};
thread_local int t_record_paused = 0;
}  // namespace detail

RecordingPause::RecordingPause() noexcept { ++detail::t_record_paused; }
RecordingPause::~RecordingPause() { --detail::t_record_paused; }

Recorder* install_recorder(Recorder* r) noexcept {
  return detail::g_recorder.exchange(r, std::memory_order_acq_rel);
}

void record_refused_launch(const RefusedLaunch& what, ErrorCode code) noexcept {
  Recorder* r = detail::active_recorder();
  if (r == nullptr) return;
  try {
    r->on_launch_refused(what, code);
  } catch (...) {
    // Dropped: the caller is about to rethrow its own error, the one that matters.
  }
}

void record_refused_use(std::string_view op, ErrorCode code) noexcept {
  Recorder* r = detail::active_recorder();
  if (r == nullptr) return;
  try {
    r->on_use_refused(op, code);
  } catch (...) {
    // Dropped, as above.
  }
}

ViewKey ViewKey::of(const View& v) {
  ViewKey k;
  k.allocation = v.allocation_id();
  k.offset = v.byte_offset();
  k.dtype = v.dtype();
  k.rank = static_cast<std::int8_t>(v.rank());
  k.tensor = v.is_tensor();
  k.atomic = v.is_atomic();
  for (int i = 0; i < v.rank(); ++i) {
    k.shape[static_cast<std::size_t>(i)] = v.shape()[static_cast<std::size_t>(i)];
    k.strides[static_cast<std::size_t>(i)] = v.strides()[static_cast<std::size_t>(i)];
  }
  return k;
}

namespace {

struct NameRegistry {
  std::mutex mu;
  std::map<const driver::KernelSymbol*, const KernelName*> names;
};

NameRegistry& registry() {
  static NameRegistry* r = new NameRegistry;  // never destroyed: hooks may run during exit
  return *r;
}

}  // namespace

void register_kernel_name(const driver::KernelSymbol* symbol, const KernelName* name) {
  NameRegistry& r = registry();
  const std::lock_guard lock(r.mu);
  r.names[symbol] = name;
}

const KernelName* kernel_name(const driver::KernelSymbol* symbol) {
  NameRegistry& r = registry();
  const std::lock_guard lock(r.mu);
  const auto it = r.names.find(symbol);
  return it == r.names.end() ? nullptr : it->second;
}

}  // namespace tandem
