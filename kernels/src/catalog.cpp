// SPDX-License-Identifier: Apache-2.0
// The kernel catalog: lookup, argument checks and launch dimensions.
#include "tandem/kernels/catalog.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "catalog_names.hpp"
#include "descriptors.hpp"
#include "entries.hpp"
#include "modules.hpp"

namespace tandem::kernels {

namespace {

std::string_view dtype_label(DType t) noexcept { return dtype_name(t); }

std::string str(std::string_view s) { return std::string(s); }

// "simt axpy (f32)" / "tile add (f32, 64x64)" / "simt checksum (any dtype)"
std::string describe(const KernelEntry& e) {
  std::string s = str(model_name(e.model)) + " kernel '" + e.name + "' (";
  s += e.dtype ? str(dtype_label(*e.dtype)) : std::string("any dtype");
  if (e.model == Model::tile) s += ", tile " + to_string(e.tile);
  return s + ")";
}

std::string shape_string(const ArgShape& a) {
  std::string s = "[";
  for (int k = 0; k < a.rank; ++k) {
    if (k != 0) s += ", ";
    s += std::to_string(a.shape[k]);
  }
  return s + "]";
}

bool less_tile(const TileShape& a, const TileShape& b) {
  if (a.rank != b.rank) return a.rank < b.rank;
  if (a.dims[0] != b.dims[0]) return a.dims[0] < b.dims[0];
  return a.dims[1] < b.dims[1];
}

std::vector<KernelEntry> build_catalog() {
  std::vector<KernelEntry> all;
  const auto simt = detail::simt_entries();
  const auto tile = detail::tile_entries();
  all.reserve(simt.size() + tile.size());
  all.insert(all.end(), simt.begin(), simt.end());
  all.insert(all.end(), tile.begin(), tile.end());
  std::stable_sort(all.begin(), all.end(), [](const KernelEntry& a, const KernelEntry& b) {
    if (a.model != b.model) return a.model < b.model;
    if (const int c = std::string_view(a.name).compare(b.name); c != 0) return c < 0;
    const int da = a.dtype ? static_cast<int>(*a.dtype) : -1;
    const int db = b.dtype ? static_cast<int>(*b.dtype) : -1;
    if (da != db) return da < db;
    return less_tile(a.tile, b.tile);
  });
  return all;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Do the view arguments have the ranks this entry's parameters require?
bool ranks_match(const KernelEntry& e, std::span<const ArgShape> args) {
  if (args.size() != e.params.size()) return false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& p = e.params[i];
    if (p.kind == ArgKind::view && p.rank != 0 && args[i].rank != p.rank) return false;
  }
  return true;
}

std::string list_tiles(const std::vector<TileShape>& tiles) {
  std::string s;
  for (const auto& t : tiles) s += (s.empty() ? "" : ", ") + to_string(t);
  return s;
}

}  // namespace

// --- small public helpers --------------------------------------------------------------

std::string_view model_name(Model m) noexcept { return m == Model::simt ? "simt" : "tile"; }

std::string to_string(const TileShape& t) {
  if (t.rank == 1) return std::to_string(t.dims[0]);
  if (t.rank == 2) return std::to_string(t.dims[0]) + "x" + std::to_string(t.dims[1]);
  return {};
}

ArgShape ArgShape::buffer(DType dtype, std::uint64_t len) noexcept {
  ArgShape a;
  a.dtype = dtype;
  a.rank = 1;
  a.shape[0] = static_cast<std::int64_t>(len);
  a.stride[0] = 1;
  return a;
}

ArgShape ArgShape::tensor(DType dtype, std::span<const std::int64_t> shape,
                          std::span<const std::int64_t> strides) noexcept {
  ArgShape a;
  a.dtype = dtype;
  a.rank = static_cast<int>(std::min<std::size_t>(shape.size(), kMaxRank));
  std::int64_t running = 1;
  for (int k = a.rank - 1; k >= 0; --k) {
    a.shape[k] = shape[static_cast<std::size_t>(k)];
    a.stride[k] = strides.size() == shape.size() ? strides[static_cast<std::size_t>(k)] : running;
    running *= std::max<std::int64_t>(a.shape[k], 1);
  }
  return a;
}

std::int64_t ArgShape::elements() const noexcept {
  std::int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= shape[k];
  return n;
}

// --- lookup ---------------------------------------------------------------------------------

std::span<const KernelEntry> catalog() noexcept {
  static const std::vector<KernelEntry> all = [] {
    std::vector<KernelEntry> built = build_catalog();
    detail::register_catalog_names(built);
    return built;
  }();
  return all;
}

const KernelEntry* find(Model model, std::string_view name, DType dtype, const TileShape* tile,
                        int rank) noexcept {
  const KernelEntry* best = nullptr;
  for (const KernelEntry& e : catalog()) {
    if (e.model != model || name != e.name || !e.accepts(dtype)) continue;
    if (model == Model::simt) return &e;
    if (tile != nullptr) {
      if (e.tile == *tile) return &e;
      continue;
    }
    if (!e.default_tile) continue;
    if (rank != 0) {
      if (e.tile.rank == rank) return &e;
      continue;
    }
    if (best == nullptr || e.tile.rank < best->tile.rank) best = &e;
  }
  return best;
}

const KernelEntry* resolve(Model model, std::string_view name, std::span<const ArgShape> args,
                           const TileShape* tile, std::string* why) {
  auto fail = [&](std::string msg) -> const KernelEntry* {
    if (why != nullptr) *why = std::move(msg);
    return nullptr;
  };
  const std::span<const ParamSpec> params = kernel_params(model, name);
  const std::string what = str(model_name(model)) + " kernel '" + std::string(name) + "'";
  if (params.empty()) {
    std::string msg = "unknown " + what;
    const auto near = suggest(model, name);
    if (!near.empty()) msg += " (did you mean '" + near.front() + "'?)";
    return fail(msg);
  }
  if (args.size() != params.size()) {
    return fail(what + " takes " + std::to_string(params.size()) + " arguments; got " +
                std::to_string(args.size()));
  }
  // The entry's dtype is that of the first view whose dtype is not fixed.
  std::optional<DType> dtype;
  for (std::size_t i = 0; i < params.size() && !dtype; ++i) {
    if (params[i].kind == ArgKind::view && !params[i].fixed_dtype) dtype = args[i].dtype;
  }
  const DType want = dtype.value_or(DType::u8);
  std::vector<const KernelEntry*> candidates;
  for (const KernelEntry& e : catalog()) {
    if (e.model == model && name == e.name && e.accepts(want)) candidates.push_back(&e);
  }
  if (candidates.empty()) {
    std::string have;
    for (DType t : kernel_dtypes(model, name)) have += (have.empty() ? "" : ", ") + str(dtype_label(t));
    return fail(what + " has no " + str(dtype_label(want)) + " version (dtypes: " + have + ")");
  }
  if (model == Model::simt) return candidates.front();
  if (tile != nullptr) {
    for (const KernelEntry* e : candidates) {
      if (e->tile == *tile) {
        if (!ranks_match(*e, args)) break;  // reported below
        return e;
      }
    }
    std::vector<TileShape> tiles;
    for (const KernelEntry* e : candidates) {
      if (ranks_match(*e, args)) tiles.push_back(e->tile);
    }
    return fail(what + " (" + str(dtype_label(want)) + ") has no tile " + to_string(*tile) +
                " for these tensor ranks (tiles: " + list_tiles(tiles) + ")");
  }
  for (const KernelEntry* e : candidates) {
    if (e->default_tile && ranks_match(*e, args)) return e;
  }
  // No default entry takes tensors of these ranks: say what they take.
  std::string ranks;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].kind != ArgKind::view) continue;
    ranks +=
        (ranks.empty() ? "" : ", ") + std::string(params[i].name) + " rank " + std::to_string(args[i].rank);
  }
  std::string accepted;
  for (const KernelEntry* c : candidates) {
    if (!c->default_tile) continue;
    std::string r;
    for (const ParamSpec& p : c->params) {
      if (p.kind == ArgKind::view)
        r += (r.empty() ? "" : ", ") + std::string(p.name) + " rank " + std::to_string(p.rank);
    }
    accepted += (accepted.empty() ? "" : "; or ") + r;
  }
  return fail(what + " takes tensors of " + accepted + "; got " + ranks);
}

std::span<const ParamSpec> kernel_params(Model model, std::string_view name) noexcept {
  for (const KernelEntry& e : catalog()) {
    if (e.model == model && name == e.name) return e.params;
  }
  return {};
}

const char* kernel_effect(Model model, std::string_view name) noexcept {
  for (const KernelEntry& e : catalog()) {
    if (e.model == model && name == e.name) return e.effect;
  }
  return "";
}

std::vector<std::string> kernel_names(Model model) {
  std::vector<std::string> names;
  for (const KernelEntry& e : catalog()) {
    if (e.model == model && (names.empty() || names.back() != e.name)) names.emplace_back(e.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::string> suggest(Model model, std::string_view name, std::size_t max) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (auto& n : kernel_names(model)) {
    const std::size_t d = edit_distance(name, n);
    if (d <= std::max<std::size_t>(2, n.size() / 3)) scored.emplace_back(d, std::move(n));
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& s : scored) {
    if (out.size() == max) break;
    out.push_back(std::move(s.second));
  }
  return out;
}

std::vector<DType> kernel_dtypes(Model model, std::string_view name) {
  std::vector<DType> out;
  for (const KernelEntry& e : catalog()) {
    if (e.model == model && name == e.name && e.dtype &&
        std::find(out.begin(), out.end(), *e.dtype) == out.end()) {
      out.push_back(*e.dtype);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<TileShape> kernel_tiles(Model model, std::string_view name, DType dtype) {
  std::vector<TileShape> out;
  for (const KernelEntry& e : catalog()) {
    if (e.model == model && name == e.name && e.accepts(dtype) && e.tile.rank != 0) out.push_back(e.tile);
  }
  std::sort(out.begin(), out.end(), less_tile);
  return out;
}

// --- argument checks ------------------------------------------------------------------

std::string check_args(const KernelEntry& e, std::span<const ArgShape> args) {
  if (args.size() != e.params.size()) {
    std::string names;
    for (const ParamSpec& p : e.params) names += (names.empty() ? "" : ", ") + std::string(p.name);
    return describe(e) + " takes " + std::to_string(e.params.size()) + " arguments (" + names + "); got " +
           std::to_string(args.size());
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& p = e.params[i];
    if (p.kind != ArgKind::view) continue;
    const ArgShape& a = args[i];
    // Built only for a message: a launch that passes builds no string.
    const auto who = [&] { return describe(e) + ": '" + p.name + "'"; };
    const std::optional<DType> want = p.fixed_dtype ? p.fixed_dtype : e.dtype;
    if (want && a.dtype != *want) {
      return who() + " has dtype " + str(dtype_label(a.dtype)) + ", expected " + str(dtype_label(*want));
    }
    if (p.rank == 0) {
      if (a.rank != 1 || (a.shape[0] > 1 && a.stride[0] != 1)) {
        return who() + " must be a contiguous buffer (rank 1, stride 1); got rank " + std::to_string(a.rank) +
               " shape " + shape_string(a);
      }
    } else if (a.rank != p.rank) {
      return who() + " must be a rank-" + std::to_string(p.rank) + " tensor; got rank " +
             std::to_string(a.rank) + " shape " + shape_string(a);
    }
    for (int k = 0; k < a.rank; ++k) {
      if (a.shape[k] < 0 || a.stride[k] < 0) {
        return who() + " has a negative extent or stride in dimension " + std::to_string(k);
      }
      if (writes(p.mode) && a.stride[k] == 0 && a.shape[k] > 1) {
        return who() + " has stride 0 in dimension " + std::to_string(k) + " (extent " +
               std::to_string(a.shape[k]) + "): a written view must not overlap itself";
      }
    }
  }
  return e.validate != nullptr ? e.validate(args) : std::string{};
}

std::string launch_dims(const KernelEntry& e, std::span<const ArgShape> args,
                        std::optional<driver::Dim3> grid, std::optional<driver::Dim3> block,
                        driver::LaunchDims& out) {
  if (e.model == Model::tile) {
    if (grid || block) {
      return describe(e) + " takes no grid or block: the grid is one block per " + to_string(e.tile) +
             " tile of '" + e.params[static_cast<std::size_t>(e.partition_param)].name + "'";
    }
    const ArgShape& part = args[static_cast<std::size_t>(e.partition_param)];
    const bool rows_tile = e.tile.rank == 2 && part.rank == 1;  // row_sum: out cut into TM pieces
    const std::uint64_t tiles =
        rows_tile ? detail::tile_count(part, 1, static_cast<int>(e.tile.dims[0]))
                  : detail::tile_count(part, static_cast<int>(e.tile.dims[0]),
                                       static_cast<int>(e.tile.rank == 1 ? e.tile.dims[0] : e.tile.dims[1]));
    if (tiles > 0x7fffffffULL) {
      return describe(e) + ": " + std::to_string(tiles) + " tiles exceed the grid limit (2^31 - 1 blocks)";
    }
    out = e.default_dims(args);
    return {};
  }
  if (block) {
    const std::uint64_t threads = static_cast<std::uint64_t>(block->x) * block->y * block->z;
    if (block->x == 0 || block->y == 0 || block->z == 0 || threads > 1024 || block->z > 64) {
      return describe(e) + ": block [" + std::to_string(block->x) + ", " + std::to_string(block->y) + ", " +
             std::to_string(block->z) + "] is invalid (each >= 1, z <= 64, at most 1024 threads)";
    }
  }
  if (grid) {
    if (grid->x == 0 || grid->y == 0 || grid->z == 0 || grid->x > 0x7fffffffU || grid->y > 65535 ||
        grid->z > 65535) {
      return describe(e) + ": grid [" + std::to_string(grid->x) + ", " + std::to_string(grid->y) + ", " +
             std::to_string(grid->z) + "] is invalid (each >= 1, x < 2^31, y and z <= 65535)";
    }
  }
  out = e.default_dims(args);
  if (block) {
    out.block = *block;
    if (!grid) out.grid = driver::Dim3{e.grid_for_block(args, block->x * block->y * block->z), 1, 1};
  }
  if (grid) out.grid = *grid;
  return {};
}

// --- modules ----------------------------------------------------------------------------

std::span<const driver::ModuleImage* const> modules() noexcept {
#define TANDEM_MODULE_PTR(stem) &detail::module_##stem,
  static const driver::ModuleImage* const all[] = {TANDEM_KERNEL_MODULES(TANDEM_MODULE_PTR)};
#undef TANDEM_MODULE_PTR
  return all;
}

bool has_device_code() noexcept {
  const auto all = modules();
  return std::all_of(all.begin(), all.end(), [](const driver::ModuleImage* m) { return m->data != nullptr; });
}

// --- shape rules (descriptors.hpp) ------------------------------------------------------

namespace detail {

std::uint64_t max_elements(Args a) {
  std::uint64_t n = 0;
  for (const ArgShape& s : a) {
    if (s.rank > 0) n = std::max(n, static_cast<std::uint64_t>(std::max<std::int64_t>(s.elements(), 0)));
  }
  return n;
}

std::uint64_t tile_count(const ArgShape& p, int tm, int tn) {
  auto cdiv = [](std::int64_t a, std::int64_t b) {
    return static_cast<std::uint64_t>((std::max<std::int64_t>(a, 0) + b - 1) / b);
  };
  if (p.rank == 1) return cdiv(p.shape[0], tn);
  if (p.rank == 2) return cdiv(p.shape[0], tm) * cdiv(p.shape[1], tn);
  return 0;
}

std::string same_length(Args a, std::initializer_list<int> idx, std::span<const ParamSpec> params) {
  const int first = *idx.begin();
  for (int i : idx) {
    if (a[static_cast<std::size_t>(i)].elements() != a[static_cast<std::size_t>(first)].elements()) {
      return "'" + std::string(params[static_cast<std::size_t>(i)].name) + "' has " +
             std::to_string(a[static_cast<std::size_t>(i)].elements()) + " elements but '" +
             params[static_cast<std::size_t>(first)].name + "' has " +
             std::to_string(a[static_cast<std::size_t>(first)].elements()) + ": lengths must be equal";
    }
  }
  return {};
}

std::string same_shape(Args a, std::initializer_list<int> idx, std::span<const ParamSpec> params) {
  const ArgShape& f = a[static_cast<std::size_t>(*idx.begin())];
  for (int i : idx) {
    const ArgShape& s = a[static_cast<std::size_t>(i)];
    bool same = s.rank == f.rank;
    for (int k = 0; same && k < s.rank; ++k) same = s.shape[k] == f.shape[k];
    if (!same) {
      return "'" + std::string(params[static_cast<std::size_t>(i)].name) + "' has shape " + shape_string(s) +
             " but '" + params[static_cast<std::size_t>(*idx.begin())].name + "' has shape " +
             shape_string(f) + ": shapes must be equal";
    }
  }
  return {};
}

std::string at_least_one(Args a, int idx, std::span<const ParamSpec> params) {
  if (a[static_cast<std::size_t>(idx)].elements() < 1) {
    return "'" + std::string(params[static_cast<std::size_t>(idx)].name) + "' must have at least one element";
  }
  return {};
}

namespace tile_k {

std::string transpose_rule(Args a) {
  const ArgShape &src = a[0], &dst = a[1];
  if (dst.shape[0] != src.shape[1] || dst.shape[1] != src.shape[0]) {
    return "transpose: 'dst' has shape " + shape_string(dst) + " but 'src' has shape " + shape_string(src) +
           ": dst must be [" + std::to_string(src.shape[1]) + ", " + std::to_string(src.shape[0]) + "]";
  }
  return {};
}

std::string matmul_rule(Args a) {
  const ArgShape &x = a[0], &y = a[1], &c = a[2];
  if (x.shape[1] != y.shape[0]) {
    return "matmul: 'a' is " + shape_string(x) + " and 'b' is " + shape_string(y) + ": a's columns (" +
           std::to_string(x.shape[1]) + ") must equal b's rows (" + std::to_string(y.shape[0]) + ")";
  }
  if (c.shape[0] != x.shape[0] || c.shape[1] != y.shape[1]) {
    return "matmul: 'c' is " + shape_string(c) + ", expected [" + std::to_string(x.shape[0]) + ", " +
           std::to_string(y.shape[1]) + "] for a " + shape_string(x) + " and b " + shape_string(y);
  }
  return {};
}

std::string row_sum_rule(Args a) {
  const ArgShape &x = a[0], &o = a[1];
  if (o.shape[0] != x.shape[0]) {
    return "row_sum: 'out' has " + std::to_string(o.shape[0]) + " elements but 'x' has " +
           std::to_string(x.shape[0]) + " rows (shape " + shape_string(x) + ")";
  }
  return {};
}

}  // namespace tile_k

}  // namespace detail

}  // namespace tandem::kernels
