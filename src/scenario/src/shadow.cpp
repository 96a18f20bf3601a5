// SPDX-License-Identifier: Apache-2.0
#include "shadow.hpp"

#include <cstring>
#include <string_view>

namespace tandem::scenario::detail {

void Shadow::on_alloc(std::uint64_t allocation, std::uint64_t bytes) {
  if (!enabled()) return;
  if (total_ + bytes > kMaxBytes) {
    disable("the shadow model holds at most " + std::to_string(kMaxBytes) + " bytes; allocation " +
            std::to_string(allocation) + " would bring it to " + std::to_string(total_ + bytes));
    mem_.clear();
    return;
  }
  total_ += bytes;
  Memory& m = mem_[allocation];
  m.bytes.assign(bytes, std::byte{0});
  m.known.assign(bytes, false);
}

Shadow::Memory* Shadow::find(std::uint64_t allocation) {
  auto it = mem_.find(allocation);
  return it == mem_.end() ? nullptr : &it->second;
}

void Shadow::write(const ViewLayout& v, std::span<const std::byte> elements) {
  Memory* m = find(v.allocation);
  if (!m) return;
  const std::size_t es = dtype_size(v.dtype);
  std::size_t i = 0;
  v.for_each_element([&](std::uint64_t off) {
    if (off + es <= m->bytes.size() && (i + 1) * es <= elements.size()) {
      std::memcpy(m->bytes.data() + off, elements.data() + i * es, es);
      for (std::size_t b = 0; b < es; ++b) m->known[off + b] = true;
    }
    ++i;
  });
}

void Shadow::fill_bytes(const ViewLayout& v, std::uint8_t value) {
  std::vector<std::byte> data(v.elements() * dtype_size(v.dtype), std::byte{value});
  write(v, data);
}

void Shadow::copy(const ViewLayout& src, const ViewLayout& dst) {
  const std::optional<Contents> c = read(src);
  if (!c) return;
  write(dst, c->bytes);
  // What was unknown in the source stays unknown in the destination.
  Memory* m = find(dst.allocation);
  if (!m) return;
  const std::size_t es = dtype_size(dst.dtype);
  std::size_t i = 0;
  dst.for_each_element([&](std::uint64_t off) {
    if (i < c->known.size() && !c->known[i] && off + es <= m->known.size())
      for (std::size_t b = 0; b < es; ++b) m->known[off + b] = false;
    ++i;
  });
  if (c->approximate) m->approximate = true;
}

bool Shadow::any_unknown(const ViewLayout& v) {
  Memory* m = find(v.allocation);
  if (!m) return true;
  const std::size_t es = dtype_size(v.dtype);
  bool unknown = false;
  v.for_each_element([&](std::uint64_t off) {
    for (std::size_t b = 0; b < es && !unknown; ++b)
      unknown = off + b >= m->known.size() || !m->known[off + b];
  });
  return unknown;
}

void Shadow::mark(const ViewLayout& v, bool known, bool approximate) {
  Memory* m = find(v.allocation);
  if (!m) return;
  const std::size_t es = dtype_size(v.dtype);
  v.for_each_element([&](std::uint64_t off) {
    for (std::size_t b = 0; b < es && off + b < m->known.size(); ++b) m->known[off + b] = known;
  });
  if (approximate) m->approximate = true;
}

void Shadow::launch(const kernels::KernelEntry& entry, std::span<const ShadowArg> args,
                    const driver::LaunchDims& dims) {
  if (!enabled() || entry.symbol == nullptr || entry.symbol->host == nullptr) return;
  // spin leaves its view unchanged by definition and only burns time.
  if (std::string_view(entry.name) == "spin") return;
  std::vector<kernels::LaunchArg> packed_args(args.size());
  bool inputs_unknown = false;
  // A non-null host address for empty views (their kernels touch nothing).
  static std::byte empty_view_anchor[16];
  for (std::size_t i = 0; i < args.size() && i < entry.params.size(); ++i) {
    const ShadowArg& a = args[i];
    if (!a.view) {
      packed_args[i] = a.scalar ? kernels::LaunchArg::value(*a.scalar) : kernels::LaunchArg::defaulted();
      continue;
    }
    Memory* m = find(a.view->allocation);
    if (!m) return;  // not modelled (e.g. adopted before the model started)
    const kernels::ParamSpec& p = entry.params[i];
    if (p.mode != driver::AccessMode::write && any_unknown(*a.view)) inputs_unknown = true;
    kernels::ArgShape shape;
    if (a.view->tensor) {
      shape = kernels::ArgShape::tensor(a.view->dtype, std::span(a.view->shape.data(), a.view->rank),
                                        std::span(a.view->strides.data(), a.view->rank));
    } else {
      shape = kernels::ArgShape::buffer(a.view->dtype, a.view->elements());
    }
    std::byte* host = m->bytes.empty() ? empty_view_anchor : m->bytes.data() + a.view->byte_offset;
    packed_args[i] = kernels::LaunchArg::view(reinterpret_cast<driver::DevicePtr>(host), shape);
  }
  kernels::PackedParams packed;
  if (!kernels::pack_params(entry, packed_args, packed).empty()) return;
  entry.symbol->host(packed.pointers(), dims);
  const bool approximate = !entry.tolerance.exact();
  for (std::size_t i = 0; i < args.size() && i < entry.params.size(); ++i) {
    const kernels::ParamSpec& p = entry.params[i];
    if (!args[i].view || p.mode == driver::AccessMode::read) continue;
    if (inputs_unknown) {
      mark(*args[i].view, false, approximate);
    } else if (p.mode == driver::AccessMode::write) {
      mark(*args[i].view, true, approximate);
    } else if (approximate) {
      if (Memory* m = find(args[i].view->allocation)) m->approximate = true;
    }
  }
}

std::optional<Shadow::Contents> Shadow::read(const ViewLayout& v) const {
  auto it = mem_.find(v.allocation);
  if (it == mem_.end()) return std::nullopt;
  const Memory& m = it->second;
  const std::size_t es = dtype_size(v.dtype);
  Contents c;
  c.approximate = m.approximate;
  c.bytes.resize(v.elements() * es);
  c.known.resize(v.elements());
  std::size_t i = 0;
  v.for_each_element([&](std::uint64_t off) {
    bool known = off + es <= m.bytes.size();
    for (std::size_t b = 0; b < es && known; ++b) known = m.known[off + b];
    if (off + es <= m.bytes.size()) std::memcpy(c.bytes.data() + i * es, m.bytes.data() + off, es);
    c.known[i] = known;
    ++i;
  });
  return c;
}

}  // namespace tandem::scenario::detail
