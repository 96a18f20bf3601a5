// SPDX-License-Identifier: Apache-2.0
#include "tandem/launch.hpp"

#include <cstring>
#include <memory>
#include <string>

#include "allocation_state.hpp"
#include "context_state.hpp"
#include "record_hook.hpp"
#include "stream_state.hpp"
#include "submit.hpp"
#include "tandem/base/mutant.hpp"
#include "tandem/base/planted_slowdown.hpp"
#include "tandem/detail/launch_phases.hpp"
#include "tandem/errors.hpp"
#include "view_factory.hpp"

namespace tandem {

namespace {

using detail::AccessRequest;

// The launch path's error exits, out of line: their message building would
// otherwise sit in the hot functions' code and stack frames.
[[noreturn, gnu::cold, gnu::noinline]] void throw_empty_stream() {
  throw Error(ErrorCode::invalid_handle, "submission on an empty stream handle");
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_empty_view(const char* what) {
  throw Error(ErrorCode::invalid_handle, std::string(what) + " with an empty or moved-from view");
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_foreign_view(const detail::StreamState& s,
                                                               const detail::AllocationState& a,
                                                               const char* what) {
  throw Error(ErrorCode::device_mismatch,
              std::string(what) + " on stream " + std::to_string(s.id) + " (context " +
                  std::to_string(s.ctx->id) + ", device " + std::to_string(s.ctx->ordinal) +
                  ") with a view of allocation " + std::to_string(a.id) + " from context " +
                  std::to_string(a.ctx->id) + " (device " + std::to_string(a.ctx->ordinal) + ")");
}

detail::StreamState& stream_of(StreamRef s) {
  if (!s.state()) [[unlikely]]
    throw_empty_stream();
  return *s.state();
}

void require_valid(const View* view, const char* what) {
  if (!view || !view->valid()) [[unlikely]]
    throw_empty_view(what);
}

// The lease an access of `v` takes; Error(device_mismatch) if `v` belongs to
// another context than the stream's (unless `peer_checked`: copy() has
// already allowed a peer device's view). Returns false for an empty range.
// Throws before any lease exists, so a rejected launch changes no tracker.
bool request_for(const detail::StreamState& s, const View* view, driver::AccessMode mode, AccessRequest& out,
                 const char* what, bool peer_checked = false) {
  require_valid(view, what);
  const View& v = *view;
  detail::AllocationState* a = v.allocation();
  if (a->ctx != s.ctx && !peer_checked) [[unlikely]]
    throw_foreign_view(s, *a, what);
  const std::uint64_t bytes = v.extent_bytes();
  if (bytes == 0) return false;
  out = AccessRequest{a, v.byte_offset(), bytes, mode};
  return true;
}

void require_contiguous(const View& v, const char* what) {
  if (!v.is_contiguous()) {
    throw Error(ErrorCode::non_contiguous, std::string(what) + " needs a contiguous view; allocation " +
                                               std::to_string(v.allocation_id()) + " is viewed with strides");
  }
}

// Mutants (a test build, tandem/base/mutant.hpp): the leases of a launch
// differ from the accesses it declares to the backend. Nothing otherwise.
void plant_lease_mutants(std::span<const ViewAccess> accesses, detail::SmallVector<AccessRequest, 6>& reqs) {
  using base::Mutant;
  if (!base::mutant(Mutant::range_widened) && !base::mutant(Mutant::range_narrowed) &&
      !base::mutant(Mutant::slice_leases_parent_range) && !base::mutant(Mutant::atomic_leased_as_read)) {
    return;
  }
  std::size_t i = 0;
  for (const ViewAccess& va : accesses) {
    if (va.view->extent_bytes() == 0) continue;
    AccessRequest& r = reqs[i++];
    const std::uint64_t e = va.view->element_size();
    if (base::mutant(Mutant::range_widened)) r.bytes += e;
    if (base::mutant(Mutant::range_narrowed) && r.bytes > e) r.bytes -= e;
    if (base::mutant(Mutant::slice_leases_parent_range))
      r = AccessRequest{r.alloc, 0, r.alloc->bytes, r.mode};
    if (base::mutant(Mutant::atomic_leased_as_read) && va.view->is_atomic())
      r.mode = driver::AccessMode::read;
  }
}

LaunchFuture finish(detail::StreamState& s, detail::SubmitSpec& spec) {
  return LaunchFuture(detail::submit(s, spec));
}

}  // namespace

driver::AccessMode lease_mode(Access a, bool view_is_atomic) noexcept {
  if (view_is_atomic) return driver::AccessMode::write;
  return lease_mode_of(a);
}

namespace {

// A launch with a Recorder installed: the launch itself, then what it did
// or the error it failed with.
[[gnu::noinline]] LaunchFuture launch_recorded(Recorder& r, StreamRef stream,
                                               const driver::KernelSymbol& symbol,
                                               const driver::LaunchDims& dims, void** params,
                                               std::span<const ViewAccess> accesses) {
  try {
    LaunchFuture f;
    {
      const detail::RecordPause pause;  // the launch below takes the unrecorded path
      f = launch(stream, symbol, dims, params, accesses);
    }
    r.on_launch(stream, symbol, dims, params, accesses, f.id());
    return f;
  } catch (const Error& e) {
    r.on_launch_failed(stream, symbol, dims, params, accesses, e.code());
    throw;
  }
}

}  // namespace

LaunchFuture launch(StreamRef stream, const driver::KernelSymbol& symbol, const driver::LaunchDims& dims,
                    void** params, std::span<const ViewAccess> accesses) {
  // Off, this is a load and a predicted branch: the launch path is
  // performance-judged (docs/runtime.md "Recording").
  if (Recorder* r = detail::active_recorder()) [[unlikely]] {
    return launch_recorded(*r, stream, symbol, dims, params, accesses);
  }
  TANDEM_PLANTED_LAUNCH_SLOWDOWN();  // nothing unless -DTANDEM_PLANT_LAUNCH_SLOWDOWN=ON (a test build)
  TANDEM_LAUNCH_PHASE(between);
  detail::StreamState& s = stream_of(stream);
  detail::ContextState& ctx = *s.ctx;
  detail::SmallVector<AccessRequest, 6> reqs;
  reqs.reserve(accesses.size());
  for (const ViewAccess& va : accesses) {
    require_valid(va.view, symbol.name);
    AccessRequest r;
    if (request_for(s, va.view, lease_mode(va.access, va.view->is_atomic()), r, symbol.name))
      reqs.push_back(r);
  }
  const driver::FunctionHandle f = ctx.function(symbol);
  driver::Backend& b = ctx.backend();
  driver::LaunchRequest req{ctx.handle, f, &symbol, dims, {}, params, nullptr, 0};
  // Only for a backend that checks them (the simulated device), in the
  // caller's order (submit() sorts `reqs`): a heap block off the GPU's path
  // rather than a vector in every launch's frame.
  std::unique_ptr<driver::Access[]> declared;
  if (ctx.backend_reads_accesses) [[unlikely]] {
    declared = std::make_unique<driver::Access[]>(reqs.size());
    for (const AccessRequest& r : reqs) {
      declared[req.access_count++] = driver::Access{r.alloc->base + r.offset, r.bytes, r.mode};
    }
    req.accesses = declared.get();
  }
  plant_lease_mutants(accesses, reqs);
  auto enqueue = [&](driver::StreamHandle h) {
    req.stream = h;
    return b.launch(req);
  };
  detail::SubmitSpec spec{detail::SubmissionKind::kernel,
                          reqs.data(),
                          static_cast<std::uint32_t>(reqs.size()),
                          enqueue,
                          symbol.name,
                          {},
                          true};
  LaunchFuture future = finish(s, spec);
  TANDEM_LAUNCH_PHASE(finish);
  return future;
}

// "allocation 7 (context 2, device 1)"
std::string allocation_text(const detail::AllocationState& a) {
  return "allocation " + std::to_string(a.id) + " (context " + std::to_string(a.ctx->id) + ", device " +
         std::to_string(a.ctx->ordinal) + ")";
}

// A copy between devices: each side is the stream's context, or a context of
// another device of the same platform with peer access enabled to the
// stream's context (Context::enable_peer_access); at least one side is the
// stream's. Returns false for an ordinary same-context copy (request_for
// checks it). Throws Error(device_mismatch) naming both allocations.
bool peer_copy_allowed(const detail::StreamState& s, const View& src, const View& dst) {
  const detail::AllocationState& a = *src.allocation();
  const detail::AllocationState& b = *dst.allocation();
  if (a.ctx == s.ctx && b.ctx == s.ctx) return false;
  const std::string head = "copy from " + allocation_text(a) + " to " + allocation_text(b) + " on stream " +
                           std::to_string(s.id) + " (context " + std::to_string(s.ctx->id) + ", device " +
                           std::to_string(s.ctx->ordinal) + "): ";
  if (a.ctx != s.ctx && b.ctx != s.ctx) {
    throw Error(ErrorCode::device_mismatch, head + "the stream belongs to neither side's context");
  }
  const detail::AllocationState& other = a.ctx == s.ctx ? b : a;
  if (other.ctx->platform != s.ctx->platform || other.ctx->ordinal == s.ctx->ordinal) {
    throw Error(ErrorCode::device_mismatch,
                head + "allocation " + std::to_string(other.id) +
                    " belongs to another context that is not a peer device (peer access is between devices "
                    "of one platform)");
  }
  if (!s.ctx->has_peer(other.ctx->id)) {
    throw Error(ErrorCode::device_mismatch,
                head + "peer access between devices " + std::to_string(s.ctx->ordinal) + " and " +
                    std::to_string(other.ctx->ordinal) + " is not enabled (Context::enable_peer_access)");
  }
  return true;
}

namespace {

// Runs `submit`, then tells an active Recorder what came of it: `done`
// with the result, or `failed` with the code of the Error it threw.
template <class Submit, class Done, class Failed>
auto recorded(Submit&& submit, Done&& done, Failed&& failed) {
  Recorder* r = detail::active_recorder();
  if (r == nullptr) [[likely]]
    return submit();
  try {
    auto out = submit();
    done(*r, out);
    return out;
  } catch (const Error& e) {
    failed(*r, e.code());
    throw;
  }
}

LaunchFuture copy_unrecorded(StreamRef stream, const View& src, const View& dst) {
  detail::StreamState& s = stream_of(stream);
  require_valid(&src, "copy");
  require_valid(&dst, "copy");
  const bool peer = peer_copy_allowed(s, src, dst);
  AccessRequest reqs[2];
  std::uint32_t n = 0;
  n += request_for(s, &src, driver::AccessMode::read, reqs[n], "copy", peer) ? 1 : 0;
  n += request_for(s, &dst, driver::AccessMode::write, reqs[n], "copy", peer) ? 1 : 0;
  require_contiguous(src, "copy");
  require_contiguous(dst, "copy");
  const std::uint64_t bytes = src.extent_bytes();
  if (bytes != dst.extent_bytes()) {
    throw Error(ErrorCode::out_of_range, "copy of " + std::to_string(bytes) + " bytes from allocation " +
                                             std::to_string(src.allocation_id()) + " into " +
                                             std::to_string(dst.extent_bytes()) + " bytes of allocation " +
                                             std::to_string(dst.allocation_id()));
  }
  driver::Backend& b = s.ctx->backend();
  const driver::DevicePtr from = bytes ? src.device_ptr() : 0, to = bytes ? dst.device_ptr() : 0;
  auto enqueue = [&](driver::StreamHandle h) {
    return bytes ? b.memcpy_async(s.ctx->handle, to, from, bytes, h) : driver::kOk;
  };
  detail::SubmitSpec spec{detail::SubmissionKind::copy, reqs, n, enqueue, "copy", {}, true};
  return finish(s, spec);
}

}  // namespace

LaunchFuture copy(StreamRef stream, const View& src, const View& dst) {
  return recorded([&] { return copy_unrecorded(stream, src, dst); },
                  [&](Recorder& r, const LaunchFuture& f) { r.on_copy(stream, src, dst, f.id()); },
                  [&](Recorder& r, ErrorCode code) {
                    if (stream.state() && src.valid() && dst.valid())
                      r.on_copy_failed(stream, src, dst, code);
                  });
}

LaunchFuture memset_bytes(StreamRef stream, const View& dst, std::uint8_t value) {
  detail::StreamState& s = stream_of(stream);
  AccessRequest req;
  const std::uint32_t n = request_for(s, &dst, driver::AccessMode::write, req, "memset") ? 1 : 0;
  require_contiguous(dst, "memset");
  driver::Backend& b = s.ctx->backend();
  auto enqueue = [&](driver::StreamHandle h) {
    return n ? b.memset8_async(s.ctx->handle, dst.device_ptr(), value, req.bytes, h) : driver::kOk;
  };
  detail::SubmitSpec spec{detail::SubmissionKind::memset, &req, n, enqueue, "memset", {}, true};
  LaunchFuture f = finish(s, spec);
  if (Recorder* r = detail::active_recorder()) [[unlikely]] {
    std::array<std::byte, 8> pattern;
    pattern.fill(std::byte{value});
    r->on_transfer(stream, dst, 'm', std::span(pattern).first(dst.element_size()), f.id());
  }
  return f;
}

namespace {

LaunchFuture upload_unrecorded(StreamRef stream, const View& dst, std::span<const std::byte> bytes) {
  detail::StreamState& s = stream_of(stream);
  AccessRequest req;
  const std::uint32_t n = request_for(s, &dst, driver::AccessMode::write, req, "upload") ? 1 : 0;
  require_contiguous(dst, "upload");
  const std::uint64_t want = dst.extent_bytes();
  if (bytes.size() != want) {
    throw Error(ErrorCode::out_of_range, "upload of " + std::to_string(bytes.size()) + " bytes into a " +
                                             std::to_string(want) + "-byte view of allocation " +
                                             std::to_string(dst.allocation_id()));
  }
  auto host = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
  driver::Backend& b = s.ctx->backend();
  auto enqueue = [&](driver::StreamHandle h) {
    return n ? b.upload_async(s.ctx->handle, dst.device_ptr(), host->data(), want, h) : driver::kOk;
  };
  detail::SubmitSpec spec{detail::SubmissionKind::upload, &req, n, enqueue, "upload", host, true};
  return finish(s, spec);
}

Download download_unrecorded(StreamRef stream, const View& src) {
  detail::StreamState& s = stream_of(stream);
  AccessRequest req;
  const std::uint32_t n = request_for(s, &src, driver::AccessMode::read, req, "download") ? 1 : 0;
  require_contiguous(src, "download");
  auto host = std::make_shared<std::vector<std::byte>>(src.extent_bytes());
  driver::Backend& b = s.ctx->backend();
  auto enqueue = [&](driver::StreamHandle h) {
    return n ? b.download_async(s.ctx->handle, host->data(), src.device_ptr(), host->size(), h) : driver::kOk;
  };
  detail::SubmitSpec spec{detail::SubmissionKind::download, &req, n, enqueue, "download", host, true};
  return Download(finish(s, spec), host);
}

}  // namespace

LaunchFuture upload(StreamRef stream, const View& dst, std::span<const std::byte> bytes) {
  return recorded([&] { return upload_unrecorded(stream, dst, bytes); },
                  [&](Recorder& r, const LaunchFuture& f) { r.on_transfer(stream, dst, 'u', bytes, f.id()); },
                  [&](Recorder& r, ErrorCode code) {
                    if (stream.state() && dst.valid()) r.on_transfer_failed(stream, dst, 'u', bytes, code);
                  });
}

Download download(StreamRef stream, const View& src) {
  return recorded(
      [&] { return download_unrecorded(stream, src); },
      [&](Recorder& r, const Download& d) { r.on_transfer(stream, src, 'd', {}, d.future().id()); },
      [&](Recorder& r, ErrorCode code) {
        if (stream.state() && src.valid()) r.on_transfer_failed(stream, src, 'd', {}, code);
      });
}

std::vector<std::byte> Download::get(std::chrono::nanoseconds timeout) {
  if (!future_.wait(timeout)) {
    throw Error(ErrorCode::timeout,
                "download (submission " + std::to_string(future_.id()) + ") did not retire in time");
  }
  if (future_.status() == SubmissionStatus::quarantined) {
    throw Error(ErrorCode::driver, "download (submission " + std::to_string(future_.id()) +
                                       "): completion unknown, its data cannot be trusted");
  }
  return std::move(*data_);
}

namespace {

std::vector<std::byte> read_back_unrecorded(StreamRef stream, const View& src,
                                            std::chrono::nanoseconds timeout) {
  if (src.is_contiguous()) return download(stream, src).get(timeout);
  // A strided view: fetch the covering byte range, gather on the host.
  src.allocation()->add_view();
  const View extent = make_view(src.allocation(), DType::u8, src.byte_offset(), src.extent_bytes());
  const std::vector<std::byte> raw = download(stream, extent).get(timeout);
  const std::uint32_t size = src.element_size();
  std::vector<std::byte> out(src.element_count() * size);
  std::array<std::int64_t, kMaxRank> idx{};
  const auto shape = src.shape();
  const auto strides = src.strides();
  for (std::uint64_t e = 0; e < src.element_count(); ++e) {
    std::int64_t at = 0;
    for (std::size_t k = 0; k < shape.size(); ++k) at += idx[k] * strides[k];
    std::memcpy(out.data() + e * size, raw.data() + at * size, size);
    for (std::size_t k = shape.size(); k-- > 0;) {  // row-major increment
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

}  // namespace

std::vector<std::byte> read_back(StreamRef stream, const View& src, std::chrono::nanoseconds timeout) {
  // Recorded once the data is here, as what it is in a scenario: a `check
  // contents` equal to what was read (whose replay, like the scenario
  // engine's checks, waits out a conflict), not as the runtime's download.
  Recorder* recorder = detail::active_recorder();
  if (recorder == nullptr) [[likely]]
    return read_back_unrecorded(stream, src, timeout);
  std::vector<std::byte> out;
  {
    const detail::RecordPause pause;
    out = read_back_unrecorded(stream, src, timeout);
  }
  recorder->on_transfer(stream, src, 'c', out, 0);
  return out;
}

}  // namespace tandem
