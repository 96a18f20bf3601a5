// SPDX-License-Identifier: Apache-2.0
// Every compiled kernel (every catalog entry) on a real device against its
// host reference, on random inputs with fixed seeds (kernels/README.md,
// "Comparing with the host reference"). Needs a CUDA device; skips without.
//
// For each case: every view parameter gets its own base allocation, filled
// with random data (read / read-write views) or a poison pattern (write-only
// views, so unwritten elements show), and the kernel's view is cut out of it
// (SIMT: a slice, possibly misaligned by one element; Tile: the base tensor
// itself or a tensor_view with [begin, end) ranges that cut rows and
// columns). The launch goes through tandem::kernels::launch. The expected
// result runs entry.symbol->host on host copies of the same bases, with the
// same parameters packed by pack_params around host addresses. Every base is
// read back whole and compared with its host copy: inside the kernel's views
// per the entry's tolerance (bit-exact when rtol is 0, else |d - h| <= rtol*M
// with the kernel's M), outside them exactly (nothing may be written there).
// Checks with expectations computed by hand: kernels_targeted_gpu_test.cpp.
//
// The seed of every case is printed on failure; TANDEM_TEST_SEED overrides
// the base seed. TANDEM_KERNELS_TEST_ON_SIM=1 runs everything on the
// simulated device (a check of this harness: the sim runs the references).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_device_test.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"
#include "tandem/testing/sim.hpp"
#include "tandem/view.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using tandem::DimRange;
using tandem::DType;
using tandem::View;
using tandem::driver::Dim3;
namespace k = tandem::kernels;

std::uint64_t hash_text(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

std::string dims_text(std::span<const std::int64_t> d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

std::string dtype_text(DType t) { return std::string(tandem::dtype_name(t)); }

// --- element values ---------------------------------------------------------------

bool is_float(DType t) { return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16; }

float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fU;
  const std::uint32_t mant = h & 0x3ffU;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000U | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  const float v = static_cast<float>(mant) * 0x1p-24F;
  return sign ? -v : v;
}

// A representable f16 (truncated, normal or zero) for |f| <= 65504.
std::uint16_t float_to_f16_trunc(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000U);
  const std::uint32_t ax = x & 0x7fffffffU;
  if (ax < 0x38800000U) return sign;  // below the smallest normal: zero
  const std::uint32_t e = (ax >> 23) - 112;
  return static_cast<std::uint16_t>(sign | (e << 10) | ((ax & 0x7fffffU) >> 13));
}

double value_at(DType t, const std::byte* p) {
  switch (t) {
    case DType::f32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::f64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::f16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return f16_to_float(v);
    }
    case DType::bf16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return std::bit_cast<float>(static_cast<std::uint32_t>(v) << 16);
    }
    case DType::i32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::u32: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::i64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::u64: {
      std::uint64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::u8:
      return std::to_integer<unsigned>(*p);
    case DType::i8:
      return static_cast<std::int8_t>(std::to_integer<unsigned>(*p));
    default:
      return 0.0;
  }
}

std::uint64_t bits_at(DType t, const std::byte* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, tandem::dtype_size(t));
  return v;
}

std::string element_text(DType t, const std::byte* p) {
  char buf[96];
  const std::uint64_t b = bits_at(t, p);
  if (is_float(t)) {
    std::snprintf(buf, sizeof buf, "%.17g (bits 0x%" PRIx64 ")", value_at(t, p), b);
  } else if (t == DType::i32 || t == DType::i64 || t == DType::i8) {
    std::snprintf(buf, sizeof buf, "%.0f (bits 0x%" PRIx64 ")", value_at(t, p), b);
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " (bits 0x%" PRIx64 ")", b, b);
  }
  return buf;
}

// --- random data ---------------------------------------------------------------------

constexpr std::byte kPoison{0xA5};

// What a base's bytes start as.
struct Dist {
  enum Kind : std::uint8_t { poison, full_bits, uniform } kind = full_bits;
  double lo = -4.0, hi = 4.0;  // uniform: floats in [lo, hi), integers in [lo, hi]
};

Dist poisoned() { return {Dist::poison, 0, 0}; }
Dist any_bits() { return {Dist::full_bits, 0, 0}; }
Dist uniform(double lo, double hi) { return {Dist::uniform, lo, hi}; }

// Floats: NaN-free, moderate range; integers: every bit pattern (wrapping)
// unless a range is given.
void fill_data(DType t, std::span<std::byte> out, const Dist& d, std::mt19937_64& g) {
  const std::size_t es = tandem::dtype_size(t);
  const std::size_t n = out.size() / es;
  if (d.kind == Dist::poison) {
    std::fill(out.begin(), out.end(), kPoison);
    return;
  }
  std::uniform_real_distribution<double> real(d.kind == Dist::uniform ? d.lo : -4.0,
                                              d.kind == Dist::uniform ? d.hi : 4.0);
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * es;
    if (is_float(t)) {
      const double v = real(g);
      switch (t) {
        case DType::f64:
          std::memcpy(p, &v, 8);
          break;
        case DType::f32: {
          const auto f = static_cast<float>(v);
          std::memcpy(p, &f, 4);
          break;
        }
        case DType::f16: {
          const std::uint16_t h = float_to_f16_trunc(static_cast<float>(v));
          std::memcpy(p, &h, 2);
          break;
        }
        default: {  // bf16: the top half of an f32 (truncation)
          const auto h =
              static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16);
          std::memcpy(p, &h, 2);
          break;
        }
      }
    } else if (d.kind == Dist::full_bits) {
      const std::uint64_t r = g();
      std::memcpy(p, &r, es);
    } else {
      std::uniform_int_distribution<std::int64_t> in(static_cast<std::int64_t>(d.lo),
                                                     static_cast<std::int64_t>(d.hi));
      const std::int64_t v = in(g);
      std::memcpy(p, &v, es);  // little-endian: the low bytes are the value
    }
  }
}

// A random value-like scalar of an entry's scalar type: floats in [lo, hi),
// integers anywhere in the type's range (the kernels wrap).
k::ScalarValue random_scalar(DType scalar_type, std::mt19937_64& g, double lo = -2.0, double hi = 2.0) {
  switch (scalar_type) {
    case DType::i32:
      return std::int64_t{std::uniform_int_distribution<std::int32_t>(
          std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max())(g)};
    case DType::i64:
      return static_cast<std::int64_t>(g());
    case DType::u32:
      return std::uint64_t{static_cast<std::uint32_t>(g())};
    case DType::u8:
      return std::uint64_t{static_cast<std::uint8_t>(g())};
    case DType::u64:
      return g();
    default:
      return std::uniform_real_distribution<double>(lo, hi)(g);
  }
}

std::string scalar_text(const std::optional<k::ScalarValue>& v) {
  if (!v) return "default";
  if (const auto* d = std::get_if<double>(&*v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  if (const auto* i = std::get_if<std::int64_t>(&*v)) return std::to_string(*i);
  return std::to_string(std::get<std::uint64_t>(*v));
}

// --- cases ------------------------------------------------------------------------------

// One view parameter: a base allocation and the view the kernel gets.
struct ViewPlan {
  DType dtype = DType::f32;
  std::vector<std::int64_t> base_shape;  // rank 1 (buffers) or the tensor's rank
  bool tensor = false;                   // Tile: base is converted with to_tensor(base_shape)
  bool whole = false;                    // Tile: the view is the base tensor itself
  std::vector<DimRange> ranges;          // Tile, !whole: tensor_view ranges
  std::uint64_t offset = 0, len = 0;     // SIMT: base.slice(offset, len)
  Dist init;
  std::string layout;  // for messages
};

struct Param {
  bool is_view = false;
  ViewPlan view;
  std::optional<k::ScalarValue> scalar;  // nullopt: the parameter's default
};

struct Case {
  std::string label;
  std::vector<Param> params;
  std::optional<Dim3> grid, block;
};

std::int64_t product(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

ViewPlan buffer_plan(DType t, std::uint64_t len, std::uint64_t offset, Dist init,
                     std::uint64_t pad_after = 1) {
  ViewPlan v;
  v.dtype = t;
  v.base_shape = {static_cast<std::int64_t>(offset + len + pad_after)};
  v.offset = offset;
  v.len = len;
  v.init = init;
  v.layout = "slice(" + std::to_string(offset) + ", " + std::to_string(len) + ") of a " +
             std::to_string(offset + len + pad_after) + "-element buffer";
  return v;
}

// Tile layouts of a logical shape (rank 1 or 2).
enum class Layout : std::uint8_t { whole, tail, offset1, strided, padded };

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::whole:
      return "whole";
    case Layout::tail:
      return "tail";
    case Layout::offset1:
      return "offset1";
    case Layout::strided:
      return "strided";
    case Layout::padded:
      return "padded";
  }
  return "?";
}

ViewPlan tensor_plan(DType t, std::vector<std::int64_t> shape, Layout layout, Dist init) {
  ViewPlan v;
  v.dtype = t;
  v.tensor = true;
  v.init = init;
  if (shape.size() == 1) {  // rank 1 has no rows to cut: strided -> offset1, padded -> tail
    if (layout == Layout::strided) layout = Layout::offset1;
    if (layout == Layout::padded) layout = Layout::tail;
  } else {
    if (layout == Layout::offset1) layout = Layout::strided;
    if (layout == Layout::tail) layout = Layout::padded;
  }
  const std::int64_t m = shape[0];
  switch (layout) {
    case Layout::whole:
      v.whole = true;
      v.base_shape = shape;
      break;
    case Layout::tail:  // aligned start, poisoned tail
      v.base_shape = {m + 3};
      v.ranges = {{0, m}};
      break;
    case Layout::offset1:  // misaligned by one element
      v.base_shape = {m + 3};
      v.ranges = {{1, m + 1}};
      break;
    case Layout::strided: {  // rows and columns cut: non-contiguous, misaligned
      const std::int64_t n = shape[1];
      v.base_shape = {m + 3, n + 5};
      v.ranges = {{1, m + 1}, {2, n + 2}};
      break;
    }
    case Layout::padded: {  // aligned start and 16-byte aligned row pitch, padded rows
      const std::int64_t n = shape[1];
      v.base_shape = {m + 1, (n + 7) / 8 * 8 + 8};
      v.ranges = {{0, m}, {0, n}};
      break;
    }
  }
  v.layout =
      std::string(layout_name(layout)) + " view " + dims_text(shape) + " of base " + dims_text(v.base_shape);
  if (!v.whole) {
    v.layout += " ranges [";
    for (std::size_t i = 0; i < v.ranges.size(); ++i) {
      v.layout += (i ? ", " : "") + std::string("[") + std::to_string(v.ranges[i].begin) + ", " +
                  std::to_string(v.ranges[i].end) + ")";
    }
    v.layout += "]";
  }
  return v;
}

std::string_view name_of(const k::KernelEntry& e) { return e.name; }

// The dtype of the entry's element views (dtype-agnostic entries: u8).
DType element_dtype(const k::KernelEntry& e) { return e.dtype.value_or(DType::u8); }

bool driver_reads(const k::ParamSpec& p) { return tandem::reads(p.mode); }

bool driver_writes(const k::ParamSpec& p) { return tandem::writes(p.mode); }

// Initial contents of a view parameter: write-only views are poisoned;
// read and read-write views get random data suited to the kernel.
Dist input_dist(const k::KernelEntry& e, const k::ParamSpec& p, DType t) {
  if (!driver_reads(p)) return poisoned();
  const std::string_view n = e.name;
  if (n == "histogram" && std::string_view(p.name) == "x") {
    if (is_float(t)) return uniform(-1.5, 1.5);
    return t == DType::u32 ? uniform(0, 2000) : uniform(-1000, 1000);
  }
  if (n == "histogram") return uniform(0, 1000);  // bins: counts already there
  if (n == "matmul" || n == "atomic_sum") return is_float(t) ? uniform(-1.0, 1.0) : any_bits();
  return is_float(t) ? uniform(-4.0, 4.0) : any_bits();
}

// Scalars of a case: random values of the right type, sensible for the kernel.
void set_scalars(const k::KernelEntry& e, Case& c, std::mt19937_64& g) {
  const std::string_view n = e.name;
  const DType t = element_dtype(e);
  for (std::size_t i = 0; i < e.params.size(); ++i) {
    const k::ParamSpec& p = e.params[i];
    if (p.kind != k::ArgKind::scalar) continue;
    Param& out = c.params[i];
    const std::string_view pn = p.name;
    if (n == "spin") {
      out.scalar = std::uint64_t{2000};
    } else if (n == "histogram") {
      if (is_float(t))
        out.scalar = pn == "lo" ? -1.0 : 1.0;
      else if (t == DType::u32)
        out.scalar = pn == "lo" ? 100.0 : 1800.0;
      else
        out.scalar = pn == "lo" ? -500.0 : 700.0;
    } else if (n == "fill") {
      out.scalar = random_scalar(p.scalar_dtype, g, -100.0, 100.0);
    } else if (n == "iota") {
      out.scalar =
          pn == "start" ? random_scalar(p.scalar_dtype, g, -100.0, 100.0) : random_scalar(p.scalar_dtype, g);
    } else {
      out.scalar = random_scalar(p.scalar_dtype, g);
    }
  }
}

// --- SIMT cases -------------------------------------------------------------------------------

Case simt_case(const k::KernelEntry& e, std::uint64_t len, std::uint64_t offset, std::uint64_t bins,
               std::mt19937_64& g, std::string label) {
  Case c;
  c.label = std::move(label);
  c.params.resize(e.params.size());
  const DType t = element_dtype(e);
  for (std::size_t i = 0; i < e.params.size(); ++i) {
    const k::ParamSpec& p = e.params[i];
    if (p.kind != k::ArgKind::view) continue;
    const DType pt = p.fixed_dtype.value_or(t);
    const std::string_view pn = p.name;
    std::uint64_t n = len;
    if (pn == "acc" || (name_of(e) == "checksum" && pn == "out")) n = 1;
    if (pn == "bins") n = bins;
    c.params[i].is_view = true;
    c.params[i].view = buffer_plan(pt, n, offset, input_dist(e, p, pt), 2);
  }
  set_scalars(e, c, g);
  return c;
}

std::vector<Case> simt_cases(const k::KernelEntry& e, std::mt19937_64& g) {
  std::vector<Case> cases;
  const std::string_view n = e.name;
  const bool reduction = n == "atomic_sum" || n == "histogram";
  if (n == "checksum") {
    // x as u8 slices at byte offsets 0..4 (16-byte, 4-byte and byte paths),
    // then wider dtypes (x is passed as bytes whatever its dtype).
    for (std::uint64_t len : {0ULL, 1ULL, 2ULL, 3ULL, 5ULL, 1000ULL, 4097ULL, 65537ULL, (1ULL << 20) + 3}) {
      for (std::uint64_t off : {0ULL, 1ULL, 2ULL, 3ULL, 4ULL}) {
        Case c = simt_case(e, len, off, 0, g,
                           "u8 x: " + std::to_string(len) + " bytes at byte offset " + std::to_string(off));
        c.params[0].view = buffer_plan(DType::u8, len, off, any_bits(), 3);
        cases.push_back(std::move(c));
      }
    }
    for (DType t : {DType::f32, DType::f64, DType::f16, DType::i64}) {
      Case c = simt_case(e, 4097, 1, 0, g, dtype_text(t) + " x: 4097 elements at element offset 1");
      c.params[0].view = buffer_plan(t, 4097, 1, is_float(t) ? uniform(-4.0, 4.0) : any_bits(), 2);
      cases.push_back(std::move(c));
    }
    Case c = simt_case(e, 65537, 3, 0, g,
                       "u8 x: 65537 bytes at offset 3, caller grid {3, 2, 1} block {100, 3, 1}");
    c.params[0].view = buffer_plan(DType::u8, 65537, 3, any_bits(), 3);
    c.grid = Dim3{3, 2, 1};
    c.block = Dim3{100, 3, 1};
    cases.push_back(std::move(c));
    return cases;
  }
  if (n == "spin") {
    for (DType t : {DType::u8, DType::f32, DType::f64}) {
      for (std::uint64_t off : {0ULL, 1ULL}) {
        Case c = simt_case(e, 1000, off, 0, g,
                           dtype_text(t) + " x: 1000 elements at offset " + std::to_string(off));
        c.params[0].view = buffer_plan(t, 1000, off, is_float(t) ? uniform(-4.0, 4.0) : any_bits(), 2);
        cases.push_back(std::move(c));
      }
    }
    Case c = simt_case(e, 4097, 1, 0, g, "u8 x: 4097 bytes at offset 1, caller block {48, 3, 1}");
    c.params[0].view = buffer_plan(DType::u8, 4097, 1, any_bits(), 2);
    c.block = Dim3{48, 3, 1};
    cases.push_back(std::move(c));
    return cases;
  }
  std::vector<std::uint64_t> lengths = {0, 1, 1000, 4097, 65537};
  if (reduction) lengths.push_back(1ULL << 20);  // 256 blocks by default
  for (std::uint64_t len : lengths) {
    if (reduction && len == 0) continue;  // one empty-x case below
    for (std::uint64_t off : {0ULL, 1ULL}) {
      const std::uint64_t bins = (len + off) % 2 == 0 ? 100 : 3000;  // shared-memory and global-atomic paths
      std::string label = "n=" + std::to_string(len) + " at element offset " + std::to_string(off) +
                          (off ? " (misaligned)" : "");
      if (n == "histogram") label += ", " + std::to_string(bins) + " bins";
      cases.push_back(simt_case(e, len, off, bins, g, label));
    }
  }
  if (reduction) cases.push_back(simt_case(e, 0, 1, 100, g, "n=0 at element offset 1 (empty x)"));
  // Caller grid/block: a 2-D block that is not a multiple of 32, with the
  // grid derived from it; then a small 2-D grid (grid-stride loops).
  {
    Case c = simt_case(e, 65537, 1, 3000, g, "n=65537 at offset 1, caller block {48, 3, 1} (144 threads)");
    c.block = Dim3{48, 3, 1};
    cases.push_back(std::move(c));
  }
  {
    Case c = simt_case(e, 65537, 1, 100, g, "n=65537 at offset 1, caller grid {7, 3, 1} block {40, 5, 1}");
    c.grid = Dim3{7, 3, 1};
    c.block = Dim3{40, 5, 1};
    cases.push_back(std::move(c));
  }
  if (reduction) {
    Case c = simt_case(e, 1ULL << 20, 0, 3000, g,
                       "n=2^20, caller grid {1024, 1, 1} block {256, 1, 1} (1024 blocks)");
    c.grid = Dim3{1024, 1, 1};
    c.block = Dim3{256, 1, 1};
    cases.push_back(std::move(c));
  }
  return cases;
}

// --- Tile cases --------------------------------------------------------------------------------

// The logical shape of each view parameter of a Tile kernel for an
// output/partition shape (m, n); rank-1 kernels use m only.
std::vector<std::int64_t> tile_shape_of(const k::KernelEntry& e, std::string_view param, std::int64_t m,
                                        std::int64_t n, std::int64_t kdim) {
  const std::string_view kn = e.name;
  if (e.tile.rank == 1) return {m};
  if (kn == "transpose" && param == "src") return {n, m};
  if (kn == "row_sum" && param == "out") return {m};
  if (kn == "matmul" && param == "a") return {m, kdim};
  if (kn == "matmul" && param == "b") return {kdim, n};
  return {m, n};
}

std::vector<Case> tile_cases(const k::KernelEntry& e, std::mt19937_64& g) {
  struct Shape {
    std::int64_t m, n, k;
  };
  std::vector<Shape> shapes;
  if (e.tile.rank == 1) {
    for (std::int64_t len : {0, 1, 1000, 4097, 65537}) shapes.push_back({len, 0, 0});
  } else {
    // matmul: K not a multiple of the 32-deep k-slab; bounded so that the
    // host reference stays quick.
    shapes = {{0, 17, 5}, {1, 1, 1}, {33, 65, 47}, {100, 257, 129}, {1000, 1000, 64}};
  }
  const Layout all[] = {Layout::whole, Layout::strided, Layout::padded};
  std::vector<Case> cases;
  const DType t = element_dtype(e);
  for (const Shape& s : shapes) {
    for (int li = 0; li < 4; ++li) {  // whole, strided (offset1), padded (tail), mixed
      Case c;
      c.params.resize(e.params.size());
      std::string shape_label =
          e.tile.rank == 1 ? "n=" + std::to_string(s.m) : std::to_string(s.m) + "x" + std::to_string(s.n);
      if (name_of(e) == "matmul") shape_label += " (k=" + std::to_string(s.k) + ")";
      int view_index = 0;
      for (std::size_t i = 0; i < e.params.size(); ++i) {
        const k::ParamSpec& p = e.params[i];
        if (p.kind != k::ArgKind::view) continue;
        const Layout layout = li < 3 ? all[li] : all[(view_index + 1) % 3];
        ++view_index;
        const DType pt = p.fixed_dtype.value_or(t);
        c.params[i].is_view = true;
        c.params[i].view =
            tensor_plan(pt, tile_shape_of(e, p.name, s.m, s.n, s.k), layout, input_dist(e, p, pt));
      }
      c.label = shape_label + ", " + (li < 3 ? std::string(layout_name(all[li])) : std::string("mixed")) +
                " layout";
      set_scalars(e, c, g);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// --- host views, magnitudes, coordinates ----------------------------------------------------

struct HostView {
  const std::byte* base = nullptr;  // the base allocation's host copy
  std::uint64_t offset = 0;         // bytes from the base to element 0
  k::ArgShape shape;
  [[nodiscard]] double at(std::int64_t i, std::int64_t j = 0) const {
    const std::int64_t el = i * shape.stride[0] + (shape.rank > 1 ? j * shape.stride[1] : 0);
    return value_at(shape.dtype,
                    base + offset + static_cast<std::uint64_t>(el) * tandem::dtype_size(shape.dtype));
  }
};

// M of the README's tolerance rule for element (i, j) of output parameter
// `out`; nullopt when this test does not know the kernel (a new tolerance-
// bearing kernel must teach the test its M).
std::optional<double> magnitude(const k::KernelEntry& e, const std::vector<HostView>& in, std::size_t out,
                                std::int64_t i, std::int64_t j) {
  const std::string_view n = e.name;
  if (n == "atomic_sum" && out == 1) {
    double m = std::fabs(in[1].at(0));  // |acc0|
    for (std::int64_t q = 0; q < in[0].shape.shape[0]; ++q) m += std::fabs(in[0].at(q));
    return m;
  }
  if (n == "row_sum" && out == 1) {
    double m = 0;
    for (std::int64_t q = 0; q < in[0].shape.shape[1]; ++q) m += std::fabs(in[0].at(i, q));
    return m;
  }
  if (n == "matmul" && out == 2) {
    double m = 0;
    for (std::int64_t q = 0; q < in[0].shape.shape[1]; ++q) m += std::fabs(in[0].at(i, q) * in[1].at(q, j));
    return m;
  }
  return std::nullopt;
}

// Maps base element `idx` to view coordinates; false when outside the view.
bool view_coords(const k::ArgShape& s, std::int64_t view_first, std::int64_t idx, std::int64_t& i,
                 std::int64_t& j) {
  i = j = 0;
  const std::int64_t d = idx - view_first;
  if (d < 0 || s.elements() == 0) return false;
  if (s.rank == 1) {
    const std::int64_t st = std::max<std::int64_t>(s.stride[0], 1);
    if (d % st != 0) return false;
    i = d / st;
    return i < s.shape[0];
  }
  const std::int64_t s0 = std::max<std::int64_t>(s.stride[0], 1), s1 = std::max<std::int64_t>(s.stride[1], 1);
  i = d / s0;
  const std::int64_t rem = d - i * s0;
  if (rem % s1 != 0) return false;
  j = rem / s1;
  return i < s.shape[0] && j < s.shape[1];
}

std::string base_index_text(const std::vector<std::int64_t>& base_shape, std::int64_t idx) {
  if (base_shape.size() == 2 && base_shape[1] > 0) {
    return "base index " + std::to_string(idx) + " = base[" + std::to_string(idx / base_shape[1]) + ", " +
           std::to_string(idx % base_shape[1]) + "]";
  }
  return "base index " + std::to_string(idx);
}

// --- summary ------------------------------------------------------------------------------------

struct KernelStats {
  int entries = 0;
  int cases = 0;
  int failed_entries = 0;
  bool exact = true;
  std::map<std::string, double> max_rel;  // per dtype, for tolerance entries
  std::map<std::string, double> rtol;
};

std::mutex g_stats_mu;
std::map<std::string, KernelStats>& all_stats() {
  static std::map<std::string, KernelStats> s;
  return s;
}
int g_entries_checked = 0;
int g_cases_checked = 0;

std::string stats_text(const std::string& key, const KernelStats& s) {
  std::string t =
      key + ": " + std::to_string(s.entries) + " entries, " + std::to_string(s.cases) + " cases, ";
  if (s.failed_entries != 0) t += "FAILED in " + std::to_string(s.failed_entries) + " entries, ";
  if (s.exact) return t + (s.failed_entries != 0 ? "not bit-exact" : "bit-exact");
  t += "max |dev-host|/M";
  for (const auto& [dt, rel] : s.max_rel) {
    char buf[80];
    std::snprintf(buf, sizeof buf, " %s=%.3g (rtol %.0e)", dt.c_str(), rel, s.rtol.at(dt));
    t += buf;
  }
  return t;
}

// --- running one case ------------------------------------------------------------------------------

struct CaseResult {
  bool ok = true;
  double max_rel = 0.0;
};

class CaseRunner {
 public:
  CaseRunner(const tandem::Stream& s, const k::KernelEntry& e, const Case& c, std::uint64_t seed)
      : s_(s), e_(e), c_(c), seed_(seed) {}

  CaseResult run() {
    try {
      return run_unchecked();
    } catch (const tandem::Error& err) {
      ADD_FAILURE() << where() << ": tandem::Error (" << tandem::error_code_name(err.code())
                    << "): " << err.what();
    } catch (const std::exception& err) {
      ADD_FAILURE() << where() << ": exception: " << err.what();
    }
    return CaseResult{false, 0.0};
  }

 private:
  std::string where() const {
    std::string w = std::string(e_.entry_point()) + " [" + c_.label + "] seed " + hex(seed_);
    if (c_.grid) w += " grid " + dim3_text(*c_.grid);
    if (c_.block) w += " block " + dim3_text(*c_.block);
    for (std::size_t i = 0; i < e_.params.size(); ++i) {
      if (e_.params[i].kind == k::ArgKind::scalar)
        w += std::string(" ") + e_.params[i].name + "=" + scalar_text(c_.params[i].scalar);
    }
    return w;
  }

  CaseResult run_unchecked() {
    const std::size_t np = e_.params.size();
    std::mt19937_64 g(seed_);
    // Host bases and device bases.
    std::vector<std::vector<std::byte>> host(np), initial(np);
    std::vector<View> bases(np), views(np);
    for (std::size_t i = 0; i < np; ++i) {
      if (!c_.params[i].is_view) continue;
      const ViewPlan& v = c_.params[i].view;
      const std::uint64_t count = static_cast<std::uint64_t>(product(v.base_shape));
      host[i].resize(count * tandem::dtype_size(v.dtype));
      fill_data(v.dtype, host[i], v.init, g);
      initial[i] = host[i];
      View base = tandem::allocate(s_, v.dtype, count);
      if (count != 0) (void)tandem::upload(s_, base, host[i]);
      if (v.tensor) {
        base = std::move(base).to_tensor(v.base_shape);
        if (v.whole) {
          views[i] = base.share();
        } else {
          views[i] = base.tensor_view(std::nullopt, std::span<const DimRange>(v.ranges));
        }
      } else {
        views[i] = base.slice(v.offset, v.len);
      }
      bases[i] = std::move(base);
    }
    // Device launch through the shared runtime.
    std::vector<k::Arg> args(np);
    for (std::size_t i = 0; i < np; ++i) {
      args[i] = c_.params[i].is_view
                    ? k::Arg::of(views[i])
                    : (c_.params[i].scalar ? k::Arg::value(*c_.params[i].scalar) : k::Arg::defaulted());
    }
    tandem::LaunchFuture f = k::launch(s_, e_, args, c_.grid, c_.block);
    // Host reference on host copies with the same shapes and scalars.
    std::vector<k::ArgShape> shapes(np);
    std::vector<k::LaunchArg> host_args(np);
    std::vector<HostView> host_views(np);
    for (std::size_t i = 0; i < np; ++i) {
      if (c_.params[i].is_view) {
        shapes[i] = k::shape_of(views[i]);
        const std::uint64_t off = views[i].byte_offset() - bases[i].byte_offset();
        host_args[i] = k::LaunchArg::view(reinterpret_cast<std::uint64_t>(host[i].data() + off), shapes[i]);
        host_views[i] = HostView{initial[i].data(), off, shapes[i]};
      } else {
        host_args[i] =
            c_.params[i].scalar ? k::LaunchArg::value(*c_.params[i].scalar) : k::LaunchArg::defaulted();
      }
    }
    if (std::string why = k::check_args(e_, shapes); !why.empty()) {
      ADD_FAILURE() << where() << ": check_args refused what kernels::launch accepted: " << why;
      return {false, 0.0};
    }
    tandem::driver::LaunchDims dims;
    if (std::string why = k::launch_dims(e_, shapes, c_.grid, c_.block, dims); !why.empty()) {
      ADD_FAILURE() << where() << ": launch_dims: " << why;
      return {false, 0.0};
    }
    k::PackedParams packed;
    if (std::string why = k::pack_params(e_, host_args, packed); !why.empty()) {
      ADD_FAILURE() << where() << ": pack_params: " << why;
      return {false, 0.0};
    }
    e_.symbol->host(packed.pointers(), dims);

    if (!f.wait(60s)) {
      ADD_FAILURE() << where() << ": the launch did not complete within 60 s";
      return {false, 0.0};
    }
    if (f.status() != tandem::SubmissionStatus::retired) {
      ADD_FAILURE() << where() << ": the launch was quarantined (completion unknown: a device fault?)";
      return {false, 0.0};
    }
    // Compare every base, whole.
    CaseResult r;
    for (std::size_t i = 0; i < np; ++i) {
      if (!c_.params[i].is_view || host[i].empty()) continue;
      const std::vector<std::byte> got = tandem::read_back(s_, bases[i], 60s);
      compare(i, got, host[i], host_views, dims, r);
    }
    return r;
  }

  void compare(std::size_t pi, const std::vector<std::byte>& got, const std::vector<std::byte>& want,
               const std::vector<HostView>& inputs, const tandem::driver::LaunchDims& dims, CaseResult& r) {
    const k::ParamSpec& p = e_.params[pi];
    const ViewPlan& plan = c_.params[pi].view;
    const DType t = plan.dtype;
    const std::size_t es = tandem::dtype_size(t);
    const k::ArgShape& vs = inputs[pi].shape;
    const auto view_first = static_cast<std::int64_t>(inputs[pi].offset / es);
    std::string head = where() + " launched with grid " + dim3_text(dims.grid) + " block " +
                       dim3_text(dims.block) + ": parameter '" + p.name + "' (" + dtype_text(t) + ", " +
                       plan.layout + ", view shape " +
                       dims_text({vs.shape, static_cast<std::size_t>(vs.rank)}) + " strides " +
                       dims_text({vs.stride, static_cast<std::size_t>(vs.rank)}) + ")";
    if (got.size() != want.size()) {
      ADD_FAILURE() << head << ": read back " << got.size() << " bytes, expected " << want.size();
      r.ok = false;
      return;
    }
    const bool tolerant = !e_.tolerance.exact() && driver_writes(p);
    if (!tolerant && std::memcmp(got.data(), want.data(), got.size()) == 0) return;
    const auto n = static_cast<std::int64_t>(got.size() / es);
    std::int64_t bad = 0, first = -1;
    std::string first_text;
    for (std::int64_t idx = 0; idx < n; ++idx) {
      const std::byte* gp = got.data() + idx * static_cast<std::int64_t>(es);
      const std::byte* wp = want.data() + idx * static_cast<std::int64_t>(es);
      std::int64_t vi = 0, vj = 0;
      const bool inside = view_coords(vs, view_first, idx, vi, vj);
      const bool same = std::memcmp(gp, wp, es) == 0;
      std::string why;
      if (tolerant && inside) {
        const std::optional<double> m = magnitude(e_, inputs, pi, vi, vj);
        if (!m) {
          ADD_FAILURE() << head << ": the test has no M rule for tolerance-bearing kernel '" << e_.name
                        << "'";
          r.ok = false;
          return;
        }
        const double d = value_at(t, gp), h = value_at(t, wp);
        const double err = std::fabs(d - h);
        const double bound = e_.tolerance.rtol * *m;
        if (*m > 0) r.max_rel = std::max(r.max_rel, err / *m);
        if (!(err <= bound) && !same) {
          char buf[160];
          std::snprintf(buf, sizeof buf, " |got - expected| = %.6g > rtol %.1e * M %.6g = %.6g", err,
                        e_.tolerance.rtol, *m, bound);
          why = buf;
        } else {
          continue;
        }
      } else if (same) {
        continue;
      }
      ++bad;
      if (first < 0) {
        first = idx;
        first_text =
            base_index_text(plan.base_shape, idx) +
            (inside ? " = view[" + std::to_string(vi) + (vs.rank > 1 ? ", " + std::to_string(vj) : "") + "]"
                    : std::string(" (outside the view: must be left as it was)")) +
            ": expected " + element_text(t, wp) + ", got " + element_text(t, gp) + why;
      }
    }
    if (bad != 0) {
      ADD_FAILURE() << head << ": " << bad << " of " << n
                    << " base elements differ from the host reference; first at " << first_text;
      r.ok = false;
    }
  }

  const tandem::Stream& s_;
  const k::KernelEntry& e_;
  const Case& c_;
  std::uint64_t seed_;
};

// --- one test per kernel (model, name), over all of its entries ------------------------------

// The kernels with a test below; EveryCatalogKernelHasADeviceTest keeps the
// list in step with the catalog.
// An X-macro list, laid out by hand: clang-format 14 does not reach a fixed point on it.
// clang-format off
#define TANDEM_KERNEL_GPU_TESTS(X)                                                                      \
  X(simt, fill) X(simt, iota) X(simt, axpy) X(simt, scale) X(simt, copy) X(simt, add) X(simt, atomic_sum) \
  X(simt, histogram) X(simt, checksum) X(simt, spin) X(tile, add) X(tile, scale) X(tile, copy)          \
  X(tile, transpose) X(tile, matmul) X(tile, row_sum)
// clang-format on

class EveryEntryMatchesItsHostReferenceOnRandomInputs : public KernelDeviceTest {
 public:
  static void TearDownTestSuite() {
    std::lock_guard lock(g_stats_mu);
    if (g_entries_checked == 0) return;
    std::string line = "[kernels] summary: " + std::to_string(g_entries_checked) + " of " +
                       std::to_string(k::catalog().size()) + " catalog entries checked, " +
                       std::to_string(g_cases_checked) + " cases; max |dev-host|/M:";
    bool any = false;
    for (const auto& [key, s] : all_stats()) {
      for (const auto& [dt, rel] : s.max_rel) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " %s/%s=%.3g", key.c_str(), dt.c_str(), rel);
        line += buf;
        any = true;
      }
    }
    int failed = 0;
    for (const auto& [key, s] : all_stats()) failed += s.failed_entries;
    line += any ? "; every other kernel bit-exact" : " none (every kernel bit-exact)";
    if (failed != 0) line += "; " + std::to_string(failed) + " entries FAILED";
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

 protected:
  // kernels/README.md: the device result equals the host reference bit for
  // bit (rtol 0) or within |d - h| <= rtol * M, for every entry of the
  // kernel, on sizes that are not multiples of the tile, misaligned and
  // strided views, several blocks and caller launch shapes; nothing outside
  // a view changes.
  void check_kernel(k::Model model, std::string_view name) {
    tandem::Stream s = tandem::Stream::create(ctx());
    const std::uint64_t seed0 = base_seed();
    KernelStats st;
    const auto t0 = Clock::now();
    for (const k::KernelEntry& e : k::catalog()) {
      if (e.model != model || name != e.name) continue;
      const std::uint64_t entry_seed = mix(seed0, hash_text(e.entry_point()));
      std::mt19937_64 g(entry_seed);
      const std::vector<Case> cases = e.model == k::Model::simt ? simt_cases(e, g) : tile_cases(e, g);
      ASSERT_FALSE(cases.empty()) << e.entry_point();
      bool entry_ok = true;
      double entry_rel = 0.0;
      for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        const CaseResult r = CaseRunner(s, e, cases[ci], mix(entry_seed, ci)).run();
        entry_ok = entry_ok && r.ok;
        entry_rel = std::max(entry_rel, r.max_rel);
        ++st.cases;
      }
      ++st.entries;
      if (!e.tolerance.exact()) {
        st.exact = false;
        const std::string dt = e.dtype ? dtype_text(*e.dtype) : "any";
        st.max_rel[dt] = std::max(st.max_rel[dt], entry_rel);
        st.rtol[dt] = e.tolerance.rtol;
      }
      if (!entry_ok) {
        ++st.failed_entries;
        ADD_FAILURE() << e.entry_point() << ": some cases failed (entry seed " << hex(entry_seed)
                      << "; rerun with TANDEM_TEST_SEED=" << hex(seed0) << ")";
      }
    }
    ASSERT_GT(st.entries, 0) << "no catalog entry for " << k::model_name(model) << " kernel '" << name << "'";
    ASSERT_TRUE(ctx().wait_for_retirement(60s));
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    const std::string key = std::string(k::model_name(model)) + "/" + std::string(name);
    std::printf("[measure] %s (%.1f s)\n", stats_text(key, st).c_str(), secs);
    std::lock_guard lock(g_stats_mu);
    g_entries_checked += st.entries;
    g_cases_checked += st.cases;
    all_stats()[key] = st;
  }
};

#define TANDEM_KERNEL_GPU_TEST(MODEL, NAME)                                 \
  TEST_F(EveryEntryMatchesItsHostReferenceOnRandomInputs, MODEL##_##NAME) { \
    check_kernel(k::Model::MODEL, #NAME);                                   \
  }
TANDEM_KERNEL_GPU_TESTS(TANDEM_KERNEL_GPU_TEST)
#undef TANDEM_KERNEL_GPU_TEST

// Runs without a device: a kernel added to the catalog must get a test above.
TEST(GpuKernelsCoverage, EveryCatalogKernelHasADeviceTest) {
  std::vector<std::string> tested;
#define TANDEM_KERNEL_GPU_TEST_NAME(MODEL, NAME) tested.push_back(#MODEL "/" #NAME);
  TANDEM_KERNEL_GPU_TESTS(TANDEM_KERNEL_GPU_TEST_NAME)
#undef TANDEM_KERNEL_GPU_TEST_NAME
  for (const k::KernelEntry& e : k::catalog()) {
    const std::string key = std::string(k::model_name(e.model)) + "/" + e.name;
    EXPECT_NE(std::find(tested.begin(), tested.end(), key), tested.end())
        << "catalog kernel " << key << " (" << e.entry_point()
        << ") has no EveryEntryMatchesItsHostReferenceOnRandomInputs test";
  }
}

}  // namespace
