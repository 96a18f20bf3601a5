// SPDX-License-Identifier: Apache-2.0
#include "tandem/kernels/launch.hpp"

#include <algorithm>
#include <cstddef>
#include <new>
#include <string>
#include <type_traits>
#include <variant>

#include "launch_memo.hpp"
#include "tandem/base/planted_slowdown.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/declared.hpp"
#include "tandem/refused_launch.hpp"

namespace tandem::kernels {

namespace {

ErrorCode code_for(const std::string& why) {
  // The catalog's messages say which rule failed; map them to stable codes.
  if (why.find("dtype") != std::string::npos) return ErrorCode::invalid_dtype;
  if (why.find("not supported") != std::string::npos) return ErrorCode::unsupported;
  return ErrorCode::out_of_range;
}

[[noreturn]] void fail(const KernelEntry& e, const std::string& why) {
  throw Error(code_for(why), std::string(model_name(e.model)) + " kernel '" + e.name + "': " + why);
}

// Up to kMaxParams values made one by one where they are needed (the
// types here are trivially destructible: nothing to undo).
template <class T>
class Slots {
  static_assert(std::is_trivially_destructible_v<T>);

 public:
  T& make(std::size_t i, const T& v) noexcept { return *::new (static_cast<void*>(data() + i)) T(v); }
  T* data() noexcept { return std::launder(reinterpret_cast<T*>(bytes_)); }

 private:
  alignas(T) std::byte bytes_[sizeof(T) * PackedParams::kMaxParams];
};

// A parameter's access is the launch's access: one enum (AccessMode).
Access access_of(const ParamSpec& p) noexcept { return p.mode; }

double as_double(const ScalarValue& s) noexcept {
  if (const auto* d = std::get_if<double>(&s)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&s)) return static_cast<double>(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&s)) return static_cast<double>(*u);
  return 0;
}

// A refusal of this layer's own, for a recording (tandem/refused_launch.hpp):
// what was asked, by parameter name. Failure path only; no allocation, so
// nothing here can replace the error the caller rethrows.
[[gnu::cold, gnu::noinline]] void report_refusal(StreamRef stream, const KernelEntry& e,
                                                 std::span<const Arg> args, std::optional<driver::Dim3> grid,
                                                 std::optional<driver::Dim3> block,
                                                 std::uint32_t shared_bytes, ErrorCode code) noexcept {
  Slots<RefusedLaunch::ViewArg> views;
  Slots<RefusedLaunch::ScalarArg> scalars;
  std::size_t nv = 0, ns = 0;
  const std::size_t n = std::min({args.size(), e.params.size(), PackedParams::kMaxParams});
  bool fit = args.size() == e.params.size() && n == args.size();
  for (std::size_t i = 0; i < n; ++i) {
    const ParamSpec& p = e.params[i];
    const Arg& a = args[i];
    if (p.kind == ArgKind::view) {
      views.make(nv++, {p.name, a.view});
      fit = fit && a.view != nullptr && !a.scalar;
    } else if (a.view != nullptr) {
      fit = false;
    } else if (a.scalar) {
      scalars.make(ns++, {p.name, as_double(*a.scalar)});
    }
  }
  RefusedLaunch what{stream, model_name(e.model), e.name};
  what.views = {views.data(), nv};
  what.scalars = {scalars.data(), ns};
  if (e.model == Model::tile && !e.default_tile)
    what.tile = {e.tile.dims, static_cast<std::size_t>(e.tile.rank)};
  what.grid = grid;
  what.block = block;
  what.shared_bytes = shared_bytes;
  what.args_fit = fit;
  record_refused_launch(what, code);
}

}  // namespace

ArgShape shape_of(const View& v) noexcept {
  if (!v.is_tensor()) return ArgShape::buffer(v.dtype(), v.element_count());
  return ArgShape::tensor(v.dtype(), v.shape(), v.strides());
}

void load_catalog(const Context& ctx) {
  for (const KernelEntry& e : catalog()) ctx.load_kernel(*e.symbol);
  ctx.load_kernel(declared_access_kernel());  // declared_launch steps (declared.hpp)
}

namespace {

// A repeat of this thread's last passing launch on views of the same
// shapes, the same scalars, grid and block (launch_memo.hpp): the
// remembered dimensions and bytes, its views' pointers written in. Null
// for anything else, which the full path below checks (and refuses with
// its messages).
const detail::RememberedLaunch* repeat(detail::LaunchMemo& memo_of, const KernelEntry& entry,
                                       std::span<const Arg> args, const std::optional<driver::Dim3>& grid,
                                       const std::optional<driver::Dim3>& block, Slots<ViewAccess>& accesses,
                                       std::size_t& views) noexcept {
  const std::size_t n = args.size();
  detail::RememberedLaunch* memo = memo_of.find(entry);
  if (memo == nullptr || !memo->may_repeat(n, grid, block)) return nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const Arg& a = args[i];
    if (memo->is_view(i)) {
      if (!a.view || !a.view->valid() || !memo->repoint(i, *a.view)) return nullptr;
      accesses.make(views++, ViewAccess{a.view, memo->access(i)});
    } else if (a.view || !memo->same_scalar(i, a.scalar)) {
      return nullptr;
    }
  }
  return memo;
}

// Everything but a repeat: the checks, the packing, and the launch. Apart
// from launch() so that a repeat's frame holds none of what this one builds
// (about 2.5 KB of shapes, launch arguments and packed bytes).
[[gnu::noinline]] LaunchFuture launch_checked(detail::LaunchMemo& memo, StreamRef stream,
                                              const KernelEntry& entry, std::span<const Arg> args,
                                              const std::optional<driver::Dim3>& grid,
                                              const std::optional<driver::Dim3>& block) {
  Slots<ViewAccess> accesses;
  std::size_t views = 0;
  driver::LaunchDims dims;
  PackedParams packed;
  // The checks: a refusal reaches a recording (report_refusal) and is
  // rethrown; the try costs nothing on the way through. What
  // tandem::launch refuses, below, the runtime records itself.
  try {
    const std::size_t n = entry.params.size();
    if (args.size() != n) {
      fail(entry, std::to_string(args.size()) + " arguments given, the kernel takes " + std::to_string(n));
    }
    if (n > PackedParams::kMaxParams) fail(entry, "has more parameters than a launch can pack");
    // Only the n entries used are made: three full arrays would clear about
    // 1.5 KB of stack on every launch.
    Slots<ArgShape> shapes;
    Slots<LaunchArg> packed_args;
    for (std::size_t i = 0; i < n; ++i) {
      const ParamSpec& p = entry.params[i];
      if (p.kind == ArgKind::view) {
        if (!args[i].view || !args[i].view->valid()) {
          throw Error(ErrorCode::invalid_handle,
                      std::string("kernel '") + entry.name + "' parameter '" + p.name + "' needs a view");
        }
        const View& v = *args[i].view;
        const ArgShape& shape = shapes.make(i, shape_of(v));
        packed_args.make(i, LaunchArg::view(v.extent_bytes() ? v.device_ptr() : 0, shape));
        accesses.make(views++, ViewAccess{&v, access_of(p)});
      } else {
        if (args[i].view) fail(entry, std::string("parameter '") + p.name + "' is a scalar, got a view");
        shapes.make(i, ArgShape{});
        packed_args.make(i, args[i].scalar ? LaunchArg::value(*args[i].scalar) : LaunchArg::defaulted());
      }
    }
    const std::span<const ArgShape> shape_span(shapes.data(), n);
    const std::span<const LaunchArg> arg_span(packed_args.data(), n);
    if (std::string why = check_args(entry, shape_span); !why.empty()) fail(entry, why);
    if (std::string why = launch_dims(entry, shape_span, grid, block, dims); !why.empty()) fail(entry, why);
    if (std::string why = pack_params(entry, arg_span, packed); !why.empty()) fail(entry, why);
    memo.remember(entry, shape_span, arg_span, grid, block, dims, packed);
  } catch (const Error& e) {
    report_refusal(stream, entry, args, grid, block, 0, e.code());
    throw;
  }
  return tandem::launch(stream, *entry.symbol, dims, packed.pointers(), {accesses.data(), views});
}

}  // namespace

LaunchFuture launch(StreamRef stream, const KernelEntry& entry, std::span<const Arg> args,
                    std::optional<driver::Dim3> grid, std::optional<driver::Dim3> block) {
  TANDEM_PLANTED_LAUNCH_SLOWDOWN();  // nothing unless -DTANDEM_PLANT_LAUNCH_SLOWDOWN=ON (a test build)
  thread_local detail::LaunchMemo memo;
  Slots<ViewAccess> accesses;
  std::size_t views = 0;
  if (const detail::RememberedLaunch* known = repeat(memo, entry, args, grid, block, accesses, views)) {
    return tandem::launch(stream, *entry.symbol, known->dims(), known->params(), {accesses.data(), views});
  }
  return launch_checked(memo, stream, entry, args, grid, block);
}

LaunchFuture launch(StreamRef stream, const KernelEntry& entry, std::span<const Arg> args,
                    const LaunchConfig& config) {
  if (config.shared_bytes != 0) {
    const std::string why =
        "asks " + std::to_string(config.shared_bytes) + " bytes of dynamic shared memory; it uses none";
    report_refusal(stream, entry, args, config.grid, config.block, config.shared_bytes, code_for(why));
    fail(entry, why);
  }
  return launch(stream, entry, args, config.grid, config.block);
}

}  // namespace tandem::kernels
