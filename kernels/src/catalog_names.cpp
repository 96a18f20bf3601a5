// SPDX-License-Identifier: Apache-2.0
// catalog_names.cpp — see catalog_names.hpp.
#include "catalog_names.hpp"

#include <deque>
#include <vector>

#include "tandem/kernel_name.hpp"

namespace tandem::kernels::detail {

namespace {

// What a KernelName points at. Never destroyed: a recording may ask at exit.
struct NameStore {
  std::deque<KernelName> names;
  std::deque<std::vector<KernelName::Param>> params;
  std::deque<std::vector<std::int64_t>> tiles;
};

}  // namespace

void register_catalog_names(std::span<const KernelEntry> all) {
  static NameStore* store = new NameStore;
  for (const KernelEntry& e : all) {
    if (e.symbol == nullptr) continue;
    std::vector<KernelName::Param>& ps = store->params.emplace_back();
    for (const ParamSpec& p : e.params) ps.push_back({p.name, p.kind == ArgKind::view, p.scalar_dtype});
    std::vector<std::int64_t>& tile = store->tiles.emplace_back();
    // The default tile is what a launch without `tile` gets: written only
    // when another was chosen.
    if (e.model == Model::tile && !e.default_tile) tile.assign(e.tile.dims, e.tile.dims + e.tile.rank);
    KernelName& n = store->names.emplace_back();
    n.model = model_name(e.model).data();
    n.name = e.name;
    n.tile = tile;
    n.params = ps;
    register_kernel_name(e.symbol, &n);
  }
}

}  // namespace tandem::kernels::detail
