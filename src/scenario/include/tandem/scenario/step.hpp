// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/step.hpp — one validated step. A flat struct: `op` says
// which fields are meaningful (the op table, `tandem ops`, lists them).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tandem/base/access_mode.hpp"
#include "tandem/dtype.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/scenario/value_form.hpp"

namespace tandem::scenario {

enum class Op : std::uint8_t {
  alloc,
  foreign,
  slice,
  split,
  peel,
  atomic,
  to_tensor,
  tensor_view,
  as_buffer,
  into_buffer,
  reinterpret,
  launch,
  copy,
  upload,
  download,
  capture,
  replay,
  drop,
  forget,
  wait,
  retire,
  check,
  vram,
  loop,
  sleep,
  peer_access,
  note,
  borrow_stream,
  borrow_context,
  declared_launch,
};

enum class CheckWhat : std::uint8_t {
  unique,
  views,
  live_allocations,
  pending,
  freed,
  owner_released,
  same_allocation,
  contents,
};

struct Step {
  Op op = Op::alloc;
  std::string path;                         // JSON path of this step, e.g. "steps[3]"
  std::optional<std::string> expect_error;  // a §4 code

  // Handle names (dynamic; non-empty when present).
  std::string id, of, from, src, dst, buf, graph;
  std::string context;                // borrow_stream: a borrowed context's handle (empty: the scenario's)
  std::vector<std::string> ids;       // split: [a, b]
  std::optional<std::string> stream;  // declared stream name

  // Buffers and views.
  std::optional<DType> dtype;
  std::uint64_t len = 0, offset = 0, at = 0, index = 0;
  // alloc only: `"len": {"fraction_of_free": f}`, f in (0, 1] (then `len` is
  // unused): floor(f x the free memory of the step's device when the run
  // started / element size) elements, worked out by the executor.
  std::optional<double> len_fraction_of_free;
  ValueForm init;                                            // alloc/foreign init, upload from
  std::vector<std::int64_t> shape;                           // to_tensor, tensor_view
  std::vector<std::pair<std::int64_t, std::int64_t>> slice;  // tensor_view [begin, end)

  // launch
  kernels::Model model = kernels::Model::simt;
  std::string kernel;
  std::map<std::string, std::string> args;  // param -> handle
  std::map<std::string, double> scalars;    // param -> value
  std::optional<std::array<std::uint32_t, 3>> grid, block;
  std::vector<std::int64_t> tile;  // 1 or 2 dims
  // declared_launch: each view the original launch declared, with its
  // access, in order (`kernel` is then the original's entry point).
  std::vector<std::pair<std::string, AccessMode>> accesses;

  // capture / loop
  std::vector<Step> steps;
  std::uint64_t count = 0;

  // wait
  bool wait_all = false;
  // retire
  std::optional<std::uint64_t> timeout_ms;
  // sleep
  std::uint64_t us = 0;

  // check
  CheckWhat what = CheckWhat::unique;
  std::string a, b;             // same_allocation
  bool bool_value = false;      // unique, freed, owner_released, same_allocation
  std::uint64_t int_value = 0;  // views, live_allocations, pending
  ValueForm equals;             // contents

  // vram
  bool vram_mark = false;  // mark (else check)
  std::uint64_t tolerance_bytes = 0;
  std::optional<std::uint32_t> device;  // vram: one device (else every device used)

  // peer_access: the two devices (distinct)
  std::array<std::uint32_t, 2> peer_devices{};

  // a text field (written into the report)
  std::string message;
};

}  // namespace tandem::scenario
