// SPDX-License-Identifier: Apache-2.0
// program_model.hpp — what program_generator.hpp's model holds of a
// generated program: its live handles, graphs and the leases a submission
// takes, in the generator's element units.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "sanitizers.hpp"

namespace tandem::scenario::test {

using json = nlohmann::ordered_json;

// A forgotten future leaks its submission record by contract, which
// LeakSanitizer rightly reports: ASan builds drop those futures instead and
// keep every other allocation leak-checked.
#if defined(TANDEM_TEST_ASAN)
constexpr bool kForget = false;
#else
constexpr bool kForget = true;
#endif

struct Handle {
  std::string name;
  std::size_t alloc;
  bool tensor = false;
  std::uint32_t len = 0;
  std::uint32_t rows = 0, cols = 0;  // tensors
  bool contiguous = true;            // tensor sub-views with ranges are strided
  bool shared = false;               // threaded programs: made before the threads, only launched on
  std::uint32_t offset = 0;          // first element in the allocation
  std::uint32_t strided_span = 0;    // elements from the first to past the last; 0: len

  std::uint32_t span() const { return strided_span ? strided_span : len; }
  // The same view under another name and kind (tensor conversions move it).
  Handle as(std::string new_name, bool as_tensor, std::uint32_t r = 0, std::uint32_t c = 0) const {
    Handle h = *this;
    h.name = std::move(new_name);
    h.tensor = as_tensor;
    h.rows = r;
    h.cols = c;
    return h;
  }
};

struct Graph {
  std::string name;
  std::size_t alloc;
  std::uint32_t offset, span;  // the captured scale's elements
};

// One lease a submission takes: elements [lo, hi) of an allocation.
struct Access {
  std::size_t alloc;
  std::uint32_t lo, hi;
  bool write;
};

inline Access read_of(const Handle& h) { return {h.alloc, h.offset, h.offset + h.span(), false}; }
inline Access write_of(const Handle& h) { return {h.alloc, h.offset, h.offset + h.span(), true}; }

}  // namespace tandem::scenario::test
