// SPDX-License-Identifier: Apache-2.0
// tandem/refused_launch.hpp — a catalog launch that a layer above the
// runtime refused before calling tandem::launch (kernels::launch's argument
// checks, the scenario engine's model and dtype checks). The runtime never
// sees such a call, so the layer reports it here for a recording
// (tandem/recorder.hpp, docs/runtime.md "Recording") to write it as a
// `launch` step with `expect_error`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "tandem/driver/types.hpp"
#include "tandem/errors.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace tandem {

// What the caller asked, by the catalog's parameter names. Everything it
// points at lives for the call only.
struct RefusedLaunch {
  struct ViewArg {
    std::string_view param;
    const View* view = nullptr;  // null: no view was given (or the handle is gone)
  };
  struct ScalarArg {
    std::string_view param;
    double value = 0;
  };
  StreamRef stream;
  std::string_view model;   // "simt" | "tile"
  std::string_view kernel;  // the catalog name
  std::span<const ViewArg> views = {};
  std::span<const ScalarArg> scalars = {};  // those given; a defaulted one is left out
  std::span<const std::int64_t> tile = {};  // the tile asked for; empty: the default
  std::optional<driver::Dim3> grid = std::nullopt, block = std::nullopt;
  std::uint32_t shared_bytes = 0;  // dynamic shared memory asked (LaunchConfig)
  // False when the arguments do not match the parameter list by kind (a
  // view where a scalar goes or the reverse, one missing, one too many): a
  // scenario names its arguments by kind and cannot write such a call.
  bool args_fit = true;
};

// Reports `what`, refused with `code`, to the installed Recorder
// (Recorder::on_launch_refused). Call it only on the failure path, before
// rethrowing: it costs a load and a branch when nothing records, and more
// when something does. Nothing happens when no Recorder is installed or the
// calling thread's recording is paused; what the Recorder throws is
// swallowed (the caller's own error is the one to report).
void record_refused_launch(const RefusedLaunch& what, ErrorCode code) noexcept;

// Reports a call of kind `op` (a scenario op name: "launch", "slice"...)
// that a layer above the runtime refused with `code` because a handle it
// names is gone (dropped, consumed, moved from, never made) or of the wrong
// kind: nothing reached the runtime (Recorder::on_use_refused). Same cost
// and guarantees as record_refused_launch.
void record_refused_use(std::string_view op, ErrorCode code) noexcept;

}  // namespace tandem
