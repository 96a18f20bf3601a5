// SPDX-License-Identifier: Apache-2.0
// Per-kernel descriptors behind the catalog (internal to kernels/): the
// parameter lists of the spec table, effects, shape rules, launch rules and
// tolerances. One descriptor template per kernel; the instance lists supply
// the dtype tags (and tile shapes).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/ctypes.hpp"
#include "tandem/tile/config.hpp"

namespace tandem::kernels::detail {

using driver::AccessMode;
using driver::LaunchDims;
using Args = std::span<const ArgShape>;

// --- parameter list helpers ---------------------------------------------------------

constexpr ParamSpec in(const char* name, int rank = 0) {
  return ParamSpec{name,  ArgKind::view, AccessMode::read, std::nullopt,
                   false, rank,          DType::f32,       std::nullopt};
}
constexpr ParamSpec out(const char* name, int rank = 0) {
  return ParamSpec{name,  ArgKind::view, AccessMode::write, std::nullopt,
                   false, rank,          DType::f32,        std::nullopt};
}
constexpr ParamSpec inout(const char* name, int rank = 0) {
  return ParamSpec{name,       ArgKind::view, AccessMode::read_write, std::nullopt, false, rank,
                   DType::f32, std::nullopt};
}
constexpr ParamSpec with_dtype(ParamSpec p, DType d) {
  p.fixed_dtype = d;
  return p;
}
constexpr ParamSpec as_atomic(ParamSpec p) {
  p.mode = AccessMode::atomic;
  return p;
}
constexpr ParamSpec as_bytes(ParamSpec p) {
  p.bytes = true;
  return p;
}
constexpr ParamSpec scalar(const char* name, DType type, std::optional<double> def = std::nullopt) {
  return ParamSpec{name, ArgKind::scalar, AccessMode::read, std::nullopt, false, 0, type, def};
}

template <std::size_t N>
constexpr std::array<driver::ParamSlot, N> make_slots(const ParamSpec (&p)[N]) {
  std::array<driver::ParamSlot, N> s{};
  for (std::size_t i = 0; i < N; ++i) {
    if (p[i].kind == ArgKind::scalar) {
      s[i] = driver::ParamSlot{driver::ParamKind::scalar,
                               static_cast<std::uint16_t>(dtype_size(p[i].scalar_dtype))};
    } else {
      const std::size_t bytes = param_bytes(p[i].rank);  // BufferParam / TensorParam<T, rank>
      s[i] = driver::ParamSlot{driver::ParamKind::pointer_led, static_cast<std::uint16_t>(bytes)};
    }
  }
  return s;
}
template <class D>
inline constexpr auto slots_v = make_slots(D::params);

constexpr std::optional<DType> dtype_of_tag(int tag) {
  return tag == dt::any ? std::nullopt : std::optional<DType>(static_cast<DType>(tag));
}

// --- shape-rule helpers (implemented in catalog.cpp) ----------------------------------

std::string same_length(Args a, std::initializer_list<int> idx, std::span<const ParamSpec> params);
std::string same_shape(Args a, std::initializer_list<int> idx, std::span<const ParamSpec> params);
std::string at_least_one(Args a, int idx, std::span<const ParamSpec> params);
std::uint64_t max_elements(Args a);
inline std::string no_rule(Args /*a*/) { return {}; }

// SIMT grids: one thread per element (capped), or `per_thread` elements per
// thread with a lower cap (reductions: fewer blocks, fewer atomics).
inline std::uint32_t simt_grid(Args a, std::uint32_t threads, std::uint64_t per_thread, std::uint32_t cap) {
  const std::uint64_t work = std::max<std::uint64_t>(max_elements(a), 1);
  const std::uint64_t per_block = static_cast<std::uint64_t>(threads) * per_thread;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>((work + per_block - 1) / per_block, 1, cap));
}
inline std::uint32_t elementwise_grid(Args a, std::uint32_t threads) {
  return simt_grid(a, threads, 1, kMaxSimtGrid);
}
inline std::uint32_t reduce_grid(Args a, std::uint32_t threads) { return simt_grid(a, threads, 16, 1024); }
inline std::uint32_t one_block(Args /*a*/, std::uint32_t /*threads*/) { return 1; }

template <std::uint32_t (*Grid)(Args, std::uint32_t), std::uint32_t Block>
LaunchDims simt_dims(Args a) {
  LaunchDims d;
  d.block.x = Block;
  d.grid.x = Grid(a, Block);
  return d;
}

// Tile grids: one block per tile of the partition tensor (row-major; a
// rank-1 partition tensor is cut into pieces of tn).
std::uint64_t tile_count(const ArgShape& partition, int tm, int tn);

template <int P, int CM, int CN, int Threads>
LaunchDims tile_dims(Args a) {
  LaunchDims d;
  d.block.x = static_cast<std::uint32_t>(Threads);
  const std::uint64_t n = std::max<std::uint64_t>(tile_count(a[P], CM, CN), 1);
  d.grid.x = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, 0x7fffffffU));
  return d;
}

// --- SIMT descriptors -----------------------------------------------------------------

namespace simt {

constexpr Tolerance kExact{};

template <int DT>
struct fill {
  static constexpr ParamSpec params[] = {out("out"), scalar("value", scalar_dtype(DT))};
  static constexpr const char* effect = "out[i] = value";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args) { return {}; }
  static constexpr auto grid = elementwise_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct iota {
  static constexpr ParamSpec params[] = {out("out"), scalar("start", scalar_dtype(DT), 0.0),
                                         scalar("step", scalar_dtype(DT), 1.0)};
  static constexpr const char* effect =
      "out[i] = start + i*step (floats: fma(i, step, start); integers wrap)";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args) { return {}; }
  static constexpr auto grid = elementwise_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct axpy {
  static constexpr ParamSpec params[] = {in("x"), inout("y"), scalar("a", scalar_dtype(DT))};
  static constexpr const char* effect = "y[i] = a*x[i] + y[i] (floats: one fma; integers wrap)";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return same_length(a, {0, 1}, params); }
  static constexpr auto grid = elementwise_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct scale {
  static constexpr ParamSpec params[] = {inout("x"), scalar("a", scalar_dtype(DT))};
  static constexpr const char* effect = "x[i] = a*x[i]";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args) { return {}; }
  static constexpr auto grid = elementwise_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct copy {
  static constexpr ParamSpec params[] = {in("src"), out("dst")};
  static constexpr const char* effect = "dst[i] = src[i] (equal lengths)";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return same_length(a, {0, 1}, params); }
  static constexpr auto grid = elementwise_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct add {
  static constexpr ParamSpec params[] = {in("a"), in("b"), out("out")};
  static constexpr const char* effect = "out[i] = a[i] + b[i] (equal lengths)";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return same_length(a, {0, 1, 2}, params); }
  static constexpr auto grid = elementwise_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct atomic_sum {
  static constexpr ParamSpec params[] = {in("x"), as_atomic(inout("acc"))};
  static constexpr const char* effect = "acc[0] += sum x[i] (one atomic per block; floats summed in f64)";
  // f32: each block's f64 total is added to acc[0] in f32 (<= 1024 blocks by
  // default): rounding error <= blocks * 2^-24 * M, M = |acc0| + sum |x_i|.
  static constexpr Tolerance tolerance{DT == dt::f32 ? 1e-4 : DT == dt::f64 ? 1e-10 : 0.0};
  static std::string validate(Args a) { return at_least_one(a, 1, params); }
  static constexpr auto grid = reduce_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct histogram {
  static constexpr ParamSpec params[] = {in("x"), as_atomic(with_dtype(inout("bins"), DType::u32)),
                                         scalar("lo", DType::f64), scalar("hi", DType::f64)};
  static constexpr const char* effect =
      "bins[b] += count of x in [lo + b*w, lo + (b+1)*w), w = (hi-lo)/len(bins); outside [lo, hi) ignored";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return at_least_one(a, 1, params); }
  static constexpr auto grid = reduce_grid;
  static constexpr std::uint32_t block = kSimtDefaultBlock;
};

template <int DT>
struct checksum {
  static constexpr ParamSpec params[] = {as_bytes(in("x")), with_dtype(out("out"), DType::u32)};
  static constexpr const char* effect =
      "out[0] = wrapping sum of the little-endian 32-bit words of x's bytes (last word zero-padded); any "
      "dtype";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return at_least_one(a, 1, params); }
  static constexpr auto grid = one_block;  // every block computes the whole sum
  static constexpr std::uint32_t block = 1024;
};

template <int DT>
struct spin {
  static constexpr ParamSpec params[] = {as_bytes(inout("x")), scalar("ns", DType::u64)};
  static constexpr const char* effect =
      "busy-waits ns nanoseconds (%globaltimer) in one thread; x unchanged; any dtype";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args) { return {}; }
  static constexpr auto grid = one_block;
  static constexpr std::uint32_t block = 32;
};

}  // namespace simt

// --- Tile descriptors -----------------------------------------------------------------

namespace tile_k {

constexpr Tolerance kExact{};

template <int DT, int R>
struct add {
  static constexpr ParamSpec params[] = {in("a", R), in("b", R), out("out", R)};
  static constexpr int partition = 2;
  template <int TM, int TN>
  static LaunchDims dims(Args a) {
    return tile_dims<partition, TM, TN, tile::threads_for(TM, TN)>(a);
  }
  static constexpr const char* effect = "out = a + b, elementwise (same shape)";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return same_shape(a, {0, 1, 2}, params); }
};

template <int DT, int R>
struct scale {
  static constexpr ParamSpec params[] = {inout("x", R), scalar("a", scalar_dtype(DT))};
  static constexpr int partition = 0;
  template <int TM, int TN>
  static LaunchDims dims(Args a) {
    return tile_dims<partition, TM, TN, tile::threads_for(TM, TN)>(a);
  }
  static constexpr const char* effect = "x = a*x, elementwise";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args) { return {}; }
};

template <int DT, int R>
struct copy {
  static constexpr ParamSpec params[] = {in("src", R), out("dst", R)};
  static constexpr int partition = 1;
  template <int TM, int TN>
  static LaunchDims dims(Args a) {
    return tile_dims<partition, TM, TN, tile::threads_for(TM, TN)>(a);
  }
  static constexpr const char* effect = "dst = src (same shape)";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return same_shape(a, {0, 1}, params); }
};

std::string transpose_rule(Args a);
std::string matmul_rule(Args a);
std::string row_sum_rule(Args a);

template <int DT, int R>
struct transpose {
  static constexpr ParamSpec params[] = {in("src", 2), out("dst", 2)};
  static constexpr int partition = 1;
  template <int TM, int TN>
  static LaunchDims dims(Args a) {
    return tile_dims<partition, TM, TN, tile::threads_for(TM, TN)>(a);
  }
  static constexpr const char* effect = "dst = transpose(src) (2-D; dst tiles, padded shared memory)";
  static constexpr Tolerance tolerance = kExact;
  static std::string validate(Args a) { return transpose_rule(a); }
};

template <int DT, int R>
struct matmul {
  static constexpr ParamSpec params[] = {in("a", 2), in("b", 2), out("c", 2)};
  static constexpr int partition = 2;
  template <int TM, int TN>
  static LaunchDims dims(Args a) {
    return tile_dims<partition, TM, TN, tile::threads_for(TM, TN)>(a);
  }
  static constexpr const char* effect =
      "c = a . b (2-D; c tiles, k-slabs of 32 in shared memory, f32 accumulate)";
  // f32 accumulation over K terms: |error| <= K * 2^-24 * M, M = sum_k |a_ik b_kj|;
  // 1e-4 covers K <= 1600 in the worst case and far more in practice.
  static constexpr Tolerance tolerance{1e-4};
  static std::string validate(Args a) { return matmul_rule(a); }
};

template <int DT, int R>
struct row_sum {
  static constexpr ParamSpec params[] = {in("x", 2), out("out", 1)};
  static constexpr int partition = 1;
  static constexpr const char* effect = "out[i] = sum_j x[i, j] (2-D x, 1-D out; floats summed in f64)";
  // The tile is TM rows x TN columns of x; out is cut into TM-element pieces.
  template <int TM, int TN>
  static LaunchDims dims(Args a) {
    return tile_dims<partition, 1, TM, tile::threads_for(TM, TN)>(a);
  }
  // Both sides sum in f64 and round once: they differ by at most 1 ulp of T.
  static constexpr Tolerance tolerance{DT == dt::f32 ? 1e-6 : DT == dt::f64 ? 1e-10 : 0.0};
  static std::string validate(Args a) { return row_sum_rule(a); }
};

}  // namespace tile_k

}  // namespace tandem::kernels::detail
