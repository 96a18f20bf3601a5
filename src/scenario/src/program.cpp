// SPDX-License-Identifier: Apache-2.0
// program.cpp — compile(): names to slots, launches to plans.
#include "program.hpp"

#include <algorithm>
#include <unordered_map>

namespace tandem::scenario::detail {

namespace {

class Compiler {
 public:
  explicit Compiler(const Scenario& sc) : sc_(sc) {
    for (const std::string& s : sc.streams) p_.stream_slots.push_back(slot(s));
    for (const std::string& s : sc.borrowed_streams) p_.borrowed_stream_slots.push_back(slot(s));
    for (const SimFault& f : sc.sim.faults) {
      if (f.kind != SimFault::Kind::completion_unknown) continue;
      if (std::find(p_.fault_ids.begin(), p_.fault_ids.end(), f.submission) == p_.fault_ids.end())
        p_.fault_ids.push_back(f.submission);
    }
  }

  Program run() {
    p_.steps = steps(sc_.steps);
    for (const auto& [name, list] : sc_.threads) p_.threads.emplace_back(name, steps(list));
    return std::move(p_);
  }

 private:
  Slot slot(const std::string& name) {
    if (name.empty()) return kNoSlot;
    auto [it, added] = slots_.try_emplace(name, static_cast<Slot>(p_.slot_names.size()));
    if (added) p_.slot_names.push_back(name);
    return it->second;
  }

  std::vector<CompiledStep> steps(const std::vector<Step>& list) {
    std::vector<CompiledStep> out;
    out.reserve(list.size());
    for (const Step& s : list) out.push_back(step(s));
    return out;
  }

  CompiledStep step(const Step& s) {
    CompiledStep c;
    c.step = &s;
    c.row = &op_row(s.op);
    c.id = slot(s.id);
    c.of = slot(s.of);
    c.from = slot(s.from);
    c.src = slot(s.src);
    c.dst = slot(s.dst);
    c.buf = slot(s.buf);
    c.graph = slot(s.graph);
    c.context = slot(s.context);
    c.a = slot(s.a);
    c.b = slot(s.b);
    for (std::size_t i = 0; i < s.ids.size() && i < 2; ++i) c.ids[i] = slot(s.ids[i]);
    stream(s, c);
    if (!s.id.empty()) {
      auto f = std::find(p_.fault_ids.begin(), p_.fault_ids.end(), s.id);
      if (f != p_.fault_ids.end()) c.fault = static_cast<int>(f - p_.fault_ids.begin());
    }
    if (s.op == Op::launch) c.launch = plan(s);
    if (s.op == Op::declared_launch) c.declared = declared(s);
    if (s.op == Op::wait && s.stream) p_.waits_on_streams = true;
    if ((s.op == Op::drop || s.op == Op::forget) &&
        std::find(sc_.streams.begin(), sc_.streams.end(), s.id) != sc_.streams.end())
      p_.drops_streams = true;
    if (s.op == Op::check && s.what == CheckWhat::contents && s.equals.kind == ValueForm::Kind::shadow)
      p_.uses_shadow = true;
    if (s.len_fraction_of_free) c.noted = std::make_unique<std::atomic<bool>>(false);
    c.body = steps(s.steps);
    return c;
  }

  // No `stream`: the first declared stream, or the run's own when none is declared.
  void stream(const Step& s, CompiledStep& c) {
    if (!s.stream && sc_.streams.empty()) {
      c.stream = kNoSlot;
      c.stream_index = static_cast<std::uint32_t>(sc_.borrowed_streams.size());  // the default, last
      return;
    }
    const std::string& name = s.stream ? *s.stream : sc_.streams.front();
    c.stream = slot(name);
    const auto it = std::find(sc_.streams.begin(), sc_.streams.end(), name);
    if (it != sc_.streams.end()) {
      c.stream_index = static_cast<std::uint32_t>(it - sc_.streams.begin());
      return;
    }
    const auto b = std::find(sc_.borrowed_streams.begin(), sc_.borrowed_streams.end(), name);
    c.stream_index = static_cast<std::uint32_t>(sc_.streams.size() + (b - sc_.borrowed_streams.begin()));
  }

  std::unique_ptr<LaunchPlan> plan(const Step& s) {
    auto p = std::make_unique<LaunchPlan>();
    p->params = kernels::kernel_params(s.model, s.kernel);
    const std::size_t n = p->params.size();
    p->view_slots.assign(n, kNoSlot);
    p->args.assign(n, kernels::Arg::defaulted());
    p->shadow_args.assign(n, ShadowArg{});
    p->shapes.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const kernels::ParamSpec& ps = p->params[i];
      if (ps.kind == kernels::ArgKind::scalar) {
        if (auto it = s.scalars.find(ps.name); it != s.scalars.end()) {
          p->args[i] = kernels::Arg::value(it->second);
          p->shadow_args[i].scalar = kernels::ScalarValue(it->second);
        }
      } else if (auto a = s.args.find(ps.name); a != s.args.end()) {
        p->view_slots[i] = slot(a->second);
      }
    }
    if (s.grid) p->grid = driver::Dim3{(*s.grid)[0], (*s.grid)[1], (*s.grid)[2]};
    if (s.block) p->block = driver::Dim3{(*s.block)[0], (*s.block)[1], (*s.block)[2]};
    if (!s.tile.empty()) {
      p->has_tile = true;
      p->tile.rank = static_cast<int>(s.tile.size());
      p->tile.dims[0] = s.tile[0];
      p->tile.dims[1] = s.tile.size() > 1 ? s.tile[1] : 0;
    }
    return p;
  }

  std::unique_ptr<DeclaredPlan> declared(const Step& s) {
    auto p = std::make_unique<DeclaredPlan>();
    for (const auto& [view, access] : s.accesses) p->slots.push_back(slot(view));
    if (s.grid) p->dims.grid = driver::Dim3{(*s.grid)[0], (*s.grid)[1], (*s.grid)[2]};
    if (s.block) p->dims.block = driver::Dim3{(*s.block)[0], (*s.block)[1], (*s.block)[2]};
    return p;
  }

  const Scenario& sc_;
  Program p_;
  std::unordered_map<std::string, Slot> slots_;
};

}  // namespace

Program compile(const Scenario& sc) { return Compiler(sc).run(); }

}  // namespace tandem::scenario::detail
