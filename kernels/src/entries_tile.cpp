// SPDX-License-Identifier: Apache-2.0
// The Tile kernels' symbols and catalog entries, generated from the instance
// lists (instances.hpp).
#include <span>

#include "../host/host_refs.hpp"
#include "descriptors.hpp"
#include "entries.hpp"
#include "modules.hpp"
#include "tandem/kernels/instances.hpp"

namespace tandem::kernels::detail {

namespace {

#define TANDEM_TILE_DESC(K, DT, R) tile_k::K<dt::DT, R>
#define TANDEM_TILE_SYM(K, DT, R, TM, TN) TANDEM_KCAT(sym_, TANDEM_TILE_ENTRY(K, DT, R, TM, TN))

#define TANDEM_TILE_SYMBOL(M, K, DT, R, TM, TN)                                                          \
  constinit const driver::KernelSymbol TANDEM_TILE_SYM(K, DT, R, TM, TN){                                \
      TANDEM_KSTR(TANDEM_TILE_ENTRY(K, DT, R, TM, TN)), &module_##M, &host::tile_##K<dt::DT, R, TM, TN>, \
      slots_v<TANDEM_TILE_DESC(K, DT, R)>.data(),                                                        \
      static_cast<std::uint32_t>(slots_v<TANDEM_TILE_DESC(K, DT, R)>.size())};
TANDEM_TILE_MODULES(TANDEM_TILE_SYMBOL)
#undef TANDEM_TILE_SYMBOL

#define TANDEM_TILE_ENTRY_DATA(M, K, DT, R, TM, TN)                           \
  KernelEntry{Model::tile,                                                    \
              #K,                                                             \
              dtype_of_tag(dt::DT),                                           \
              TileShape{R, {R == 1 ? TN : TM, R == 1 ? 0 : TN}},              \
              tile::is_default_tile(R, TM, TN),                               \
              &TANDEM_TILE_SYM(K, DT, R, TM, TN),                             \
              std::span<const ParamSpec>(TANDEM_TILE_DESC(K, DT, R)::params), \
              TANDEM_TILE_DESC(K, DT, R)::partition,                          \
              static_cast<std::uint32_t>(tile::threads_for(TM, TN)),          \
              TANDEM_TILE_DESC(K, DT, R)::effect,                             \
              TANDEM_TILE_DESC(K, DT, R)::tolerance,                          \
              &TANDEM_TILE_DESC(K, DT, R)::validate,                          \
              &TANDEM_TILE_DESC(K, DT, R)::template dims<TM, TN>,             \
              nullptr},

constinit const KernelEntry kTileEntries[] = {TANDEM_TILE_MODULES(TANDEM_TILE_ENTRY_DATA)};
#undef TANDEM_TILE_ENTRY_DATA

}  // namespace

std::span<const KernelEntry> tile_entries() noexcept { return kTileEntries; }

}  // namespace tandem::kernels::detail
