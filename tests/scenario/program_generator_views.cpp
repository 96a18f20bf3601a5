// SPDX-License-Identifier: Apache-2.0
// program_generator_views.cpp — ProgramGenerator: the steps that make, view, convert and drop
// handles, and borrowed streams and contexts (program_generator.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scenario/program_generator.hpp"

namespace tandem::scenario::test {

void ProgramGenerator::alloc(json& body) {
  if (oom_at_ != 0 && ++plain_allocs_ == oom_at_) {
    // The sim fails this driver allocation: the step fails with
    // out_of_memory, and nothing of it may remain (runtime.md §9).
    oom_nth_ = driver_allocs_ + 1;
    oom_at_ = 0;
    body.push_back({{"op", "alloc"},
                    {"id", fresh()},
                    {"dtype", "f32"},
                    {"len", 64},
                    {"init", "zero"},
                    {"stream", stream()},
                    {"expect_error", "out_of_memory"}});
    return;
  }
  (void)alloc_buffer(body);
}

Handle ProgramGenerator::alloc_buffer(json& body, std::uint32_t want, int device) {
  const std::uint32_t len = want ? want : pick<std::uint32_t>({16, 64, 256, 1024});
  const json init = pick<json>({"zero", "iota", json{{"fill", 3}}, json{{"random", rng_() % 1000}}});
  Handle h{fresh(), views_.size(), false, len};
  views_.push_back(1);
  graph_refs_.push_back(0);
  const std::string s = device < 0 ? stream() : stream_on(device);
  alloc_device_.push_back(device_of_stream(s));
  ++driver_allocs_;
  submit(body,
         {{"op", "alloc"}, {"id", h.name}, {"dtype", "f32"}, {"len", len}, {"init", init}, {"stream", s}}, s,
         {write_of(h)});
  live_.push_back(h);
  return h;
}

void ProgramGenerator::cross_copy(json& body) {
  const std::vector<std::size_t> bufs = live_of(false);
  if (bufs.empty()) return alloc(body);
  const Handle src = live_[bufs[below(bufs.size())]];
  const int there = 1 - device_of(src);
  std::optional<Handle> dst;
  for (std::size_t i : bufs) {
    if (device_of(live_[i]) == there && live_[i].len == src.len) dst = live_[i];
  }
  if (!dst) dst = alloc_buffer(body, src.len, there);
  const bool forward = below(2) == 0;
  const Handle& from = forward ? src : *dst;
  const Handle& to = forward ? *dst : src;
  const std::string s = stream_on(device_of(below(2) == 0 ? from : to));
  submit(body, {{"op", "copy"}, {"src", from.name}, {"dst", to.name}, {"stream", s}}, s,
         {read_of(from), write_of(to)});
}

void ProgramGenerator::slice(json& body) {
  const std::vector<std::size_t> bufs = live_of(false, true);
  if (bufs.empty()) return alloc(body);
  const Handle& of = live_[bufs[below(bufs.size())]];
  const std::uint32_t len = std::min<std::uint32_t>(of.len, pick<std::uint32_t>({16, 64, 256}));
  const std::uint32_t offset = static_cast<std::uint32_t>(below(of.len - len + 1));
  Handle h{fresh(), of.alloc, false, len};
  h.offset = of.offset + offset;
  ++views_[of.alloc];
  body.push_back({{"op", "slice"}, {"id", h.name}, {"of", of.name}, {"offset", offset}, {"len", len}});
  live_.push_back(h);
}

void ProgramGenerator::split_or_peel(json& body) {
  const std::vector<std::size_t> bufs = live_of(false, true);
  if (bufs.empty()) return alloc(body);
  const std::size_t i = bufs[below(bufs.size())];
  Handle& of = live_[i];
  if (below(2) == 0 && of.len >= 2) {
    const std::uint32_t at = of.len / 2;
    Handle a{fresh(), of.alloc, false, at}, b{fresh(), of.alloc, false, of.len - at};
    a.offset = of.offset;
    b.offset = of.offset + at;
    body.push_back({{"op", "split"}, {"of", of.name}, {"at", at}, {"ids", {a.name, b.name}}});
    ++views_[of.alloc];
    live_[i] = a;
    live_.push_back(b);
    return;
  }
  Handle p{fresh(), of.alloc, false, 1};
  const std::uint32_t index = static_cast<std::uint32_t>(below(of.len));
  p.offset = of.offset + index;
  body.push_back({{"op", "peel"}, {"id", p.name}, {"of", of.name}, {"index", index}});
  ++views_[of.alloc];
  live_.push_back(p);
}

void ProgramGenerator::sub_tensor(json& body) {
  const std::vector<std::size_t> tensors = live_of(true, true);
  if (tensors.empty()) return to_tensor(body);
  const Handle& t = live_[tensors[below(tensors.size())]];
  if (!t.contiguous || t.rows < 2 || t.cols < 2) return tile(body);
  const std::uint32_t r = t.rows / 2, c = t.cols / 2;
  Handle v{fresh(), t.alloc, true, r * c, r, c, r == 1};
  v.offset = t.offset;
  v.strided_span = (r - 1) * t.cols + c;
  body.push_back({{"op", "tensor_view"}, {"id", v.name}, {"of", t.name}, {"slice", {{0, r}, {0, c}}}});
  ++views_[t.alloc];
  live_.push_back(v);
}

Handle ProgramGenerator::make_tensor(json& body, std::uint32_t rows, std::uint32_t cols, int device) {
  const Handle buf{fresh(), views_.size(), false, rows * cols};
  views_.push_back(1);
  graph_refs_.push_back(0);
  alloc_device_.push_back(device);
  ++driver_allocs_;
  const std::string s = stream_on(device);
  submit(body,
         {{"op", "alloc"},
          {"id", buf.name},
          {"dtype", "f32"},
          {"len", buf.len},
          {"init", json{{"random", rng_() % 1000}}},
          {"stream", s}},
         s, {write_of(buf)});
  const Handle t{fresh(), buf.alloc, true, buf.len, rows, cols};
  body.push_back({{"op", "to_tensor"}, {"id", t.name}, {"from", buf.name}, {"shape", {rows, cols}}});
  live_.push_back(t);
  return t;
}

void ProgramGenerator::to_tensor(json& body) {
  const std::vector<std::size_t> bufs = live_of(false, true);
  if (bufs.empty()) return alloc(body);
  const std::size_t i = bufs[below(bufs.size())];
  Handle& h = live_[i];
  // Every length here is a power of two: a square-ish 2-D shape of it.
  std::uint32_t rows = 1;
  while (rows * rows * 4 <= h.len) rows *= 2;
  if (below(2) == 0 && rows > 1) rows /= 2;
  const std::uint32_t cols = h.len / rows;
  const std::string id = fresh();
  json step = {{"op", "to_tensor"}, {"id", id}, {"from", h.name}, {"shape", {rows, cols}}};
  if (!unique(h.alloc)) {
    step["expect_error"] = "aliased";
    body.push_back(step);
    return;
  }
  body.push_back(step);
  h = h.as(id, true, rows, cols);
}

void ProgramGenerator::from_tensor(json& body) {
  const std::vector<std::size_t> tensors = live_of(true, true);
  if (tensors.empty()) return to_tensor(body);
  Handle& t = live_[tensors[below(tensors.size())]];
  const std::string id = fresh();
  if (below(2) == 0 && t.contiguous) {
    ++views_[t.alloc];
    body.push_back({{"op", "as_buffer"}, {"id", id}, {"of", t.name}});
    live_.push_back(t.as(id, false));
    return;
  }
  json step = {{"op", "into_buffer"}, {"id", id}, {"from", t.name}};
  if (!unique(t.alloc) || !t.contiguous) {
    // Contiguity is checked first (docs/runtime.md): a strided view fails
    // with non_contiguous even where the allocation is also aliased.
    step["expect_error"] = t.contiguous ? "aliased" : "non_contiguous";
    body.push_back(step);
    return;
  }
  body.push_back(step);
  t = t.as(id, false);
}

void ProgramGenerator::drop(json& body) {
  const std::vector<std::size_t> mine = owned();
  if (mine.empty()) return alloc(body);
  const std::size_t i = mine[below(mine.size())];
  --views_[live_[i].alloc];
  body.push_back({{"op", "drop"}, {"id", live_[i].name}});
  live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
}

void ProgramGenerator::borrowed(json& body) {
  if (threaded_ || two_devices_ || oom_at_ != 0) return wait(body);  // oom: driver allocations are counted
  if (below(4) == 0) return borrowed_context(body);
  if (borrowed_.empty() || (borrowed_.size() < 2 && below(2) == 0)) {
    const std::string name = named('b');
    body.push_back({{"op", "borrow_stream"}, {"id", name}});
    streams_.push_back(name);
    stream_device_.push_back(0);
    borrowed_.push_back(name);
    return;
  }
  const std::string name = borrowed_[below(borrowed_.size())];
  const std::size_t i =
      static_cast<std::size_t>(std::find(streams_.begin(), streams_.end(), name) - streams_.begin());
  streams_.erase(streams_.begin() + static_cast<std::ptrdiff_t>(i));
  stream_device_.erase(stream_device_.begin() + static_cast<std::ptrdiff_t>(i));
  borrowed_.erase(std::find(borrowed_.begin(), borrowed_.end(), name));
  body.push_back({{"op", "drop"}, {"id", name}});
}

void ProgramGenerator::borrowed_context(json& body) {
  const std::string c = named('c'), bs = named('b'), x = fresh();
  body.push_back({{"op", "borrow_context"}, {"id", c}});
  body.push_back({{"op", "borrow_stream"}, {"id", bs}, {"context", c}});
  body.push_back({{"op", "alloc"},
                  {"id", x},
                  {"dtype", "f32"},
                  {"len", pick<std::uint32_t>({16, 1024})},
                  {"init", "iota"},
                  {"stream", bs}});
  ++driver_allocs_;
  const bool context_first = below(2) == 0;
  if (context_first) body.push_back({{"op", "drop"}, {"id", c}});
  body.push_back({{"op", "launch"},
                  {"model", "simt"},
                  {"kernel", "scale"},
                  {"stream", bs},
                  {"args", {{"x", x}}},
                  {"scalars", {{"a", pick<double>({-1, 0.5, 2})}}}});
  body.push_back({{"op", "drop"}, {"id", bs}});
  if (!context_first) body.push_back({{"op", "drop"}, {"id", c}});
  body.push_back(shadow_check(Handle{x, 0, false, 0}));
  body.push_back({{"op", "drop"}, {"id", x}});
}

}  // namespace tandem::scenario::test
