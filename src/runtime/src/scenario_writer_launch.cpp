// SPDX-License-Identifier: Apache-2.0
// scenario_writer_launch.cpp — ScenarioWriter's launch hooks
// (scenario_writer.hpp): catalog launches as `launch` steps, those the
// runtime or a layer above it refused with `expect_error`, and launches of
// other kernels as `declared_launch`.
#include <string_view>

#include "recorded_values.hpp"
#include "scenario_writer.hpp"
#include "tandem/kernel_name.hpp"

namespace tandem::detail {

using recorded::dims;
using recorded::int_list;
using recorded::json_quoted;
using recorded::number;
using recorded::scalar_at;

namespace {

// A declared access as declared_launch spells it.
const char* declared_access_name(Access a) {
  switch (a) {
    case Access::read:
      return "read";
    case Access::write:
      return "write";
    case Access::read_write:
      return "read_write";
    case Access::atomic:
      return "atomic";
  }
  return "read_write";
}

}  // namespace

void ScenarioWriter::skip_launch(std::string_view kernel) {
  ++unrecorded_launches_;
  unrecorded_kernels_.emplace(kernel);
}

std::string ScenarioWriter::launch_head(std::string_view model, std::string_view kernel, StreamRef stream,
                                        const std::string& args, const std::string& scalars) {
  std::string b = "{\"op\": \"launch\", \"model\": " + json_quoted(model) +
                  ", \"kernel\": " + json_quoted(kernel) +
                  ", \"stream\": " + json_quoted(stream_name(stream.id())) + ", \"args\": {" + args + "}";
  if (!scalars.empty()) b += ", \"scalars\": {" + scalars + "}";
  return b;
}

std::optional<std::string> ScenarioWriter::launch_body(StreamRef stream, const driver::KernelSymbol& symbol,
                                                       const driver::LaunchDims& d, void** params,
                                                       std::span<const ViewAccess> accesses) {
  const KernelName* k = kernel_name(&symbol);
  // No catalog name: replay cannot run the kernel, only its leases (docs/runtime.md "Recording").
  if (k == nullptr) return declared_body(stream, symbol, d, accesses);
  std::string args, scalars;
  std::size_t view = 0;
  for (std::size_t i = 0; i < k->params.size(); ++i) {
    const KernelName::Param& p = k->params[i];
    if (p.view) {
      const auto name = view < accesses.size() ? name_of(ViewKey::of(*accesses[view++].view)) : std::nullopt;
      if (!name) {  // a view made outside the recording: the launch cannot be replayed
        skip_launch(k->name);
        return std::nullopt;
      }
      args += (args.empty() ? "" : ", ") + json_quoted(p.name) + ": " + json_quoted(*name);
    } else {
      scalars += (scalars.empty() ? "" : ", ") + json_quoted(p.name) + ": " +
                 number(scalar_at(p.scalar_dtype, params[i]));
    }
  }
  std::string b = launch_head(k->model, k->name, stream, args, scalars);
  if (std::string_view(k->model) == "simt") {
    b += ", \"grid\": " + dims(d.grid) + ", \"block\": " + dims(d.block);
  } else if (!k->tile.empty()) {
    b += ", \"tile\": " + int_list(k->tile);
  }
  return b;
}

std::optional<std::string> ScenarioWriter::refused_body(const RefusedLaunch& w) {
  const bool simt = w.model == "simt", tile = w.model == "tile";
  // What a launch step cannot say (the loader would reject the file, or the
  // replay would launch what was refused): arguments that do not match the
  // parameters by kind, shared memory, a tile model's grid or block, a
  // simt one's tile.
  if ((!simt && !tile) || !w.args_fit || w.shared_bytes != 0 || (tile && (w.grid || w.block)) ||
      (simt && !w.tile.empty())) {
    skip_launch(w.kernel);
    return std::nullopt;
  }
  std::string args, scalars;
  for (const RefusedLaunch::ViewArg& a : w.views) {
    const auto name = a.view != nullptr && a.view->valid() ? name_of(ViewKey::of(*a.view)) : std::nullopt;
    if (!name) {  // no view, or one made outside the recording: the step would name nothing
      skip_launch(w.kernel);
      return std::nullopt;
    }
    args += (args.empty() ? "" : ", ") + json_quoted(a.param) + ": " + json_quoted(*name);
  }
  for (const RefusedLaunch::ScalarArg& s : w.scalars)
    scalars += (scalars.empty() ? "" : ", ") + json_quoted(s.param) + ": " + number(s.value);
  // As asked, not as the catalog would have made them: the replay asks the same.
  std::string b = launch_head(w.model, w.kernel, w.stream, args, scalars);
  if (w.grid) b += ", \"grid\": " + dims(*w.grid);
  if (w.block) b += ", \"block\": " + dims(*w.block);
  if (!w.tile.empty()) b += ", \"tile\": " + int_list(w.tile);
  return b;
}

std::optional<std::string> ScenarioWriter::declared_body(StreamRef stream, const driver::KernelSymbol& symbol,
                                                         const driver::LaunchDims& d,
                                                         std::span<const ViewAccess> accesses) {
  std::string list;
  for (const ViewAccess& va : accesses) {
    const auto name = name_of(ViewKey::of(*va.view));
    if (!name) {  // a view made outside the recording: not even the leases can be replayed
      skip_launch(symbol.name);
      return std::nullopt;
    }
    list += std::string(list.empty() ? "" : ", ") + "{\"view\": " + json_quoted(*name) +
            ", \"access\": " + json_quoted(declared_access_name(va.access)) + "}";
  }
  ++declared_launches_;
  declared_kernels_.insert(symbol.name);
  return "{\"op\": \"declared_launch\", \"kernel\": " + json_quoted(symbol.name) +
         ", \"stream\": " + json_quoted(stream_name(stream.id())) + ", \"accesses\": [" + list +
         "], \"grid\": " + dims(d.grid) + ", \"block\": " + dims(d.block);
}

void ScenarioWriter::note_contents(std::span<const ViewAccess> accesses, bool no_body) {
  bool from_unknown = no_body;
  for (const ViewAccess& va : accesses)
    if (reads(va.access) && unknown_contents_.contains(va.view->allocation_id())) from_unknown = true;
  if (!from_unknown) return;
  for (const ViewAccess& va : accesses)
    if (writes(va.access) || va.view->is_atomic()) unknown_contents_.insert(va.view->allocation_id());
}

void ScenarioWriter::on_launch(StreamRef stream, const driver::KernelSymbol& symbol,
                               const driver::LaunchDims& d, void** params,
                               std::span<const ViewAccess> accesses, std::uint64_t submission) {
  const std::lock_guard lock(mu_);
  note_contents(accesses, kernel_name(&symbol) == nullptr);
  if (auto b = launch_body(stream, symbol, d, params, accesses)) {
    add(std::move(*b), submission);
    take_fault(stream.id(), submission);
  }
}

void ScenarioWriter::on_launch_failed(StreamRef stream, const driver::KernelSymbol& symbol,
                                      const driver::LaunchDims& d, void** params,
                                      std::span<const ViewAccess> accesses, ErrorCode code) {
  const std::lock_guard lock(mu_);
  if (auto b = launch_body(stream, symbol, d, params, accesses)) {
    add(std::move(*b) + ", \"expect_error\": " + json_quoted(error_code_name(code)));
  }
}

void ScenarioWriter::on_launch_refused(const RefusedLaunch& what, ErrorCode code) {
  const std::lock_guard lock(mu_);
  if (auto b = refused_body(what))
    add(std::move(*b) + ", \"expect_error\": " + json_quoted(error_code_name(code)));
}

}  // namespace tandem::detail
