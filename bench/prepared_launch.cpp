// SPDX-License-Identifier: Apache-2.0
#include "prepared_launch.hpp"

#include <optional>
#include <stdexcept>
#include <string>

namespace tandem_bench {

namespace k = tandem::kernels;

namespace {

constexpr tandem::driver::Dim3 kSimtGrid{1, 1, 1};
constexpr tandem::driver::Dim3 kSimtBlock{32, 1, 1};
constexpr std::int64_t kTileElements = 4096;  // one tile of the default rank-1 tile

const k::KernelEntry& find_entry(KernelKind kind) {
  const k::KernelEntry* e = kind == KernelKind::simt_copy
                                ? k::find(k::Model::simt, "copy", tandem::DType::f32)
                                : k::find(k::Model::tile, "copy", tandem::DType::f32, nullptr, 1);
  if (e == nullptr) throw std::runtime_error("the catalog has no f32 copy kernel");
  return *e;
}

tandem::Access access_of(const k::ParamSpec& p) { return p.mode; }

void require(const std::string& why, const char* what) {
  if (!why.empty()) throw std::runtime_error(std::string(what) + ": " + why);
}

}  // namespace

PreparedLaunch::PreparedLaunch(const Env& e, const tandem::Stream& stream, KernelKind kind)
    : stream_(stream), native_stream_(stream.native().raw), kind_(kind), entry_(&find_entry(kind)) {
  const bool simt = kind == KernelKind::simt_copy;
  const std::uint64_t n = simt ? 1 : kTileElements;
  src_ = tandem::allocate(stream_, tandem::DType::f32, n);
  dst_ = tandem::allocate(stream_, tandem::DType::f32, n);
  if (!simt) {
    const std::int64_t shape[] = {kTileElements};
    src_ = std::move(src_).to_tensor(shape);
    dst_ = std::move(dst_).to_tensor(shape);
  }
  args_[0] = k::Arg::of(src_);
  args_[1] = k::Arg::of(dst_);

  // The same steps kernels::launch takes, once.
  const k::ArgShape shapes[] = {k::shape_of(src_), k::shape_of(dst_)};
  require(k::check_args(*entry_, shapes), "check_args");
  const std::optional<tandem::driver::Dim3> grid = simt ? std::optional(kSimtGrid) : std::nullopt;
  const std::optional<tandem::driver::Dim3> block = simt ? std::optional(kSimtBlock) : std::nullopt;
  require(k::launch_dims(*entry_, shapes, grid, block, dims_), "launch_dims");
  const k::LaunchArg packed_args[] = {k::LaunchArg::view(src_.device_ptr(), shapes[0]),
                                      k::LaunchArg::view(dst_.device_ptr(), shapes[1])};
  require(k::pack_params(*entry_, packed_args, packed_), "pack_params");
  params_ = packed_.pointers();

  int views = 0;
  const tandem::View* order[] = {&src_, &dst_};
  for (const k::ParamSpec& p : entry_->params) {
    if (p.kind == k::ArgKind::view && views < 2) {
      accesses_[views] = tandem::ViewAccess{order[views], access_of(p)};
      ++views;
    }
  }
  if (views != 2) throw std::runtime_error("copy kernel without two view parameters");
  function_ = e.function(*entry_);
  stream_.synchronize();
}

tandem::LaunchFuture PreparedLaunch::tracked() const {
  return tandem::launch(stream_, *entry_->symbol, dims_, params_, accesses_);
}

tandem::LaunchFuture PreparedLaunch::catalog() const {
  if (kind_ == KernelKind::simt_copy) return k::launch(stream_, *entry_, args_, kSimtGrid, kSimtBlock);
  return k::launch(stream_, *entry_, args_);
}

}  // namespace tandem_bench
