// SPDX-License-Identifier: Apache-2.0
#include "sim_executor.hpp"

#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "sim_text.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver::sim {

static_assert(sizeof(void*) == sizeof(DevicePtr),
              "a pointer-led parameter's leading DevicePtr is replaced in place by a host pointer");

namespace {

std::vector<Access> accesses_of(const Work& work) {
  using V = std::vector<Access>;
  return std::visit(Overloaded{
                        [](const LaunchWork& w) { return w.accesses; },
                        [](const CopyWork& w) {
                          return V{{w.src, w.bytes, AccessMode::read}, {w.dst, w.bytes, AccessMode::write}};
                        },
                        [](const UploadWork& w) {
                          return V{{w.dst, w.bytes, AccessMode::write}};
                        },
                        [](const DownloadWork& w) {
                          return V{{w.src, w.bytes, AccessMode::read}};
                        },
                        [](const MemsetWork& w) {
                          return V{{w.dst, w.bytes, AccessMode::write}};
                        },
                        [](const FreeWork&) { return V{}; },  // known only when it runs (free_block)
                        [](const ReuseWork& w) {
                          return V{{w.ptr, w.bytes, AccessMode::write}};
                        },
                    },
                    work);
}

std::string what_of(const Work& work) {
  return std::visit(Overloaded{
                        [](const LaunchWork& w) { return "launch '" + std::string(w.symbol->name) + "'"; },
                        [](const CopyWork&) { return std::string("memcpy"); },
                        [](const UploadWork&) { return std::string("upload"); },
                        [](const DownloadWork&) { return std::string("download"); },
                        [](const MemsetWork&) { return std::string("memset8"); },
                        [](const FreeWork&) { return std::string("mem_free_async"); },
                        [](const ReuseWork&) { return std::string("mem_reuse_async"); },
                    },
                    work);
}

std::string who(const OpLabel& label) { return label.what + " on " + stream_name(label.stream); }

}  // namespace

void Executor::run(Op& op, std::uint64_t stream, VectorClock& clock) {
  std::visit(Overloaded{
                 [&](TimedWork& t) {
                   const Epoch epoch = clock.tick(stream);
                   run_work(t.work, stream, epoch, clock, Clock::now() + t.delay);
                 },
                 [](MarkerOp&) {},  // completed by the stream as it goes idle
                 [&](WaitOp& w) {
                   events_.wait(w.record);
                   if (w.record) {
                     clock.join(w.record->clock);  // written before it completed
                   }
                 },
             },
             op);
}

void Executor::free_from_host(DevicePtr ptr, const char* api) {
  Epoch epoch;
  const VectorClock clock = host_.tick(epoch);
  free_block(ptr, OpLabel{kHostStream, api, true}, epoch, clock, Clock::now());
}

void Executor::run_work(Work& work, std::uint64_t stream, const Epoch& epoch, const VectorClock& clock,
                        Clock::time_point deadline) {
  if (const auto* f = std::get_if<FreeWork>(&work)) {
    free_block(f->ptr, OpLabel{stream, what_of(work), true}, epoch, clock, deadline);
    return;
  }
  const OpLabel label{stream, what_of(work), false};
  const std::vector<Access> accesses = accesses_of(work);
  const ActiveScope active(checker_, label, epoch, clock, accesses);
  // An operation that starts while another stream's conflicting one runs is
  // recorded and skipped: its effect would be undefined on a device, and
  // performing it would be a data race inside the sim itself.
  std::vector<Pin> pins;
  if (active.clean() && pin_all(label, accesses, pins)) {
    perform(label, work, pins);
  }
  // Still registered as active: a missing cross-stream order shows up as an
  // overlap with whatever the other stream starts meanwhile.
  std::this_thread::sleep_until(deadline);
}

bool Executor::pin_all(const OpLabel& label, std::span<const Access> accesses, std::vector<Pin>& pins) {
  bool all_live = true;
  pins.reserve(accesses.size());
  for (const Access& a : accesses) {
    std::string why;
    std::optional<Pin> pin = a.bytes == 0 ? Pin{} : memory_.pin_range(a.ptr, a.bytes, why);
    if (!pin) {
      all_live = false;
      checker_.record(Violation::Kind::use_after_free, who(label) + " " + mode_verb(a.mode) + " " +
                                                           byte_range(a.ptr, a.bytes) + ": " + why +
                                                           "; the operation was not performed");
    }
    pins.push_back(pin ? std::move(*pin) : Pin{});
  }
  return all_live;
}

bool Executor::translate_pointers(const OpLabel& label, LaunchWork& work, std::vector<Pin>& pins,
                                  std::vector<ParamAddress>& addresses) {
  bool all_live = true;
  for (std::size_t i = 0; i < work.params.count(); ++i) {
    if (work.symbol->params[i].kind != ParamKind::pointer_led) {
      continue;
    }
    std::byte* value = work.params.value(i);
    DevicePtr device = 0;
    std::memcpy(&device, value, sizeof device);
    void* host = nullptr;  // a null device pointer stays null: the kernel's business
    if (device != 0) {
      std::string why;
      std::optional<Pin> pin = memory_.pin_pointer(device, why);
      if (!pin) {
        all_live = false;
        checker_.record(Violation::Kind::use_after_free, who(label) + ": pointer parameter " +
                                                             std::to_string(i) + ": " + why +
                                                             "; the kernel was not run");
        continue;
      }
      host = pin->host;
      addresses.push_back(ParamAddress{static_cast<int>(i), device, pin->host});
      pins.push_back(std::move(*pin));
    }
    std::memcpy(value, &host, sizeof host);
  }
  return all_live;
}

void Executor::perform(const OpLabel& label, Work& work, std::vector<Pin>& pins) {
  // pins[i] belongs to accesses_of(work)[i]; zero-byte work touches nothing.
  std::visit(Overloaded{
                 [&](LaunchWork& w) {
                   // The declared accesses' pins come first: the frame's windows.
                   const std::size_t declared = pins.size();
                   std::vector<ParamAddress> addresses;
                   if (!translate_pointers(label, w, pins, addresses)) {
                     return;
                   }
                   std::vector<void*> params = w.params.pointers();
                   LaunchFrame frame(checker_,
                                     "launch #" + std::to_string(w.id) + " '" + w.symbol->name + "' on " +
                                         stream_name(label.stream),
                                     w.accesses, std::span<const Pin>(pins.data(), declared),
                                     std::move(addresses));
                   const HostAccessScope scope(&frame);
                   w.symbol->host(params.data(), w.dims);
                 },
                 [&](CopyWork& w) {
                   if (w.bytes > 0) {
                     std::memmove(pins[1].host, pins[0].host, w.bytes);
                   }
                 },
                 [&](UploadWork& w) {
                   if (w.bytes > 0) {
                     std::memcpy(pins[0].host, w.src, w.bytes);
                   }
                 },
                 [&](DownloadWork& w) {
                   if (w.bytes > 0) {
                     std::memcpy(w.dst, pins[0].host, w.bytes);
                   }
                 },
                 [&](MemsetWork& w) {
                   if (w.bytes > 0) {
                     std::memset(pins[0].host, w.value, w.bytes);
                   }
                 },
                 [&](FreeWork&) {},  // run_work hands frees to free_block
                 [&](ReuseWork& w) {
                   if (w.bytes > 0) {
                     std::memset(pins[0].host, kFreshFill, w.bytes);
                   }
                 },
             },
             work);
}

void Executor::free_block(DevicePtr ptr, const OpLabel& label, const Epoch& epoch, const VectorClock& clock,
                          Clock::time_point deadline) {
  std::string why;
  const std::optional<std::size_t> bytes = memory_.block_size(ptr, why);
  if (!bytes) {
    checker_.record(Violation::Kind::use_after_free, who(label) + " of " + hex(ptr) + ": " + why);
    std::this_thread::sleep_until(deadline);
    return;
  }
  const Access whole{ptr, *bytes, AccessMode::write};
  const ActiveScope active(checker_, label, epoch, clock, {&whole, 1});
  std::optional<Block> block = memory_.release(ptr);
  if (!block) {
    checker_.record(Violation::Kind::use_after_free,
                    who(label) + " of " + hex(ptr) + ": freed concurrently by another operation");
  } else if (active.clean() && block->bytes > 0) {
    // Poison only when no other stream's operation is in the block: writing
    // under a running kernel would be a data race inside the sim itself. The
    // bytes go back to the host when the last pin on them is dropped.
    std::memset(block->storage.get(), SimBackend::kPoison, block->bytes);
  }
  std::this_thread::sleep_until(deadline);
}

}  // namespace tandem::driver::sim
