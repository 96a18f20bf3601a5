// SPDX-License-Identifier: Apache-2.0
// shadow.hpp — the host model behind `check contents` with "shadow".
//
// In program order, every submission of a single-thread scenario is
// replayed on host copies of the allocations: transfers copy bytes, kernels
// run their host references (the same functions the simulated device runs)
// on the model's memory. A device result that differs from the model is a
// race the runtime failed to order, or a kernel bug: on a real GPU this is
// the race detector of last resort.
//
// Bytes never written (alloc with init "none") are "unknown"; a kernel
// that reads unknown bytes makes what it writes unknown; unknown elements
// are not compared. Kernels marked approximate (floating-point reductions
// whose order differs) make their outputs compare within a tolerance.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tandem/kernels/catalog.hpp"
#include "view_layout.hpp"

namespace tandem::scenario::detail {

// One launch argument as the model sees it: a view or a scalar.
struct ShadowArg {
  std::optional<ViewLayout> view;
  std::optional<kernels::ScalarValue> scalar;  // nullopt for views and defaulted scalars
};

class Shadow {
 public:
  static constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 30;

  // The model stops (and says why) when it would exceed kMaxBytes.
  [[nodiscard]] bool enabled() const noexcept { return why_off_.empty(); }
  [[nodiscard]] const std::string& why_disabled() const noexcept { return why_off_; }
  void disable(std::string why) {
    if (why_off_.empty()) why_off_ = std::move(why);
  }

  void on_alloc(std::uint64_t allocation, std::uint64_t bytes);
  void on_free(std::uint64_t allocation) { mem_.erase(allocation); }

  // Writes `elements` (row-major, the view's dtype) through the view.
  void write(const ViewLayout& v, std::span<const std::byte> elements);
  void fill_bytes(const ViewLayout& v, std::uint8_t value);
  void copy(const ViewLayout& src, const ViewLayout& dst);
  void launch(const kernels::KernelEntry& entry, std::span<const ShadowArg> args,
              const driver::LaunchDims& dims);

  // The model's elements of `v`, row-major; `known[i]` false where unknown.
  // nullopt when the model does not hold the allocation.
  struct Contents {
    std::vector<std::byte> bytes;
    std::vector<bool> known;
    bool approximate = false;
  };
  [[nodiscard]] std::optional<Contents> read(const ViewLayout& v) const;

 private:
  struct Memory {
    std::vector<std::byte> bytes;
    std::vector<bool> known;  // per byte
    bool approximate = false;
  };
  Memory* find(std::uint64_t allocation);
  bool any_unknown(const ViewLayout& v);
  void mark(const ViewLayout& v, bool known, bool approximate);

  std::unordered_map<std::uint64_t, Memory> mem_;
  std::uint64_t total_ = 0;
  std::string why_off_;
};

}  // namespace tandem::scenario::detail
