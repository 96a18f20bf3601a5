// SPDX-License-Identifier: Apache-2.0
// tandem/kernels/catalog.hpp — the registry of every compiled kernel.
//
// One KernelEntry per compiled instantiation (model x kernel x dtype x tile
// shape). The scenario engine launches kernels by name through it, `tandem
// kernels` prints it, and the runtime's dynamic launcher packs parameters
// with it:
//
//   namespace k = tandem::kernels;
//   std::vector<k::ArgShape> shapes = {k::ArgShape::buffer(DType::f32, n),
//                                      k::ArgShape::buffer(DType::f32, n)};
//   std::string why;
//   const k::KernelEntry* e = k::resolve(k::Model::simt, "axpy", shapes, nullptr, &why);
//   if (e == nullptr) fail(why);                     // unknown kernel, dtype, tile
//   if (auto err = k::check_args(*e, shapes); !err.empty()) fail(err);
//   driver::LaunchDims dims;
//   if (auto err = k::launch_dims(*e, shapes, grid, block, dims); !err.empty()) fail(err);
//   k::LaunchArg args[] = {k::LaunchArg::view(x_ptr, shapes[0]), k::LaunchArg::view(y_ptr, shapes[1]),
//                          k::LaunchArg::value(2.0)};
//   k::PackedParams packed;
//   if (auto err = k::pack_params(*e, args, packed); !err.empty()) fail(err);
//   backend.launch({..., .symbol = e->symbol, .dims = dims, .params = packed.pointers(), ...});
//
// Everything here is immutable static data or a pure function: thread-safe,
// never blocks, never touches the device. Functions returning std::string
// return "" on success and a complete message (what was asked, what was
// found) on failure; they never throw except std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/driver/types.hpp"
#include "tandem/dtype.hpp"
#include "tandem/kernel_params.hpp"

namespace tandem::kernels {

enum class Model : std::uint8_t { simt, tile };
enum class ArgKind : std::uint8_t { view, scalar };

[[nodiscard]] std::string_view model_name(Model m) noexcept;  // "simt" | "tile"

// One parameter of a kernel, in the entry point's parameter order (the spec
// table's args in order, then its scalars in order).
struct ParamSpec {
  const char* name = "";
  ArgKind kind = ArgKind::view;

  // --- views (SIMT buffers, Tile tensors) ---
  // AccessMode::atomic: accessed through device atomics; the runtime must
  // track it as a write (spec/runtime.md §3, atomic relabel).
  AccessMode mode = AccessMode::read;
  // The element type this view must have (histogram bins: u32, checksum out:
  // u32); nullopt = the entry's dtype, or any dtype when the entry takes any.
  std::optional<DType> fixed_dtype;
  // Passed as raw bytes: a BufferParam<uint8_t> whose len counts bytes
  // (the views of dtype-agnostic entries: checksum's x, spin's x).
  bool bytes = false;
  // Tile tensors: the rank the tensor must have. 0 for SIMT buffers.
  int rank = 0;

  // --- scalars ---
  DType scalar_dtype = DType::f32;  // the C type it is passed as
  std::optional<double> default_value;

  // The access the runtime must declare for this view (atomic -> write).
  [[nodiscard]] constexpr AccessMode tracked_mode() const noexcept { return lease_mode_of(mode); }
};

// A compile-time tile shape. Rank 1: dims = {N, 0}; rank 2: {TM, TN}.
// SIMT entries carry rank 0.
struct TileShape {
  int rank = 0;
  std::int64_t dims[2] = {0, 0};
  friend constexpr bool operator==(const TileShape& a, const TileShape& b) noexcept {
    return a.rank == b.rank && a.dims[0] == b.dims[0] && a.dims[1] == b.dims[1];
  }
};
[[nodiscard]] std::string to_string(const TileShape& t);  // "4096", "64x64", "" for rank 0

// The shape of one launch argument, in parameter order. A SIMT buffer is
// rank 1 with stride 1 (use ArgShape::buffer); a Tile tensor has its own
// rank, shape and strides (in elements). Scalar parameters take a
// default-constructed ArgShape (ignored).
struct ArgShape {
  DType dtype = DType::f32;
  int rank = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t stride[kMaxRank] = {};

  [[nodiscard]] static ArgShape buffer(DType dtype, std::uint64_t len) noexcept;
  // Strides default to contiguous row-major.
  [[nodiscard]] static ArgShape tensor(DType dtype, std::span<const std::int64_t> shape,
                                       std::span<const std::int64_t> strides = {}) noexcept;
  [[nodiscard]] std::int64_t elements() const noexcept;  // product of the shape (1 for rank 0)
};

// How a device result compares with the host reference: bit-exact (rtol 0),
// or |device - host| <= rtol * M where M is the kernel's magnitude sum
// (README: "Comparing with the host reference"; e.g. sum |x_i| for
// atomic_sum, sum_k |a_ik * b_kj| for matmul).
struct Tolerance {
  double rtol = 0.0;
  [[nodiscard]] constexpr bool exact() const noexcept { return rtol == 0.0; }
};

struct KernelEntry {
  Model model = Model::simt;
  const char* name = "";       // the table's kernel name: "axpy", "transpose"
  std::optional<DType> dtype;  // nullopt: accepts any dtype (checksum, spin)
  TileShape tile;              // rank 0 for SIMT
  bool default_tile = false;   // the documented default for its kernel/rank
  const driver::KernelSymbol* symbol = nullptr;
  std::span<const ParamSpec> params;
  int partition_param = -1;         // Tile: whose shape gives the grid; SIMT: -1
  std::uint32_t block_threads = 0;  // Tile: the (only) block size; SIMT: the default
  const char* effect = "";          // one line, for `tandem kernels`
  Tolerance tolerance;              // of its floating-point results vs the host reference
  // Kernel-specific shape rules, after check_args' generic checks. Gets one
  // ArgShape per parameter.
  std::string (*validate)(std::span<const ArgShape> args) = nullptr;
  // The default launch dimensions (SIMT: for the default block; Tile: the
  // partition). Never a zero grid.
  driver::LaunchDims (*default_dims)(std::span<const ArgShape> args) = nullptr;
  // SIMT only: the grid for a caller-chosen block of `threads` threads.
  std::uint32_t (*grid_for_block)(std::span<const ArgShape> args, std::uint32_t threads) = nullptr;

  [[nodiscard]] bool accepts(DType t) const noexcept { return !dtype || *dtype == t; }
  // The entry point's name, e.g. "tandem_tile_add_f32_64x64".
  [[nodiscard]] std::string_view entry_point() const noexcept { return symbol->name; }
};

// Every entry, SIMT first, in a stable order (model, name, dtype, tile).
[[nodiscard]] std::span<const KernelEntry> catalog() noexcept;

// Exact lookup. `tile` null = the kernel's default tile; `rank` picks the
// default among ranks (0 = the lowest rank with a default; ignored for SIMT
// and when `tile` is given). Returns null when there is no such entry.
[[nodiscard]] const KernelEntry* find(Model model, std::string_view name, DType dtype,
                                      const TileShape* tile = nullptr, int rank = 0) noexcept;

// Lookup from the arguments of a launch: the dtype is the first view without
// a fixed dtype, the rank that of the partition tensor. On failure returns
// null and, when `why` is given, sets a message listing what exists
// (dtypes, tiles) or the nearest kernel names.
[[nodiscard]] const KernelEntry* resolve(Model model, std::string_view name, std::span<const ArgShape> args,
                                         const TileShape* tile = nullptr, std::string* why = nullptr);

// The parameters of a kernel by name (the same for all its entries); empty
// when unknown.
[[nodiscard]] std::span<const ParamSpec> kernel_params(Model model, std::string_view name) noexcept;
[[nodiscard]] const char* kernel_effect(Model model, std::string_view name) noexcept;

// Sorted, unique kernel names of a model ("did you mean" hints).
[[nodiscard]] std::vector<std::string> kernel_names(Model model);
// Up to `max` known names closest to `name` (edit distance), best first.
[[nodiscard]] std::vector<std::string> suggest(Model model, std::string_view name, std::size_t max = 3);
// The dtypes (sorted by DType) and tiles with entries for a kernel.
[[nodiscard]] std::vector<DType> kernel_dtypes(Model model, std::string_view name);
[[nodiscard]] std::vector<TileShape> kernel_tiles(Model model, std::string_view name, DType dtype);

// Generic argument checks (count, view vs scalar, dtypes, Tile ranks, a
// non-negative shape and strides), then the entry's shape rules.
[[nodiscard]] std::string check_args(const KernelEntry& entry, std::span<const ArgShape> args);

// Launch dimensions. SIMT: the default rule (block 256 unless the kernel says
// otherwise; grid from the largest length, capped) or the caller's grid
// and/or block (each component >= 1; block <= 1024 threads; grid.y, grid.z <=
// 65535). Tile: the partition; a caller grid/block is an error (the tile
// decides both). Call after check_args.
[[nodiscard]] std::string launch_dims(const KernelEntry& entry, std::span<const ArgShape> args,
                                      std::optional<driver::Dim3> grid, std::optional<driver::Dim3> block,
                                      driver::LaunchDims& out);

// SIMT default rule: ceil(len / threads) blocks, at least 1, at most kMaxSimtGrid.
inline constexpr std::uint32_t kSimtDefaultBlock = 256;
inline constexpr std::uint32_t kMaxSimtGrid = 65535;

// --- parameter packing ---------------------------------------------------------

using ScalarValue = std::variant<double, std::int64_t, std::uint64_t>;

// One launch argument, in parameter order: a view (device pointer + shape)
// or a scalar (nullopt = the parameter's default).
struct LaunchArg {
  driver::DevicePtr ptr = 0;
  ArgShape shape;
  std::optional<ScalarValue> scalar;

  [[nodiscard]] static LaunchArg view(driver::DevicePtr p, const ArgShape& s) noexcept {
    LaunchArg a;
    a.ptr = p;
    a.shape = s;
    return a;
  }
  [[nodiscard]] static LaunchArg value(ScalarValue v) noexcept {
    LaunchArg a;
    a.scalar = v;
    return a;
  }
  [[nodiscard]] static LaunchArg defaulted() noexcept { return LaunchArg{}; }
};

// The parameter bytes of one launch and the `void* params[]` array that
// cuLaunchKernel (and the sim) take. Self-contained: copyable, and
// pointers() is recomputed for the object it is called on.
class PackedParams {
 public:
  static constexpr std::size_t kMaxParams = 8;
  static constexpr std::size_t kSlotBytes = kParamSlotBytes;  // the largest TensorParam

  // params[i] points at parameter i's value inside this object. Valid while
  // this object lives and is not modified.
  [[nodiscard]] void** pointers() noexcept;
  [[nodiscard]] std::uint32_t count() const noexcept { return count_; }
  // Parameter i's bytes (its ParamSlot size).
  [[nodiscard]] std::span<const std::byte> bytes(std::uint32_t i) const noexcept;
  // Points view parameter i (a BufferParam or TensorParam, whose first 8
  // bytes are the device pointer) at `ptr`, the rest of its bytes kept: a
  // repeat of a launch on other views of the same shapes. Inline: a
  // repeated kernels::launch calls it for each view.
  void set_view_pointer(std::uint32_t i, driver::DevicePtr ptr) noexcept {
    if (i < count_) std::memcpy(storage_[i], &ptr, sizeof ptr);  // DevicePtr: the slot's first 8 bytes
  }

 private:
  friend std::string pack_params(const KernelEntry&, std::span<const LaunchArg>, PackedParams&);
  // Not cleared as a whole: pack_params clears the slots it uses.
  alignas(16) std::byte storage_[kMaxParams][kSlotBytes];
  std::uint16_t sizes_[kMaxParams] = {};
  void* pointers_[kMaxParams] = {};
  std::uint32_t count_ = 0;
};

// Packs `args` (one per parameter, in order) for `entry`: views become
// BufferParam {ptr, len} (len in bytes for `bytes` params) or TensorParam
// {ptr, shape, strides}; scalars are converted to the parameter's C type
// (integers: exact and in range; floats: finite and in range). Does not
// re-run check_args.
[[nodiscard]] std::string pack_params(const KernelEntry& entry, std::span<const LaunchArg> args,
                                      PackedParams& out);

// --- embedded device code ------------------------------------------------------

// The fatbins compiled into this library (data == nullptr when built without
// CUDA: the kernels then run on the simulated device only).
[[nodiscard]] std::span<const driver::ModuleImage* const> modules() noexcept;
[[nodiscard]] bool has_device_code() noexcept;

}  // namespace tandem::kernels
