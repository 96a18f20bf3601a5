// SPDX-License-Identifier: Apache-2.0
// op_table.cpp — the rows. Field order within a row is the order messages
// list them in (required first); see op_table.hpp.
#include "op_table.hpp"

#include <array>

#include "json_reader.hpp"
#include "ops/ops.hpp"
#include "tandem/scenario/op_list.hpp"

namespace tandem::scenario::detail {

namespace {

using K = FieldKind;

constexpr FieldSpec id_new{"id", K::handle, true, "the new handle's name"};
constexpr FieldSpec id_opt{"id", K::handle, false, "names the submission's future", "unnamed"};
constexpr FieldSpec id_old{"id", K::handle, true, "the handle"};
constexpr FieldSpec of{"of", K::handle, true, "the view it is made from"};
constexpr FieldSpec from_view{"from", K::handle, true, "the view it consumes"};
constexpr FieldSpec dtype{"dtype", K::dtype, true, "element type"};
constexpr FieldSpec len{"len", K::len, true, "element count"};
constexpr FieldSpec init{"init", K::init, false,
                         "\"none\", \"zero\", \"iota\", {\"fill\": v} or {\"random\": seed}", "none"};
constexpr FieldSpec stream_opt{"stream", K::stream, false, "a declared stream",
                               "the first declared, or the run's own"};
constexpr FieldSpec stream{"stream", K::stream, true, "a declared stream"};
constexpr FieldSpec shape{"shape", K::shape, true, "1 to 4 extents"};
constexpr FieldSpec steps{"steps", K::steps, true, "the nested steps"};

constexpr std::array alloc_fields{id_new, dtype, len, init, stream_opt};
constexpr std::array slice_fields{id_new, of, FieldSpec{"offset", K::count, true, "first element"},
                                  FieldSpec{"len", K::len, true, "element count"}};
constexpr std::array split_fields{of, FieldSpec{"at", K::count, true, "elements in the first part"},
                                  FieldSpec{"ids", K::handle_pair, true, "the two new handles [low, high]"}};
constexpr std::array peel_fields{id_new, of,
                                 FieldSpec{"index", K::count, true, "the outermost index to peel"}};
constexpr std::array view_of_fields{id_new, of};
constexpr std::array to_tensor_fields{id_new, from_view, shape};
constexpr std::array tensor_view_fields{
    id_new, of, FieldSpec{"shape", K::shape, false, "a new shape of the same elements", "unchanged"},
    FieldSpec{"slice", K::ranges, false, "[begin, end) per dimension", "whole"}};
constexpr std::array into_buffer_fields{id_new, from_view};
constexpr std::array reinterpret_fields{id_new, from_view, dtype};
constexpr std::array launch_fields{
    FieldSpec{"model", K::own, true, "\"simt\" or \"tile\""},
    FieldSpec{"kernel", K::own, true, "a catalog kernel of the model (tandem kernels)"},
    stream,
    FieldSpec{"args", K::own, true, "{parameter: view handle} for every view parameter"},
    id_opt,
    FieldSpec{"scalars", K::own, false, "{parameter: number}", "the catalog's defaults"},
    FieldSpec{"grid", K::own, false, "simt: 1 to 3 extents", "the catalog's rule"},
    FieldSpec{"block", K::own, false, "simt: 1 to 3 extents", "the catalog's rule"},
    FieldSpec{"tile", K::own, false, "tile: 1 or 2 extents", "the catalog's default tile"}};
constexpr std::array declared_launch_fields{
    stream,
    FieldSpec{"accesses", K::own, true,
              "[{\"view\": handle, \"access\": \"read\", \"write\", \"read_write\" or \"atomic\"}, ...]"},
    id_opt,
    FieldSpec{"kernel", K::own, false, "the original kernel's entry point (information only)", "none"},
    FieldSpec{"grid", K::own, false, "1 to 3 extents", "[1]"},
    FieldSpec{"block", K::own, false, "1 to 3 extents", "[1]"}};
constexpr std::array copy_fields{FieldSpec{"src", K::handle, true, "the view read"},
                                 FieldSpec{"dst", K::handle, true, "the view written"}, stream, id_opt};
constexpr FieldSpec buf{"buf", K::handle, true, "the view"};
constexpr std::array upload_fields{
    buf, stream, FieldSpec{"from", K::values, true, "{\"fill\": v}, {\"iota\": {...}} or an array of values"},
    id_opt};
constexpr std::array download_fields{buf, stream, id_opt};
constexpr FieldSpec graph{"graph", K::handle, true, "the graph's handle"};
constexpr std::array capture_fields{graph, stream, steps};
constexpr std::array replay_fields{graph, stream, id_opt};
constexpr std::array id_fields{id_old};
constexpr std::array wait_fields{FieldSpec{"id", K::handle, false, "a future"},
                                 FieldSpec{"stream", K::stream, false, "a stream's last submission"},
                                 FieldSpec{"all", K::own, false, "true: all work of the run"}};
constexpr std::array retire_fields{FieldSpec{"timeout_ms", K::count, false, "how long to wait", "60000"}};
constexpr std::array check_fields{
    FieldSpec{"what", K::own, true,
              "unique, views, live_allocations, pending, freed, owner_released, same_allocation or contents"},
    FieldSpec{"of", K::handle, false, "the handle checked"},
    FieldSpec{"value", K::own, false, "the expected answer"},
    FieldSpec{"a", K::own, false, "same_allocation: one handle"},
    FieldSpec{"b", K::own, false, "same_allocation: the other"},
    FieldSpec{"equals", K::own, false, "contents: a value form or \"shadow\""}};
constexpr std::array vram_fields{
    FieldSpec{"mark", K::own, false, "true: record the free memory"},
    FieldSpec{"check", K::own, false, "true: compare with the mark"},
    FieldSpec{"tolerance_bytes", K::own, false, "check: the allowed difference", "0"},
    FieldSpec{"device", K::own, false, "one device", "every device used"}};
constexpr std::array loop_fields{FieldSpec{"count", K::count, true, "iterations"}, steps};
constexpr std::array sleep_fields{FieldSpec{"us", K::count, true, "microseconds"}};
constexpr std::array peer_fields{FieldSpec{"devices", K::own, true, "two device ordinals"}};
constexpr std::array note_fields{FieldSpec{"message", K::text, true, "written into the report"}};
constexpr std::array borrow_stream_fields{
    FieldSpec{"id", K::handle, true,
              "the stream's name; steps name it in `stream` as they name a declared stream"},
    FieldSpec{"context", K::handle, false, "a borrowed context (a borrow_context handle)",
              "the scenario's device's"}};
constexpr std::array borrow_context_fields{
    FieldSpec{"id", K::handle, true, "the context's handle (borrow_stream's `context`)"}};

constexpr OpRow kRows[] = {
    {Op::alloc, "alloc", "views", alloc_fields, nullptr, exec_alloc,
     "allocate a buffer from the runtime's pool"},
    {Op::foreign, "foreign", "views", alloc_fields, nullptr, exec_foreign,
     "memory from outside the runtime, adopted with an owner"},
    {Op::slice, "slice", "views", slice_fields, nullptr, exec_slice, "a 1-D window of a buffer"},
    {Op::split, "split", "views", split_fields, nullptr, exec_split,
     "consume a buffer into two disjoint parts"},
    {Op::peel, "peel", "views", peel_fields, nullptr, exec_peel, "the outermost index of a tensor"},
    {Op::atomic, "atomic", "views", view_of_fields, nullptr, exec_atomic,
     "an atomic view (leased as a writer)"},
    {Op::to_tensor, "to_tensor", "views", to_tensor_fields, nullptr, exec_to_tensor,
     "consume a buffer into a tensor (no copy)"},
    {Op::tensor_view, "tensor_view", "views", tensor_view_fields, nullptr, exec_tensor_view,
     "a reshaped or sliced view of a tensor"},
    {Op::as_buffer, "as_buffer", "views", view_of_fields, nullptr, exec_as_buffer,
     "a buffer view of a tensor"},
    {Op::into_buffer, "into_buffer", "views", into_buffer_fields, nullptr, exec_into_buffer,
     "consume a tensor into a buffer (no copy)"},
    {Op::reinterpret, "reinterpret", "views", reinterpret_fields, nullptr, exec_reinterpret,
     "consume a view into one of another element type"},
    {Op::launch, "launch", "launch", launch_fields, read_launch, exec_launch, "launch a catalog kernel"},
    {Op::copy, "copy", "transfer", copy_fields, nullptr, exec_copy, "device-to-device copy"},
    {Op::upload, "upload", "transfer", upload_fields, nullptr, exec_upload, "host-to-device copy"},
    {Op::download, "download", "transfer", download_fields, nullptr, exec_download, "device-to-host copy"},
    {Op::capture, "capture", "graph", capture_fields, nullptr, exec_capture,
     "capture nested steps into a graph"},
    {Op::replay, "replay", "graph", replay_fields, read_replay, exec_replay, "replay a captured graph"},
    {Op::drop, "drop", "views", id_fields, nullptr, exec_drop, "drop a handle (never waits)"},
    {Op::forget, "forget", "views", id_fields, nullptr, exec_forget,
     "leak a handle until the report is written"},
    {Op::wait, "wait", "sync", wait_fields, read_wait, exec_wait, "wait for a future, a stream or all work"},
    {Op::retire, "retire", "sync", retire_fields, nullptr, exec_retire, "wait until retirement has settled"},
    {Op::check, "check", "check", check_fields, read_check, exec_check,
     "compare an observation with a value"},
    {Op::vram, "vram", "check", vram_fields, read_vram, exec_vram, "mark or check the device's free memory"},
    {Op::loop, "loop", "sync", loop_fields, nullptr, exec_loop, "run nested steps count times"},
    {Op::sleep, "sleep", "sync", sleep_fields, nullptr, exec_sleep, "sleep on the host"},
    {Op::peer_access, "peer_access", "sync", peer_fields, read_peer_access, exec_peer_access,
     "enable peer access between two devices"},
    {Op::note, "note", "check", note_fields, nullptr, exec_note,
     "write a message and the counters at this moment into the report"},
    {Op::borrow_stream, "borrow_stream", "interop", borrow_stream_fields, read_borrow_stream,
     exec_borrow_stream,
     "a driver stream made outside the runtime and borrowed; the run destroys it at the repetition's end"},
    {Op::borrow_context, "borrow_context", "interop", borrow_context_fields, nullptr, exec_borrow_context,
     "a driver context made outside the runtime and borrowed; the run destroys it at the repetition's end"},
    {Op::declared_launch, "declared_launch", "launch", declared_launch_fields, read_declared_launch,
     exec_declared_launch,
     "launch a kernel with no body that declares the given accesses: the leases of a recorded launch of a "
     "kernel outside the catalog, without its effect"},
};

constexpr bool rows_in_op_order() {
  for (std::size_t i = 0; i < std::size(kRows); ++i)
    if (static_cast<std::size_t>(kRows[i].op) != i) return false;
  return true;
}
static_assert(rows_in_op_order(), "op table rows must follow Op's order");

const char* kind_name(FieldKind k) {
  switch (k) {
    case K::handle:
      return "handle";
    case K::handle_pair:
      return "handle pair";
    case K::stream:
      return "stream";
    case K::dtype:
      return "dtype";
    case K::len:
      return "length";
    case K::count:
      return "integer";
    case K::init:
      return "init form";
    case K::values:
      return "value form";
    case K::shape:
      return "shape";
    case K::ranges:
      return "ranges";
    case K::steps:
      return "steps";
    case K::text:
      return "text";
    case K::own:
      return "op-specific";
  }
  return "?";
}

}  // namespace

std::span<const OpRow> op_table() noexcept { return kRows; }

const OpRow& op_row(Op op) noexcept { return kRows[static_cast<std::size_t>(op)]; }

const OpRow* find_op(std::string_view name) noexcept {
  for (const OpRow& r : kRows)
    if (name == r.name) return &r;
  return nullptr;
}

nlohmann::ordered_json op_table_json() {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const OpRow& r : kRows) {
    nlohmann::ordered_json fields = nlohmann::ordered_json::array();
    for (const FieldSpec& f : r.fields) {
      nlohmann::ordered_json fj = {
          {"name", f.name}, {"kind", kind_name(f.kind)}, {"required", f.required}, {"doc", f.doc}};
      if (*f.dflt != '\0') fj["default"] = f.dflt;
      fields.push_back(std::move(fj));
    }
    ops.push_back({{"op", r.name}, {"family", r.family}, {"doc", r.doc}, {"fields", std::move(fields)}});
  }
  return ops;
}

}  // namespace tandem::scenario::detail

namespace tandem::scenario {

nlohmann::ordered_json op_list_json() { return detail::op_table_json(); }

std::string op_list_markdown() {
  std::string md =
      "| op | family | fields (required **bold**, an optional one's default in brackets) | what it does "
      "|\n|---|---|---|---|\n";
  for (const detail::OpRow& r : detail::op_table()) {
    std::string fields;
    for (const detail::FieldSpec& f : r.fields) {
      if (!fields.empty()) fields += ", ";
      fields += f.required ? "**" + std::string(f.name) + "**" : std::string(f.name);
      if (*f.dflt != '\0') fields += std::string(" (") + f.dflt + ")";
    }
    md += "| `" + std::string(r.name) + "` | " + r.family + " | " + (fields.empty() ? "—" : fields) + " | " +
          r.doc + " |\n";
  }
  return md;
}

}  // namespace tandem::scenario
