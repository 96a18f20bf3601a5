// SPDX-License-Identifier: Apache-2.0
// scenario_writer.cpp — see scenario_writer.hpp (its launch hooks:
// scenario_writer_launch.cpp).
#include "scenario_writer.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>

#include "recorded_values.hpp"
#include "step_folding.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/driver/sim_config.hpp"

namespace tandem::detail {

using recorded::derive_op;
using recorded::int_list;
using recorded::json_quoted;
using recorded::values_form;

std::vector<ScenarioWriter::Step>* ScenarioWriter::outer_list() {
  const std::thread::id me = std::this_thread::get_id();
  if (!main_) main_ = me;
  // After other threads began, the main thread's calls (the end of a run:
  // its cleanup) have no place in the format: `steps` run first.
  if (me == *main_) return others_started_ ? nullptr : &steps_;
  others_started_ = true;
  auto [it, fresh] = thread_names_.try_emplace(me);
  if (fresh) it->second = "t" + std::to_string(thread_names_.size());
  return &threads_[it->second];
}

std::vector<ScenarioWriter::Step>* ScenarioWriter::list() {
  const auto c = captures_.find(std::this_thread::get_id());
  return c != captures_.end() ? &c->second : outer_list();
}

void ScenarioWriter::add(std::string body, std::uint64_t submission) {
  if (submission != 0) named_.insert(submission);
  if (std::vector<Step>* l = list()) l->push_back({std::move(body), submission});
}

void ScenarioWriter::take_fault(std::uint64_t stream_id, std::uint64_t submission) {
  if (submission == 0 || unknown_armed_.erase(stream_id) == 0) return;
  faulted_.insert(submission);
}

std::string ScenarioWriter::stream_name(std::uint64_t id) {
  auto [it, fresh] = streams_.try_emplace(id);
  if (fresh) {
    it->second = "s" + std::to_string(stream_order_.size());
    stream_order_.push_back(it->second);
  }
  return it->second;
}

std::string ScenarioWriter::new_name(const ViewKey& key, char prefix) {
  std::vector<Step>* made_in = outer_list();
  // The smallest name this list freed itself, so that the iterations of a
  // loop write the same text (step_folding.hpp). Only the list's own: a
  // name another thread let go of may still be live in that thread when
  // the replay runs them side by side.
  std::set<std::uint64_t>& pool = free_names_[{made_in, prefix}];
  std::uint64_t number = 0;
  if (pool.empty()) {
    number = next_name_++;
  } else {
    number = *pool.begin();
    pool.erase(pool.begin());
  }
  std::string name = prefix + std::to_string(number);
  live_[key].push_back(name);
  made_in_[name] = made_in;
  return name;
}

std::optional<std::string> ScenarioWriter::name_of(const ViewKey& key) const {
  const auto it = live_.find(key);
  if (it == live_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

void ScenarioWriter::free_name(const std::string& name) {
  const auto m = made_in_.find(name);
  if (m == made_in_.end()) return;
  if (m->second != nullptr && m->second == outer_list())
    free_names_[{m->second, name[0]}].insert(std::stoull(name.substr(1)));
  made_in_.erase(m);
}

std::optional<std::string> ScenarioWriter::take_name(const ViewKey& key, bool reuse) {
  const auto it = live_.find(key);
  if (it == live_.end() || it->second.empty()) return std::nullopt;
  std::string name = std::move(it->second.back());
  it->second.pop_back();
  if (it->second.empty()) live_.erase(it);
  if (reuse) free_name(name);
  return name;
}

void ScenarioWriter::on_stream_created(const Stream& stream) {
  const Context ctx = stream.context();
  const ConflictPolicy policy = ctx.conflict_policy();
  // The sim's capacity, for the "sim" section (a replay on the sim runs out of memory where this run did).
  std::uint64_t sim_memory = 0;
  if (ctx.device().platform().is_sim()) sim_memory = ctx.memory_info().total_bytes;
  const std::lock_guard lock(mu_);
  if (!policy_) policy_ = policy;
  if (sim_memory != 0 && sim_memory != driver::SimConfig{}.memory_bytes) sim_memory_ = sim_memory;
  (void)stream_name(stream.id());
}

void ScenarioWriter::on_stream_dropped(std::uint64_t stream_id) {
  const std::lock_guard lock(mu_);
  if (const auto s = streams_.find(stream_id); s != streams_.end())
    add("{\"op\": \"drop\", \"id\": " + json_quoted(s->second));
}

std::string ScenarioWriter::derive_body(ViewOrigin origin, const std::string& id, const std::string& of,
                                        const DeriveArgs& a, const View* made, const StreamRef* stream) {
  if (origin == ViewOrigin::split_low || origin == ViewOrigin::split_high) return {};  // written whole
  std::string b = "{\"op\": " + json_quoted(derive_op(origin)) + ", \"id\": " + json_quoted(id);
  switch (origin) {
    case ViewOrigin::allocate:
      b += ", \"dtype\": " + json_quoted(dtype_name(made->dtype())) + ", \"len\": " + std::to_string(a.len);
      if (stream != nullptr) b += ", \"stream\": " + json_quoted(stream_name(stream->id()));
      break;
    case ViewOrigin::adopt:
      b += ", \"dtype\": " + json_quoted(dtype_name(made->dtype())) + ", \"len\": " + std::to_string(a.len);
      break;
    case ViewOrigin::slice:
      b += ", \"of\": " + json_quoted(of) + ", \"offset\": " + std::to_string(a.offset) +
           ", \"len\": " + std::to_string(a.len);
      break;
    case ViewOrigin::peel:
      b += ", \"of\": " + json_quoted(of) + ", \"index\": " + std::to_string(a.index);
      break;
    case ViewOrigin::atomic:
    case ViewOrigin::as_buffer:
      b += ", \"of\": " + json_quoted(of);
      break;
    case ViewOrigin::to_tensor:
      b += ", \"from\": " + json_quoted(of) + ", \"shape\": " + int_list(a.shape);
      break;
    case ViewOrigin::into_buffer:
      b += ", \"from\": " + json_quoted(of);
      break;
    case ViewOrigin::reinterpret:
      b += ", \"from\": " + json_quoted(of) + ", \"dtype\": " + json_quoted(dtype_name(a.dtype));
      break;
    case ViewOrigin::tensor_view:
      b += ", \"of\": " + json_quoted(of);
      if (!a.shape.empty()) b += ", \"shape\": " + int_list(a.shape);
      if (!a.ranges.empty()) {
        b += ", \"slice\": [";
        for (std::size_t i = 0; i < a.ranges.size(); ++i) {
          b += (i ? ", [" : "[") + std::to_string(a.ranges[i].begin) + ", " +
               std::to_string(a.ranges[i].end) + "]";
        }
        b += "]";
      }
      break;
    case ViewOrigin::split_low:
    case ViewOrigin::split_high:
      break;
  }
  return b;
}

void ScenarioWriter::on_view_derived(ViewOrigin origin, const ViewKey* parent, const View& made,
                                     const DeriveArgs& args, const StreamRef* stream) {
  const ViewKey key = ViewKey::of(made);
  // Adopted memory lives in its context: a borrowed one is named through one of its streams.
  const std::uint64_t adopted_in = origin == ViewOrigin::adopt ? made.context().id() : 0;
  const std::lock_guard lock(mu_);
  const bool consumes = origin == ViewOrigin::to_tensor || origin == ViewOrigin::into_buffer ||
                        origin == ViewOrigin::reinterpret || origin == ViewOrigin::split_low;
  std::optional<std::string> of;
  // A consumed source's name is free only after this step made its views
  // (the step cannot name its product after its own source).
  if (parent != nullptr) of = consumes ? take_name(*parent, false) : name_of(*parent);
  if (parent != nullptr && !of) return;  // made from a view the recording does not know  // not ours
  const std::string id = new_name(key, made.is_tensor() ? 't' : 'b');
  if (origin == ViewOrigin::split_low) {
    split_low_ = id;
    split_of_ = *of;
    return;
  }
  if (origin == ViewOrigin::split_high) {
    if (split_low_.empty()) return;
    add("{\"op\": \"split\", \"of\": " + json_quoted(split_of_) + ", \"at\": " + std::to_string(args.index) +
        ", \"ids\": [" + json_quoted(split_low_) + ", " + json_quoted(id) + "]");
    split_low_.clear();
    free_name(split_of_);
    return;
  }
  std::string body = derive_body(origin, id, of.value_or(""), args, &made, stream);
  if (const auto s = context_streams_.find(adopted_in); adopted_in != 0 && s != context_streams_.end())
    body += ", \"stream\": " + json_quoted(s->second);
  add(std::move(body));
  if (origin == ViewOrigin::allocate)
    if (std::vector<Step>* l = list()) l->back().bare_alloc = true;
  if (consumes && of) free_name(*of);
}

void ScenarioWriter::on_derive_failed(ViewOrigin origin, const ViewKey& parent, const DeriveArgs& args,
                                      ErrorCode code) {
  const std::lock_guard lock(mu_);
  const std::optional<std::string> of = name_of(parent);
  if (!of) return;
  // The id a failed step would have made: a fresh name, never used again.
  const std::string id = "x" + std::to_string(next_name_++);
  const std::string expect = ", \"expect_error\": " + json_quoted(error_code_name(code));
  if (origin == ViewOrigin::split_low || origin == ViewOrigin::split_high) {
    const std::string high = "x" + std::to_string(next_name_++);
    add("{\"op\": \"split\", \"of\": " + json_quoted(*of) + ", \"at\": " + std::to_string(args.index) +
        ", \"ids\": [" + json_quoted(id) + ", " + json_quoted(high) + "]" + expect);
    return;
  }
  add(derive_body(origin, id, *of, args, nullptr, nullptr) + expect);
}

void ScenarioWriter::on_view_dropped(const View& view) {
  const ViewKey key = ViewKey::of(view);
  const std::lock_guard lock(mu_);
  if (const auto name = take_name(key)) add("{\"op\": \"drop\", \"id\": " + json_quoted(*name));
}

// The answer the program got becomes the check's expectation: the replay
// asks again and fails where the runtime answers otherwise.
void ScenarioWriter::on_view_query(const View& view, ViewQuery what, std::uint64_t answer) {
  const ViewKey key = ViewKey::of(view);
  const std::lock_guard lock(mu_);
  const auto name = name_of(key);
  if (!name) return;
  const bool unique = what == ViewQuery::unique;
  add(std::string("{\"op\": \"check\", \"what\": ") + (unique ? "\"unique\"" : "\"views\"") +
      ", \"of\": " + json_quoted(*name) +
      ", \"value\": " + (unique ? (answer != 0 ? "true" : "false") : std::to_string(answer)));
}

// The recording cannot name a handle that is gone, and what the step would
// have done does not matter: it was refused before the runtime. A drop of
// a name the writer never gives is refused the same on replay.
void ScenarioWriter::on_use_refused(std::string_view op, ErrorCode code) {
  const std::lock_guard lock(mu_);
  ++refused_uses_[std::string(op)];
  add("{\"op\": \"drop\", \"id\": \"gone\", \"expect_error\": " + json_quoted(error_code_name(code)));
}

std::optional<std::string> ScenarioWriter::transfer_body(StreamRef stream, const std::string& name, DType t,
                                                         char kind, std::span<const std::byte> bytes,
                                                         bool exact) {
  const std::string head =
      "\"buf\": " + json_quoted(name) + ", \"stream\": " + json_quoted(stream_name(stream.id()));
  if (kind == 'd') return "{\"op\": \"download\", " + head;
  // A memset comes as one element of its byte pattern: a fill of that value.
  const std::optional<std::string> from = exact ? recorded::values_list(t, bytes) : values_form(t, bytes);
  if (!from) return std::nullopt;
  return "{\"op\": \"upload\", " + head + ", \"from\": " + *from;
}

void ScenarioWriter::on_transfer(StreamRef stream, const View& view, char kind,
                                 std::span<const std::byte> bytes, std::uint64_t submission) {
  const ViewKey key = ViewKey::of(view);
  const std::lock_guard lock(mu_);
  const auto name = name_of(key);
  if (!name) return;
  if (kind == 'c') {  // a read-back: what it read, checked again on replay
    if (unknown_contents_.contains(view.allocation_id())) {
      // Contents replay cannot reproduce (note_contents): the same read,
      // waited for as read_back waits, without the check.
      ++unchecked_reads_;
      if (!view.is_contiguous()) return;  // a download could not read it
      const std::string head =
          "\"buf\": " + json_quoted(*name) + ", \"stream\": " + json_quoted(stream_name(stream.id()));
      const std::string id = "r" + std::to_string(next_name_++);
      add("{\"op\": \"download\", " + head + ", \"id\": " + json_quoted(id));
      add("{\"op\": \"wait\", \"id\": " + json_quoted(id));
      return;
    }
    if (const auto values = values_form(view.dtype(), bytes)) {
      add("{\"op\": \"check\", \"what\": \"contents\", \"of\": " + json_quoted(*name) +
          ", \"equals\": " + *values);
    }
    return;
  }
  // A zeroing memset right after the allocation is the alloc's init "zero"
  // (a memset, as the original: an upload would count as a copy for the
  // sim's copy faults).
  if (kind == 'm' && std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; })) {
    std::vector<Step>* l = list();
    const std::string alloc = "{\"op\": \"alloc\", \"id\": " + json_quoted(*name) + ",";
    if (l != nullptr && !l->empty() && l->back().bare_alloc && l->back().body.starts_with(alloc)) {
      l->back().body += ", \"init\": \"zero\"";
      l->back().bare_alloc = false;
      return;
    }
  }
  if (auto b = transfer_body(stream, *name, view.dtype(), kind, bytes)) {
    add(std::move(*b), submission);
    take_fault(stream.id(), submission);
  }
}

void ScenarioWriter::on_transfer_failed(StreamRef stream, const View& view, char kind,
                                        std::span<const std::byte> bytes, ErrorCode code) {
  const ViewKey key = ViewKey::of(view);
  const std::lock_guard lock(mu_);
  const auto name = name_of(key);
  if (!name) return;
  // Data not the view's size (refused for it) is written as its values, whose count a replay keeps.
  const bool exact = bytes.size() != view.extent_bytes();
  if (auto b = transfer_body(stream, *name, view.dtype(), kind, bytes, exact))
    add(std::move(*b) + ", \"expect_error\": " + json_quoted(error_code_name(code)));
}

std::string ScenarioWriter::copy_body(StreamRef stream, const std::string& src, const std::string& dst) {
  return "{\"op\": \"copy\", \"src\": " + json_quoted(src) + ", \"dst\": " + json_quoted(dst) +
         ", \"stream\": " + json_quoted(stream_name(stream.id()));
}

void ScenarioWriter::on_copy(StreamRef stream, const View& src, const View& dst, std::uint64_t submission) {
  const ViewKey ks = ViewKey::of(src), kd = ViewKey::of(dst);
  const std::lock_guard lock(mu_);
  const auto s = name_of(ks), d = name_of(kd);
  if (unknown_contents_.contains(src.allocation_id())) unknown_contents_.insert(dst.allocation_id());
  if (!s || !d) return;
  add(copy_body(stream, *s, *d), submission);
  take_fault(stream.id(), submission);
}

void ScenarioWriter::on_copy_failed(StreamRef stream, const View& src, const View& dst, ErrorCode code) {
  const ViewKey ks = ViewKey::of(src), kd = ViewKey::of(dst);
  const std::lock_guard lock(mu_);
  const auto s = name_of(ks), d = name_of(kd);
  if (!s || !d) return;
  add(copy_body(stream, *s, *d) + ", \"expect_error\": " + json_quoted(error_code_name(code)));
}

void ScenarioWriter::on_wait_submission(std::uint64_t submission) {
  const std::lock_guard lock(mu_);
  if (!named_.contains(submission)) return;  // no step of the recording made it
  waited_.insert(submission);
  add("{\"op\": \"wait\", \"id\": " + json_quoted("k" + std::to_string(submission)));
}

void ScenarioWriter::on_wait_stream(StreamRef stream) {
  const std::lock_guard lock(mu_);
  add("{\"op\": \"wait\", \"stream\": " + json_quoted(stream_name(stream.id())));
}

void ScenarioWriter::on_wait_retirement() {
  const std::lock_guard lock(mu_);
  add("{\"op\": \"retire\"");
}

void ScenarioWriter::on_context_borrowed(const Context& ctx) {
  const std::lock_guard lock(mu_);
  const std::string name = "bc" + std::to_string(contexts_.size());
  contexts_[ctx.id()] = name;
  add("{\"op\": \"borrow_context\", \"id\": " + json_quoted(name));
}

void ScenarioWriter::on_stream_borrowed(const Stream& stream) {
  const std::uint64_t ctx = stream.context().id();
  const std::lock_guard lock(mu_);
  // Named here, so never listed in `streams` (the replay makes and borrows its own).
  const std::string name = "bs" + std::to_string(borrowed_streams_++);
  streams_[stream.id()] = name;
  std::string b = "{\"op\": \"borrow_stream\", \"id\": " + json_quoted(name);
  if (const auto c = contexts_.find(ctx); c != contexts_.end()) {
    b += ", \"context\": " + json_quoted(c->second);
    context_streams_.emplace(ctx, name);
  }
  add(std::move(b));
}

void ScenarioWriter::on_capture_begun(StreamRef) {
  const std::lock_guard lock(mu_);
  captures_[std::this_thread::get_id()].clear();
}

void ScenarioWriter::on_capture_ended(StreamRef stream, const Graph& graph) {
  const std::lock_guard lock(mu_);
  const auto c = captures_.find(std::this_thread::get_id());
  if (c == captures_.end()) return;
  const std::vector<std::string> body = closed(c->second);
  captures_.erase(c);
  const std::string name = "g" + std::to_string(next_name_++);
  graphs_[graph.id()] = name;
  made_in_[name] = outer_list();
  std::string b = "{\"op\": \"capture\", \"graph\": " + json_quoted(name) +
                  ", \"stream\": " + json_quoted(stream_name(stream.id())) + ", \"steps\": [";
  for (std::size_t i = 0; i < body.size(); ++i) b += (i ? ", " : "") + body[i];
  add(b + "]");
}

void ScenarioWriter::on_capture_abandoned(StreamRef) {
  const std::lock_guard lock(mu_);
  captures_.erase(std::this_thread::get_id());
}

void ScenarioWriter::on_graph_replayed(const Graph& graph, StreamRef stream, std::uint64_t submission) {
  const std::lock_guard lock(mu_);
  const auto g = graphs_.find(graph.id());
  if (g == graphs_.end()) return;
  add("{\"op\": \"replay\", \"graph\": " + json_quoted(g->second) +
          ", \"stream\": " + json_quoted(stream_name(stream.id())),
      submission);
  take_fault(stream.id(), submission);
}

void ScenarioWriter::on_graph_replay_failed(const Graph& graph, StreamRef stream, ErrorCode code) {
  const std::lock_guard lock(mu_);
  const auto g = graphs_.find(graph.id());
  if (g == graphs_.end()) return;
  add("{\"op\": \"replay\", \"graph\": " + json_quoted(g->second) + ", \"stream\": " +
      json_quoted(stream_name(stream.id())) + ", \"expect_error\": " + json_quoted(error_code_name(code)));
}

void ScenarioWriter::on_graph_dropped(std::uint64_t id) {
  const std::lock_guard lock(mu_);
  const auto g = graphs_.find(id);
  if (g == graphs_.end()) return;
  add("{\"op\": \"drop\", \"id\": " + json_quoted(g->second));
  made_in_.erase(g->second);
  graphs_.erase(g);
}

void ScenarioWriter::on_allocate_failed(StreamRef stream, DType dtype, std::uint64_t len, ErrorCode code) {
  const std::lock_guard lock(mu_);
  add("{\"op\": \"alloc\", \"id\": " + json_quoted("x" + std::to_string(next_name_++)) +
      ", \"dtype\": " + json_quoted(dtype_name(dtype)) + ", \"len\": " + std::to_string(len) +
      ", \"stream\": " + json_quoted(stream_name(stream.id())) +
      ", \"expect_error\": " + json_quoted(error_code_name(code)));
}

// The `retire` step on_wait_retirement wrote gets the timeout and the
// expected error a scenario's `retire` raises when it passes.
void ScenarioWriter::on_retirement_wait_timed_out(std::chrono::nanoseconds timeout) {
  const std::lock_guard lock(mu_);
  std::vector<Step>* l = list();
  if (l == nullptr || l->empty() || l->back().body != "{\"op\": \"retire\"") return;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  l->back().body += ", \"timeout_ms\": " + std::to_string(ms) + ", \"expect_error\": \"timeout\"";
}

void ScenarioWriter::on_stats(const Context& ctx, const RuntimeStats& s) {
  const std::lock_guard lock(mu_);
  seen_[ctx.id()] = {s.live_allocations, s.quarantined_allocations, s.foreign_owners_unreleased};
}

void ScenarioWriter::on_sim_control(SimControl what, const StreamRef* stream, std::uint64_t value) {
  const std::lock_guard lock(mu_);
  switch (what) {
    case SimControl::stream_delay_us:
      if (stream != nullptr) delays_us_[stream_name(stream->id())] = value;
      return;
    case SimControl::completion_unknown:
      if (stream != nullptr) unknown_armed_.insert(stream->id());
      return;
    case SimControl::alloc_fail:
    case SimControl::alloc_error:
    case SimControl::launch_fail:
    case SimControl::copy_fail:
      break;
  }
  // A disarm (0) is not written: the file arms the fault for its whole run.
  if (value == 0) return;
  static constexpr const char* kNames[] = {"", "", "alloc_fail", "alloc_error", "launch_fail", "copy_fail"};
  counted_faults_[kNames[static_cast<int>(what)]] = value;
}

std::vector<std::string> ScenarioWriter::closed(const std::vector<Step>& steps) const {
  std::vector<std::string> out;
  for (const Step& st : steps) {
    std::string b = st.body;
    if (st.submission != 0 && (waited_.contains(st.submission) || faulted_.contains(st.submission)))
      b += ", \"id\": " + json_quoted("k" + std::to_string(st.submission));
    out.push_back(b + "}");
  }
  return out;
}

std::map<const std::vector<ScenarioWriter::Step>*, std::vector<std::string>> ScenarioWriter::forgets() const {
  std::map<const std::vector<Step>*, std::vector<std::string>> out;
  const auto forget = [&](const std::string& name) {
    const auto m = made_in_.find(name);
    if (m != made_in_.end() && m->second != nullptr)
      out[m->second].push_back("{\"op\": \"forget\", \"id\": " + json_quoted(name) + "}");
  };
  for (const auto& [key, names] : live_)
    for (const std::string& n : names) forget(n);
  for (const auto& [id, name] : graphs_) forget(name);
  return out;
}

// Expectations only for what the file itself causes on purpose: leaks when
// it forgets handles, quarantine when it injects unknown completions. The
// figures are what the process last read from Context::stats(); a leak or
// quarantine the file does not explain is left to fail the replay.
std::string ScenarioWriter::expect_section(bool leaks) const {
  Seen sum;
  for (const auto& [id, s] : seen_) {
    sum.live += s.live;
    sum.quarantined += s.quarantined;
    sum.foreign += s.foreign;
  }
  std::string e;
  const auto key = [&e](const char* k, std::uint64_t v) {
    if (v != 0) e += std::string(e.empty() ? "" : ", ") + json_quoted(k) + ": " + std::to_string(v);
  };
  if (leaks) {
    key("live_allocations", sum.live);
    key("foreign_owners_unreleased", sum.foreign);
  }
  if (!faulted_.empty()) key("quarantined_allocations", sum.quarantined);
  return e.empty() ? "" : ",\n  \"expect\": {" + e + "}";
}

std::string ScenarioWriter::sim_section() const {
  std::string s;
  if (sim_memory_ != 0) s = "\"memory_bytes\": " + std::to_string(sim_memory_);
  if (!delays_us_.empty()) {
    s += std::string(s.empty() ? "" : ", ") + "\"stream_delay_us\": {";
    bool first = true;
    for (const auto& [name, us] : delays_us_) {
      s += std::string(first ? "" : ", ") + json_quoted(name) + ": " + std::to_string(us);
      first = false;
    }
    s += "}";
  }
  std::string f;
  for (const std::uint64_t sub : faulted_) {
    f += std::string(f.empty() ? "" : ", ") +
         "{\"kind\": \"completion_unknown\", \"submission\": " + json_quoted("k" + std::to_string(sub)) + "}";
  }
  for (const auto& [kind, nth] : counted_faults_) {
    f += std::string(f.empty() ? "" : ", ") + "{\"kind\": " + json_quoted(kind) +
         ", \"nth\": " + std::to_string(nth) + "}";
  }
  if (!f.empty()) s += std::string(s.empty() ? "" : ", ") + "\"faults\": [" + f + "]";
  return s.empty() ? "" : ",\n  \"sim\": {" + s + "}";
}

namespace {

void append_steps(std::string& out, const std::vector<std::string>& steps, const char* indent) {
  const std::vector<std::string> folded = fold_repeats(steps);
  for (std::size_t i = 0; i < folded.size(); ++i) out += std::string(i ? ",\n" : "\n") + indent + folded[i];
}

}  // namespace

std::string ScenarioWriter::text() {
  const std::lock_guard lock(mu_);
  const auto leaked = forgets();
  const auto close = [&](const std::vector<Step>& steps) {
    std::vector<std::string> out = closed(steps);
    if (const auto f = leaked.find(&steps); f != leaked.end())
      out.insert(out.end(), f->second.begin(), f->second.end());
    return out;
  };
  std::string description = "recorded by the tandem runtime (TANDEM_RECORD or ContextOptions::record_to)";
  if (unrecorded_launches_ != 0) {
    description += "; " + std::to_string(unrecorded_launches_) +
                   " launch(es) not recorded (on views made outside the recording, or refused calls a launch "
                   "step cannot write):";
    for (const std::string& k : unrecorded_kernels_) description += " " + k;
  }
  if (!refused_uses_.empty()) {
    std::uint64_t n = 0;
    std::string ops;
    for (const auto& [op, k] : refused_uses_) {
      n += k;
      ops += " " + op + " x" + std::to_string(k);
    }
    description +=
        "; " + std::to_string(n) +
        " call(s) refused by a handle name (gone, never made, taken or of another kind), each written as a "
        "drop of the "
        "never-made name 'gone' with its error:" +
        ops;
  }
  if (declared_launches_ != 0) {
    description += "; " + std::to_string(declared_launches_) +
                   " launch(es) of kernels outside the catalog replayed as their declared leases with no "
                   "body (declared_launch):";
    for (const std::string& k : declared_kernels_) description += " " + k;
  }
  if (unchecked_reads_ != 0) {
    description += "; " + std::to_string(unchecked_reads_) +
                   " read-back(s) replayed as a download with no contents check (contents that such a kernel "
                   "wrote, or that were made from them)";
  }
  std::string out =
      "{\n  \"format\": \"tandem.scenario/1\",\n  \"name\": \"recorded\",\n  \"description\": " +
      json_quoted(description) + ",\n  \"backend\": \"auto\",\n  \"conflict_policy\": " +
      json_quoted(conflict_policy_name(policy_.value_or(ConflictPolicy::order))) + ",\n  \"streams\": [";
  for (std::size_t i = 0; i < stream_order_.size(); ++i)
    out += (i ? ", " : "") + json_quoted(stream_order_[i]);
  out += "],\n  \"steps\": [";
  append_steps(out, close(steps_), "    ");
  out += "\n  ]";
  if (!threads_.empty()) {
    out += ",\n  \"threads\": {";
    bool first = true;
    for (const auto& [name, steps] : threads_) {
      out += std::string(first ? "\n" : ",\n") + "    " + json_quoted(name) + ": [";
      append_steps(out, close(steps), "      ");
      out += "\n    ]";
      first = false;
    }
    out += "\n  }";
  }
  return out + expect_section(!leaked.empty()) + sim_section() + "\n}\n";
}

void ScenarioWriter::write_file() {
  const std::string t = text();
  std::ofstream f(path_);
  f << t;
  if (!f) std::cerr << "tandem: recording: cannot write the recording to " << path_ << "\n";
}

}  // namespace tandem::detail
