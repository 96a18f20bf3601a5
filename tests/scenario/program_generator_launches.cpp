// SPDX-License-Identifier: Apache-2.0
// program_generator_launches.cpp — ProgramGenerator: the steps that submit work: launches,
// copies and graphs (program_generator.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scenario/program_generator.hpp"

namespace tandem::scenario::test {

void ProgramGenerator::declared(json& body) {
  const std::string s = stream();
  const std::vector<std::size_t> got = matching(false, 1 + below(3), device_of_stream(s));
  if (got.empty()) return alloc(body);
  json accesses = json::array();
  std::vector<Access> acc;
  for (const std::size_t i : got) {
    const std::string mode = pick<std::string>({"read", "write", "read_write", "atomic"});
    accesses.push_back({{"view", live_[i].name}, {"access", mode}});
    acc.push_back(mode == "read" ? read_of(live_[i]) : write_of(live_[i]));
  }
  json step = {{"op", "declared_launch"}, {"kernel", "fuzz_declared"}, {"stream", s}, {"accesses", accesses}};
  submit(body, step, s, acc);
}

void ProgramGenerator::simt(json& body, const std::string* loop_stream, std::vector<Access>* loop_acc) {
  const bool in_loop = loop_stream != nullptr;
  const std::string s = in_loop ? *loop_stream : stream();
  json step = {{"op", "launch"}, {"model", "simt"}, {"stream", s}};
  const std::string kernel = pick<std::string>({"fill", "iota", "scale", "spin", "copy", "add", "axpy"});
  const std::size_t views = kernel == "add" ? 3 : (kernel == "copy" || kernel == "axpy") ? 2 : 1;
  const std::vector<std::size_t> got = matching(false, views, device_of_stream(s));
  if (got.empty()) {
    if (!in_loop) alloc(body);
    return;
  }
  auto name = [&](std::size_t i) { return live_[got[i]].name; };
  std::vector<Access> acc;
  // fill, iota and copy's dst write; scale, spin and axpy's y read-write.
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool reads_only =
        (kernel == "copy" && i == 0) || (kernel == "add" && i < 2) || (kernel == "axpy" && i == 0);
    acc.push_back(reads_only ? read_of(live_[got[i]]) : write_of(live_[got[i]]));
  }
  step["kernel"] = kernel;
  if (kernel == "fill") {
    step["args"] = {{"out", name(0)}};
    step["scalars"] = {{"value", pick<int>({-2, 0, 1, 7})}};
  } else if (kernel == "iota") {
    step["args"] = {{"out", name(0)}};
    step["scalars"] = {{"start", pick<int>({0, 5})}, {"step", pick<int>({1, -1, 2})}};
  } else if (kernel == "scale") {
    step["args"] = {{"x", name(0)}};
    step["scalars"] = {{"a", pick<double>({-1, 0.5, 2})}};
  } else if (kernel == "spin") {
    step["args"] = {{"x", name(0)}};
    step["scalars"] = {{"ns", pick<int>({0, 20000, 200000})}};
  } else if (kernel == "copy") {
    step["args"] = {{"src", name(0)}, {"dst", name(1)}};
  } else if (kernel == "add") {
    step["args"] = {{"a", name(0)}, {"b", name(1)}, {"out", name(2)}};
  } else {
    step["args"] = {{"x", name(0)}, {"y", name(1)}};
    step["scalars"] = {{"a", pick<double>({1, -0.5, 2})}};
  }
  if (in_loop) {
    loop_acc->insert(loop_acc->end(), acc.begin(), acc.end());
    body.push_back(step);
    return;
  }
  if (below(3) == 0) {
    futures_.push_back(fresh());
    step["id"] = futures_.back();
    std::vector<std::size_t>& allocs = launch_allocs_[futures_.back()];
    for (const Access& a : acc) {
      if (std::find(allocs.begin(), allocs.end(), a.alloc) == allocs.end()) allocs.push_back(a.alloc);
    }
  }
  submit(body, step, s, acc);
}

void ProgramGenerator::future(json& body) {
  if (futures_.empty()) return simt(body);
  const std::size_t i = below(futures_.size());
  body.push_back(
      {{"op", pick<std::string>({"wait", "drop", kForget ? "forget" : "drop"})}, {"id", futures_[i]}});
  futures_.erase(futures_.begin() + static_cast<std::ptrdiff_t>(i));
}

void ProgramGenerator::loop(json& body) {
  const std::string s = stream();
  json inner = json::array();
  std::vector<Access> acc;
  for (int k = 0; k < 2; ++k) simt(inner, &s, &acc);
  if (inner.empty()) return wait(body);
  submit(body, {{"op", "loop"}, {"count", 1 + below(3)}, {"steps", inner}}, s, acc);
}

void ProgramGenerator::tile(json& body) {
  const std::vector<std::size_t> tensors = live_of(true);
  if (tensors.empty()) return to_tensor(body);
  const Handle first = live_[tensors[below(tensors.size())]];
  const std::string kernel = pick<std::string>({"scale", "add", "copy", "transpose"});
  std::vector<std::size_t> used{first.alloc};
  const int device = device_of(first);
  auto operand = [&](std::uint32_t rows, std::uint32_t cols) {
    for (const Handle& h : live_) {
      if (h.tensor && h.rows == rows && h.cols == cols && device_of(h) == device &&
          std::find(used.begin(), used.end(), h.alloc) == used.end()) {
        used.push_back(h.alloc);
        return h;
      }
    }
    const Handle made = make_tensor(body, rows, cols, device);
    used.push_back(made.alloc);
    return made;
  };
  const std::string s = stream_on(device);
  json step = {{"op", "launch"}, {"model", "tile"}, {"kernel", kernel}, {"stream", s}};
  std::vector<Access> acc{kernel == "scale" ? write_of(first) : read_of(first)};
  if (kernel == "scale") {
    step["args"] = {{"x", first.name}};
    step["scalars"] = {{"a", pick<double>({-1, 0.5, 2})}};
  } else if (kernel == "add") {
    const Handle b = operand(first.rows, first.cols), out = operand(first.rows, first.cols);
    step["args"] = {{"a", first.name}, {"b", b.name}, {"out", out.name}};
    acc.push_back(read_of(b));
    acc.push_back(write_of(out));
  } else {
    const Handle dst = kernel == "copy" ? operand(first.rows, first.cols) : operand(first.cols, first.rows);
    step["args"] = {{"src", first.name}, {"dst", dst.name}};
    acc.push_back(write_of(dst));
  }
  submit(body, step, s, acc);
}

void ProgramGenerator::transfer(json& body) {
  switch (below(3)) {
    case 0: {
      const std::vector<std::size_t> got = matching(false, 2);
      if (got.empty()) return alloc(body);
      // Between devices (peer access is on): a stream of either side.
      const std::string s = stream_on(device_of(live_[got[below(2)]]));
      submit(body, {{"op", "copy"}, {"src", live_[got[0]].name}, {"dst", live_[got[1]].name}, {"stream", s}},
             s, {read_of(live_[got[0]]), write_of(live_[got[1]])});
      return;
    }
    case 1: {
      const std::vector<std::size_t> bufs = live_of(false);
      if (bufs.empty()) return alloc(body);
      const Handle& h = live_[bufs[below(bufs.size())]];
      const std::string s = stream_on(device_of(h));
      submit(body,
             {{"op", "upload"}, {"buf", h.name}, {"stream", s}, {"from", {{"fill", pick<int>({4, -3})}}}}, s,
             {write_of(h)});
      return;
    }
    default: {
      const std::vector<std::size_t> bufs = live_of(false);
      if (bufs.empty()) return alloc(body);
      const Handle& h = live_[bufs[below(bufs.size())]];
      const std::string s = stream_on(device_of(h));
      submit(body, {{"op", "download"}, {"buf", h.name}, {"stream", s}}, s, {read_of(h)});
      return;
    }
  }
}

void ProgramGenerator::graph(json& body) {
  // Capture is per stream and thread: another thread's launch on the
  // stream would race with it (an error by design), so threads do not.
  if (threaded_) return simt(body);
  if (!graphs_.empty() && below(3) != 0) {
    const std::size_t g = below(graphs_.size());
    if (below(3) == 0) {
      body.push_back({{"op", "drop"}, {"id", graphs_[g].name}});
      body.push_back({{"op", "retire"}});
      pending_.clear();
      --graph_refs_[graphs_[g].alloc];
      graphs_.erase(graphs_.begin() + static_cast<std::ptrdiff_t>(g));
    } else {
      const Graph& gr = graphs_[g];
      const std::string s = stream_on(alloc_device_[gr.alloc]);
      submit(body, {{"op", "replay"}, {"graph", gr.name}, {"stream", s}}, s,
             {Access{gr.alloc, gr.offset, gr.offset + gr.span, true}});
    }
    return;
  }
  const std::vector<std::size_t> bufs = live_of(false, true);
  if (bufs.empty()) return alloc(body);
  const Handle& h = live_[bufs[below(bufs.size())]];
  const std::string s = stream_on(device_of(h));
  const Graph g{fresh(), h.alloc, h.offset, h.span()};
  body.push_back({{"op", "capture"},
                  {"graph", g.name},
                  {"stream", s},
                  {"steps", json::array({{{"op", "launch"},
                                          {"model", "simt"},
                                          {"kernel", "scale"},
                                          {"stream", s},
                                          {"args", {{"x", h.name}}},
                                          {"scalars", {{"a", -1}}}}})}});
  ++graph_refs_[h.alloc];
  graphs_.push_back(g);
}

}  // namespace tandem::scenario::test
