// SPDX-License-Identifier: Apache-2.0
// ops/launch.cpp — a catalog kernel launched through kernels::launch: the
// loader checks the kernel and its arguments by name; the compiled plan
// (program.hpp) holds the parameter layout and packed scalars, so a launch
// step only looks up its views' slots and resolves against their shapes
// when those change. A declared launch (a recorded launch of a kernel
// outside the catalog) launches the kernel with no body with the accesses
// the step lists: the leases without the effect.
#include <algorithm>

#include "../engine.hpp"
#include "../json_reader.hpp"
#include "ops.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/declared.hpp"
#include "tandem/refused_launch.hpp"

namespace tandem::scenario::detail {

namespace {

struct KernelRead {
  std::string model;  // as written
  bool have_model = false, have_kernel = false;
  std::span<const kernels::ParamSpec> params;
  std::vector<std::string> views, scalars;
};

KernelRead read_kernel(Reader& r, const json& j, const std::string& p, Step& s) {
  KernelRead k;
  if (auto it = j.find("model"); it != j.end() && r.enum_str(*it, p + ".model", {"simt", "tile"}, k.model)) {
    s.model = k.model == "simt" ? kernels::Model::simt : kernels::Model::tile;
    k.have_model = true;
  }
  if (auto it = j.find("kernel"); it != j.end() && r.name_str(*it, p + ".kernel", s.kernel) && k.have_model) {
    k.params = kernels::kernel_params(s.model, s.kernel);
    if (k.params.empty()) {
      const auto near = kernels::suggest(s.model, s.kernel, 3);
      std::string hint;
      if (!near.empty()) hint = " (did you mean '" + near.front() + "'?)";
      r.error(p + ".kernel", "unknown " + k.model + " kernel '" + s.kernel + "'" + hint +
                                 "; known: " + list(kernels::kernel_names(s.model)));
    } else {
      k.have_kernel = true;
    }
  }
  for (const auto& ps : k.params)
    (ps.kind == kernels::ArgKind::view ? k.views : k.scalars).emplace_back(ps.name);
  return k;
}

void read_args(Reader& r, const json& j, const std::string& p, Step& s, const KernelRead& k) {
  auto it = j.find("args");
  if (it == j.end()) return;
  if (!it->is_object()) {
    r.expected(p + ".args", "an object {param: handle}", *it);
    return;
  }
  const json& args = *it;
  for (const auto& [name, v] : args.items()) {
    const std::string q = p + ".args." + name;
    std::string h;
    if (!r.name_str(v, q, h)) continue;
    if (k.have_kernel && std::find(k.views.begin(), k.views.end(), name) == k.views.end()) {
      r.error(q, "kernel '" + s.kernel + "' has no view parameter '" + name + "'" +
                     did_you_mean(name, k.views) + "; expected " + list(k.views));
      continue;
    }
    s.args[name] = h;
  }
  if (k.have_kernel)
    for (const auto& v : k.views)
      if (args.find(v) == args.end())
        r.error(p + ".args." + v, "missing argument '" + v + "' of kernel '" + s.kernel + "'");
}

void read_scalars(Reader& r, const json& j, const std::string& p, Step& s, const KernelRead& k) {
  if (auto it = j.find("scalars"); it != j.end()) {
    if (!it->is_object()) {
      r.expected(p + ".scalars", "an object {param: number}", *it);
    } else {
      for (const auto& [name, v] : it->items()) {
        const std::string q = p + ".scalars." + name;
        double d = 0;
        if (!r.number(v, q, d)) continue;
        if (k.have_kernel && std::find(k.scalars.begin(), k.scalars.end(), name) == k.scalars.end()) {
          r.error(q, "kernel '" + s.kernel + "' has no scalar parameter '" + name + "'" +
                         did_you_mean(name, k.scalars) +
                         (k.scalars.empty() ? std::string("; it takes no scalars")
                                            : "; expected " + list(k.scalars)));
          continue;
        }
        s.scalars[name] = d;
      }
    }
  }
  if (k.have_kernel)
    for (const auto& ps : k.params)
      if (ps.kind == kernels::ArgKind::scalar && !ps.default_value && !s.scalars.contains(ps.name))
        r.error(p + ".scalars." + ps.name, std::string("missing scalar '") + ps.name + "' of kernel '" +
                                               s.kernel + "' (it has no default)");
}

void read_dims(Reader& r, const json& j, const std::string& p, Step& s, const KernelRead& k) {
  const bool tile = k.have_model && s.model == kernels::Model::tile;
  for (const char* key : {"grid", "block"}) {
    if (auto it = j.find(key); it != j.end()) {
      if (tile)
        r.error(p + "." + key, std::string("'") + key + "' is for simt launches; tile launches take 'tile'");
      else
        r.dim3(*it, p + "." + key, std::string(key) == "grid" ? s.grid : s.block);
    }
  }
  if (auto it = j.find("tile"); it != j.end()) {
    if (k.have_model && !tile) {
      r.error(p + ".tile", "'tile' is for tile launches; simt launches take 'grid'/'block'");
    } else if (it->is_number()) {
      std::uint64_t v = 0;
      if (r.uint_in(*it, p + ".tile", 1, kMaxLen, v)) s.tile = {static_cast<std::int64_t>(v)};
    } else {
      r.dims_list(*it, p + ".tile", 1, 2, 1, s.tile);
    }
  }
}

bool same_shapes(const std::vector<kernels::ArgShape>& a, const std::vector<kernels::ArgShape>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype != b[i].dtype || a[i].rank != b[i].rank) return false;
    for (int d = 0; d < a[i].rank; ++d)
      if (a[i].shape[d] != b[i].shape[d] || a[i].stride[d] != b[i].stride[d]) return false;
  }
  return true;
}

// The plan's views for this run, checked against the model.
void bind_views(Engine& e, const Step& st, LaunchPlan& p) {
  p.held.clear();
  p.bound.clear();
  p.bound_epoch = LaunchPlan::kNotBound;
  for (std::size_t i = 0; i < p.params.size(); ++i) {
    const kernels::ParamSpec& ps = p.params[i];
    if (ps.kind == kernels::ArgKind::scalar) continue;
    if (p.view_slots[i] == kNoSlot)
      HandleTable::refuse(ErrorCode::invalid_handle, "argument '" + std::string(ps.name) + "' is missing");
    std::shared_ptr<Handle> h = e.handles.view(p.view_slots[i], {"argument '", ps.name, "'"});
    const bool tensor = h->view.is_tensor();
    if (st.model == kernels::Model::simt && tensor) {
      throw Error(ErrorCode::unsupported, "simt kernel '" + st.kernel + "' takes buffers; argument '" +
                                              ps.name + "' ('" + e.handles.name(p.view_slots[i]) +
                                              "') is a tensor: hand it over with as_buffer or into_buffer");
    }
    if (st.model == kernels::Model::tile && !tensor) {
      throw Error(ErrorCode::unsupported, "tile kernel '" + st.kernel + "' takes tensors; argument '" +
                                              ps.name + "' ('" + e.handles.name(p.view_slots[i]) +
                                              "') is a buffer: hand it over with to_tensor");
    }
    p.shapes[i] = kernels::shape_of(h->view);
    p.args[i] = kernels::Arg::of(h->view);
    p.bound.push_back(h.get());
    p.held.push_back(std::move(h));
  }
}

const kernels::KernelEntry& resolve(const Step& st, LaunchPlan& p) {
  if (p.resolved != nullptr && same_shapes(p.shapes, p.resolved_shapes)) return *p.resolved;
  std::string why;
  const kernels::KernelEntry* entry =
      kernels::resolve(st.model, st.kernel, p.shapes, p.has_tile ? &p.tile : nullptr, &why);
  if (entry == nullptr) {
    throw Error(p.has_tile ? ErrorCode::unsupported : ErrorCode::invalid_dtype,
                std::string(kernels::model_name(st.model)) + " kernel '" + st.kernel + "': " + why);
  }
  p.resolved = entry;
  p.resolved_shapes = p.shapes;
  return *entry;
}

// A refusal of bind_views or resolve, for a recording
// (tandem/refused_launch.hpp): the step as written, its views looked up
// again (a name that holds no view is passed as none: the recording cannot
// name it and leaves the step out). kernels::launch reports its own.
[[gnu::cold, gnu::noinline]] void report_refusal(Engine& e, const Step& st, const LaunchPlan& p,
                                                 StreamRef stream, ErrorCode code) noexcept {
  try {
    std::vector<std::shared_ptr<Handle>> held;
    std::vector<RefusedLaunch::ViewArg> views;
    std::vector<RefusedLaunch::ScalarArg> scalars;
    for (std::size_t i = 0; i < p.params.size(); ++i) {
      const kernels::ParamSpec& ps = p.params[i];
      if (ps.kind == kernels::ArgKind::scalar) {
        if (const auto it = st.scalars.find(ps.name); it != st.scalars.end())
          scalars.push_back({ps.name, it->second});
        continue;
      }
      const View* v = nullptr;
      if (p.view_slots[i] != kNoSlot) {
        try {
          held.push_back(e.handles.view(p.view_slots[i], {"argument '", ps.name, "'"}));
          v = &held.back()->view;
        } catch (const Error&) {
          // dropped, or not a view: left as none
        }
      }
      views.push_back({ps.name, v});
    }
    const RefusedLaunch what{
        stream, kernels::model_name(st.model), st.kernel, views, scalars, st.tile, p.grid, p.block};
    record_refused_launch(what, code);
  } catch (...) {
    // Out of memory building the report: the step's own error is the one to keep.
  }
}

// The launch's effect on the shadow model, now or (captured) per replay.
void model_effect(Engine& e, const kernels::KernelEntry& entry, LaunchPlan& p, const LaunchFuture& f,
                  ThreadState& t) {
  const bool captured = !f.valid() && t.capture != nullptr;
  if (!e.shadow_on && !captured) return;
  std::size_t v = 0;
  for (std::size_t i = 0; i < p.params.size(); ++i)
    if (p.params[i].kind == kernels::ArgKind::view)
      p.shadow_args[i].view = ViewLayout::of(p.bound[v++]->view);
  driver::LaunchDims dims;
  (void)kernels::launch_dims(entry, p.shapes, p.grid, p.block, dims);
  auto effect = [entry = &entry, args = p.shadow_args, dims](Shadow& sh) { sh.launch(*entry, args, dims); };
  if (captured) {
    for (const Handle* h : p.bound)
      if (h->view.extent_bytes() > 0) t.capture->allocations.insert(h->view.allocation_id());
    if (e.shadow_on) t.capture->record->effects.emplace_back(effect);
  } else {
    effect(e.shadow);
  }
}

// The `access` names of declared_launch, in AccessMode's order.
const std::vector<std::string>& access_names() {
  static const std::vector<std::string> names = {"read", "write", "read_write", "atomic"};
  return names;
}

AccessMode access_of(const std::string& name) {
  if (name == "write") return AccessMode::write;
  if (name == "read_write") return AccessMode::read_write;
  if (name == "atomic") return AccessMode::atomic;
  return AccessMode::read;
}

void read_access(Reader& r, const json& a, const std::string& q, Step& s) {
  if (!a.is_object()) {
    r.expected(q, "an object {\"view\": handle, \"access\": mode}", a);
    return;
  }
  static const std::vector<std::string> keys = {"view", "access"};
  for (const auto& [k, v] : a.items()) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      r.error(q + "." + k,
              "unknown access field '" + k + "'" + did_you_mean(k, keys) + "; expected view, access");
  }
  std::string view, mode;
  bool ok = true;
  for (const std::string& k : keys) {
    const auto it = a.find(k);
    if (it == a.end()) {
      r.error(q + "." + k, "missing required field '" + k + "' of an access");
      ok = false;
    } else if (k == "view") {
      ok = r.name_str(*it, q + ".view", view) && ok;
    } else {
      ok = r.enum_str(*it, q + ".access", access_names(), mode) && ok;
    }
  }
  if (ok) s.accesses.emplace_back(view, access_of(mode));
}

}  // namespace

void read_declared_launch(Reader& r, const json& j, const std::string& p, Step& s) {
  if (!s.id.empty()) r.submission_ids.push_back(s.id);
  if (auto it = j.find("kernel");
      it != j.end() && r.str(*it, p + ".kernel", s.kernel) && s.kernel.size() > kMaxTextBytes) {
    r.error(p + ".kernel", "a name of " + std::to_string(s.kernel.size()) + " bytes; at most " +
                               std::to_string(kMaxTextBytes));
  }
  if (auto it = j.find("accesses"); it != j.end()) {
    if (!it->is_array()) {
      r.expected(p + ".accesses", "an array of {\"view\": handle, \"access\": mode}", *it);
    } else {
      for (std::size_t i = 0; i < it->size(); ++i)
        read_access(r, (*it)[i], p + ".accesses[" + std::to_string(i) + "]", s);
    }
  }
  for (const char* key : {"grid", "block"})
    if (auto it = j.find(key); it != j.end())
      r.dim3(*it, p + "." + key, std::string(key) == "grid" ? s.grid : s.block);
}

// The runtime sees a launch like the recorded one: the same views with the
// same modes, so the same leases, waits and conflicts; the kernel does
// nothing, so the shadow model has no effect to replay.
void exec_declared_launch(Engine& e, const CompiledStep& s, ThreadState& t) {
  DeclaredPlan& p = *s.declared;
  struct Release {
    DeclaredPlan& p;
    ~Release() {
      p.accesses.clear();
      p.held.clear();
    }
  } release{p};
  e.handles.require_free(s.id);
  const Stream stream = e.session.stream(e.handles, s);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < p.slots.size(); ++i) {
    std::shared_ptr<Handle> h = e.handles.view(p.slots[i], {"declared access"});
    bytes += h->view.extent_bytes();
    p.held.push_back(std::move(h));
  }
  // After the loop: `held` no longer moves, so the views' addresses hold.
  for (std::size_t i = 0; i < p.held.size(); ++i)
    p.accesses.push_back(ViewAccess{&p.held[i]->view, s.step->accesses[i].second});
  e.session.arm_fault(s, stream);
  const std::uint64_t t0 = e.clock.ticks();
  LaunchFuture f = tandem::launch(stream, kernels::declared_access_kernel(), p.dims, nullptr, p.accesses);
  const std::uint64_t took = e.clock.ticks() - t0;
  e.submitted(s, t, f, bytes, took, true);
  if (!f.valid() && t.capture != nullptr) {
    for (const auto& h : p.held)
      if (h->view.extent_bytes() > 0) t.capture->allocations.insert(h->view.allocation_id());
  }
  e.name_future(s, std::move(f));
}

void read_launch(Reader& r, const json& j, const std::string& p, Step& s) {
  if (!s.id.empty()) r.submission_ids.push_back(s.id);
  const KernelRead k = read_kernel(r, j, p, s);
  read_args(r, j, p, s, k);
  read_scalars(r, j, p, s, k);
  read_dims(r, j, p, s, k);
}

void exec_launch(Engine& e, const CompiledStep& s, ThreadState& t) {
  const Step& st = *s.step;
  LaunchPlan& p = *s.launch;
  // The views are held for the call only: a failed step must not keep one
  // alive (a later `check freed` or `unique` would see it).
  struct Release {
    LaunchPlan& p;
    ~Release() { p.held.clear(); }
  } release{p};
  e.handles.require_free(s.id);
  std::optional<Stream> keep;
  const Stream& stream = e.session.stream_ref(e.handles, s, keep);
  // Without `threads` only this thread changes the handle table: while its
  // epoch stays the one of the last binding, that binding still holds
  // (LaunchPlan::bound_epoch) and the views are neither looked up nor held.
  const bool single_thread = e.program.threads.empty();
  if (!single_thread || p.bound_epoch != e.handles.epoch()) {
    try {
      bind_views(e, st, p);
      (void)resolve(st, p);
    } catch (const Error& err) {
      // A name's refusal is reported by the step's caller (Engine::run_steps).
      if (!HandleTable::refused()) report_refusal(e, st, p, stream, err.code());
      throw;
    }
    std::uint64_t bytes = 0;
    for (const Handle* h : p.bound) bytes += h->view.extent_bytes();
    p.bound_bytes = bytes;
    if (single_thread) p.bound_epoch = e.handles.epoch();
  }
  const kernels::KernelEntry& entry = *p.resolved;
  e.session.arm_fault(s, stream);
  const std::uint64_t t0 = e.clock.ticks();
  LaunchFuture f = kernels::launch(stream, entry, p.args, p.grid, p.block);
  const std::uint64_t took = e.clock.ticks() - t0;
  e.submitted(s, t, f, p.bound_bytes, took, true);
  model_effect(e, entry, p, f, t);
  e.name_future(s, std::move(f));
}

}  // namespace tandem::scenario::detail
