// SPDX-License-Identifier: Apache-2.0
// The SIMT kernels' symbols and catalog entries, generated from the instance
// lists (instances.hpp) so that names, host references and device entry
// points cannot drift apart.
#include <span>

#include "../host/host_refs.hpp"
#include "descriptors.hpp"
#include "entries.hpp"
#include "modules.hpp"
#include "tandem/kernels/instances.hpp"

namespace tandem::kernels::detail {

namespace {

#define TANDEM_SIMT_DESC(K, DT) simt::K<dt::DT>

#define TANDEM_SIMT_SYMBOL(M, K, DT)                                               \
  constinit const driver::KernelSymbol sym_simt_##K##_##DT{                        \
      TANDEM_KSTR(TANDEM_SIMT_ENTRY(K, DT)), &module_##M, &host::simt_##K<dt::DT>, \
      slots_v<TANDEM_SIMT_DESC(K, DT)>.data(),                                     \
      static_cast<std::uint32_t>(slots_v<TANDEM_SIMT_DESC(K, DT)>.size())};
TANDEM_SIMT_MODULES(TANDEM_SIMT_SYMBOL)
#undef TANDEM_SIMT_SYMBOL

#define TANDEM_SIMT_ENTRY_DATA(M, K, DT)                                                 \
  KernelEntry{Model::simt,                                                               \
              #K,                                                                        \
              dtype_of_tag(dt::DT),                                                      \
              TileShape{},                                                               \
              false,                                                                     \
              &sym_simt_##K##_##DT,                                                      \
              std::span<const ParamSpec>(TANDEM_SIMT_DESC(K, DT)::params),               \
              -1,                                                                        \
              TANDEM_SIMT_DESC(K, DT)::block,                                            \
              TANDEM_SIMT_DESC(K, DT)::effect,                                           \
              TANDEM_SIMT_DESC(K, DT)::tolerance,                                        \
              &TANDEM_SIMT_DESC(K, DT)::validate,                                        \
              &simt_dims<TANDEM_SIMT_DESC(K, DT)::grid, TANDEM_SIMT_DESC(K, DT)::block>, \
              TANDEM_SIMT_DESC(K, DT)::grid},

constinit const KernelEntry kSimtEntries[] = {TANDEM_SIMT_MODULES(TANDEM_SIMT_ENTRY_DATA)};
#undef TANDEM_SIMT_ENTRY_DATA

}  // namespace

std::span<const KernelEntry> simt_entries() noexcept { return kSimtEntries; }

}  // namespace tandem::kernels::detail
