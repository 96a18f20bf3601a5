// SPDX-License-Identifier: Apache-2.0
// scenario_writer.cpp — see scenario_writer.hpp.
#include "scenario_writer.hpp"

#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>

#include "tandem/base/half.hpp"
#include "tandem/context.hpp"
#include "tandem/kernel_name.hpp"

namespace tandem::detail {

namespace {

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One element of `t` at `p` as a number; nullopt for a type a scenario
// cannot write back.
std::optional<double> element(DType t, const std::byte* p) {
  switch (t) {
    case DType::f32:
      return load<float>(p);
    case DType::f64:
      return load<double>(p);
    case DType::f16:
      return static_cast<double>(to_float(load<half>(p)));
    case DType::bf16:
      return static_cast<double>(to_float(load<bfloat16>(p)));
    case DType::i8:
      return load<std::int8_t>(p);
    case DType::i32:
      return load<std::int32_t>(p);
    case DType::i64:
      return static_cast<double>(load<std::int64_t>(p));
    case DType::u8:
    case DType::boolean:
      return load<std::uint8_t>(p);
    case DType::u32:
      return load<std::uint32_t>(p);
    case DType::u64:
      return static_cast<double>(load<std::uint64_t>(p));
    default:
      return std::nullopt;
  }
}

// {"iota": ...} for whole numbers start + i * step that every dtype holds
// exactly (below 2^24), else nullopt.
std::optional<std::string> iota_form(DType t, std::span<const std::byte> bytes, std::size_t n) {
  if (n < 3) return std::nullopt;
  const std::size_t size = dtype_size(t);
  const auto first = element(t, bytes.data()), second = element(t, bytes.data() + size);
  if (!first || !second) return std::nullopt;
  const double start = *first, step = *second - *first;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = element(t, bytes.data() + i * size);
    const double want = start + static_cast<double>(i) * step;
    if (!v || *v != want || want != static_cast<double>(static_cast<std::int64_t>(want)) || want >= 0x1p24 ||
        want <= -0x1p24) {
      return std::nullopt;
    }
  }
  return "{\"iota\": {\"start\": " + number(start) + ", \"step\": " + number(step) + "}}";
}

// An upload's data as a `from` form: {"fill": v} when every element is the
// same, else the list of values.
std::optional<std::string> values_form(DType t, std::span<const std::byte> bytes) {
  const std::size_t size = dtype_size(t);
  const std::size_t n = bytes.size() / size;
  bool same = true;
  for (std::size_t i = 1; i < n && same; ++i) same = std::memcmp(&bytes[0], &bytes[i * size], size) == 0;
  if (n > 0 && same) {
    const auto v = element(t, bytes.data());
    if (!v) return std::nullopt;
    return "{\"fill\": " + number(*v) + "}";
  }
  if (auto iota = iota_form(t, bytes, n)) return iota;
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = element(t, bytes.data() + i * size);
    if (!v) return std::nullopt;
    out += (i ? ", " : "") + number(*v);
  }
  return out + "]";
}

std::string int_list(std::span<const std::int64_t> xs) {
  std::string out = "[";
  for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
  return out + "]";
}

std::string dims(const driver::Dim3& d) {
  std::string out = "[" + std::to_string(d.x);
  if (d.y != 1 || d.z != 1) out += ", " + std::to_string(d.y);
  if (d.z != 1) out += ", " + std::to_string(d.z);
  return out + "]";
}

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

double scalar_at(DType t, const void* p) {
  const auto v = element(t, static_cast<const std::byte*>(p));
  return v ? *v : 0.0;
}

}  // namespace

void ScenarioWriter::add(std::string body, std::uint64_t submission) {
  if (submission != 0) named_.insert(submission);
  const std::thread::id me = std::this_thread::get_id();
  if (!main_) main_ = me;
  if (me == *main_) {
    // After other threads began, the main thread's calls (the end of a
    // run: its cleanup) have no place in the format: `steps` run first.
    if (!others_started_) steps_.push_back({std::move(body), submission});
    return;
  }
  others_started_ = true;
  auto [it, fresh] = thread_names_.try_emplace(me);
  if (fresh) it->second = "t" + std::to_string(thread_names_.size());
  threads_[it->second].push_back({std::move(body), submission});
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
  std::string name = prefix + std::to_string(next_name_++);
  live_[key].push_back(name);
  return name;
}

std::optional<std::string> ScenarioWriter::name_of(const ViewKey& key) const {
  const auto it = live_.find(key);
  if (it == live_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::optional<std::string> ScenarioWriter::take_name(const ViewKey& key) {
  const auto it = live_.find(key);
  if (it == live_.end() || it->second.empty()) return std::nullopt;
  std::string name = std::move(it->second.back());
  it->second.pop_back();
  if (it->second.empty()) live_.erase(it);
  return name;
}

void ScenarioWriter::on_stream_created(const Stream& stream) {
  const ConflictPolicy policy = stream.context().conflict_policy();
  const std::lock_guard lock(mu_);
  if (!policy_) policy_ = policy;
  (void)stream_name(stream.id());
}

std::string ScenarioWriter::derive_body(ViewOrigin origin, const std::string& id, const std::string& of,
                                        const DeriveArgs& a, const View* made, const StreamRef* stream) {
  std::string b;
  switch (origin) {
    case ViewOrigin::allocate:
      b = "{\"op\": \"alloc\", \"id\": " + quoted(id) + ", \"dtype\": " + quoted(dtype_name(made->dtype())) +
          ", \"len\": " + std::to_string(a.len);
      if (stream != nullptr) b += ", \"stream\": " + quoted(stream_name(stream->id()));
      return b;
    case ViewOrigin::adopt:
      return "{\"op\": \"foreign\", \"id\": " + quoted(id) +
             ", \"dtype\": " + quoted(dtype_name(made->dtype())) + ", \"len\": " + std::to_string(a.len);
    case ViewOrigin::slice:
      return "{\"op\": \"slice\", \"id\": " + quoted(id) + ", \"of\": " + quoted(of) +
             ", \"offset\": " + std::to_string(a.offset) + ", \"len\": " + std::to_string(a.len);
    case ViewOrigin::peel:
      return "{\"op\": \"peel\", \"id\": " + quoted(id) + ", \"of\": " + quoted(of) +
             ", \"index\": " + std::to_string(a.index);
    case ViewOrigin::atomic:
      return "{\"op\": \"atomic\", \"id\": " + quoted(id) + ", \"of\": " + quoted(of);
    case ViewOrigin::as_buffer:
      return "{\"op\": \"as_buffer\", \"id\": " + quoted(id) + ", \"of\": " + quoted(of);
    case ViewOrigin::to_tensor:
      return "{\"op\": \"to_tensor\", \"id\": " + quoted(id) + ", \"from\": " + quoted(of) +
             ", \"shape\": " + int_list(a.shape);
    case ViewOrigin::into_buffer:
      return "{\"op\": \"into_buffer\", \"id\": " + quoted(id) + ", \"from\": " + quoted(of);
    case ViewOrigin::reinterpret:
      return "{\"op\": \"reinterpret\", \"id\": " + quoted(id) + ", \"from\": " + quoted(of) +
             ", \"dtype\": " + quoted(dtype_name(a.dtype));
    case ViewOrigin::tensor_view: {
      b = "{\"op\": \"tensor_view\", \"id\": " + quoted(id) + ", \"of\": " + quoted(of);
      if (!a.shape.empty()) b += ", \"shape\": " + int_list(a.shape);
      if (!a.ranges.empty()) {
        b += ", \"slice\": [";
        for (std::size_t i = 0; i < a.ranges.size(); ++i) {
          b += (i ? ", [" : "[") + std::to_string(a.ranges[i].begin) + ", " +
               std::to_string(a.ranges[i].end) + "]";
        }
        b += "]";
      }
      return b;
    }
    case ViewOrigin::split_low:
    case ViewOrigin::split_high:
      break;
  }
  return b;
}

void ScenarioWriter::on_view_derived(ViewOrigin origin, const ViewKey* parent, const View& made,
                                     const DeriveArgs& args, const StreamRef* stream) {
  const ViewKey key = ViewKey::of(made);
  const std::lock_guard lock(mu_);
  const bool consumes = origin == ViewOrigin::to_tensor || origin == ViewOrigin::into_buffer ||
                        origin == ViewOrigin::reinterpret || origin == ViewOrigin::split_low;
  std::optional<std::string> of;
  if (parent != nullptr) of = consumes ? take_name(*parent) : name_of(*parent);
  if (parent != nullptr && !of) return;  // made from a view the recording does not know  // not ours
  const std::string id = new_name(key, made.is_tensor() ? 't' : 'b');
  if (origin == ViewOrigin::split_low) {
    split_low_ = id;
    split_of_ = *of;
    return;
  }
  if (origin == ViewOrigin::split_high) {
    if (split_low_.empty()) return;
    add("{\"op\": \"split\", \"of\": " + quoted(split_of_) + ", \"at\": " + std::to_string(args.index) +
        ", \"ids\": [" + quoted(split_low_) + ", " + quoted(id) + "]");
    split_low_.clear();
    return;
  }
  add(derive_body(origin, id, of.value_or(""), args, &made, stream));
}

void ScenarioWriter::on_derive_failed(ViewOrigin origin, const ViewKey& parent, const DeriveArgs& args,
                                      ErrorCode code) {
  const std::lock_guard lock(mu_);
  const std::optional<std::string> of = name_of(parent);
  if (!of) return;
  // The id a failed step would have made: a fresh name, never used again.
  const std::string id = "x" + std::to_string(next_name_++);
  add(derive_body(origin, id, *of, args, nullptr, nullptr) +
      ", \"expect_error\": " + quoted(error_code_name(code)));
}

void ScenarioWriter::on_view_dropped(const View& view) {
  const ViewKey key = ViewKey::of(view);
  const std::lock_guard lock(mu_);
  if (const auto name = take_name(key)) add("{\"op\": \"drop\", \"id\": " + quoted(*name));
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
        ++unrecorded_launches_;
        unrecorded_kernels_.insert(k->name);
        return std::nullopt;
      }
      args += (args.empty() ? "" : ", ") + quoted(p.name) + ": " + quoted(*name);
    } else {
      scalars += (scalars.empty() ? "" : ", ") + quoted(p.name) + ": " +
                 number(scalar_at(p.scalar_dtype, params[i]));
    }
  }
  std::string b = "{\"op\": \"launch\", \"model\": " + quoted(k->model) + ", \"kernel\": " + quoted(k->name) +
                  ", \"stream\": " + quoted(stream_name(stream.id())) + ", \"args\": {" + args + "}";
  if (!scalars.empty()) b += ", \"scalars\": {" + scalars + "}";
  if (std::string_view(k->model) == "simt") {
    b += ", \"grid\": " + dims(d.grid) + ", \"block\": " + dims(d.block);
  } else if (!k->tile.empty()) {
    std::string t = "[";
    for (std::size_t i = 0; i < k->tile.size(); ++i) t += (i ? ", " : "") + std::to_string(k->tile[i]);
    b += ", \"tile\": " + t + "]";
  }
  return b;
}

std::optional<std::string> ScenarioWriter::declared_body(StreamRef stream, const driver::KernelSymbol& symbol,
                                                         const driver::LaunchDims& d,
                                                         std::span<const ViewAccess> accesses) {
  std::string list;
  for (const ViewAccess& va : accesses) {
    const auto name = name_of(ViewKey::of(*va.view));
    if (!name) {  // a view made outside the recording: not even the leases can be replayed
      ++unrecorded_launches_;
      unrecorded_kernels_.insert(symbol.name);
      return std::nullopt;
    }
    list += std::string(list.empty() ? "" : ", ") + "{\"view\": " + quoted(*name) +
            ", \"access\": " + quoted(declared_access_name(va.access)) + "}";
  }
  ++declared_launches_;
  declared_kernels_.insert(symbol.name);
  return "{\"op\": \"declared_launch\", \"kernel\": " + quoted(symbol.name) +
         ", \"stream\": " + quoted(stream_name(stream.id())) + ", \"accesses\": [" + list +
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
  if (auto b = launch_body(stream, symbol, d, params, accesses)) add(std::move(*b), submission);
}

void ScenarioWriter::on_launch_failed(StreamRef stream, const driver::KernelSymbol& symbol,
                                      const driver::LaunchDims& d, void** params,
                                      std::span<const ViewAccess> accesses, ErrorCode code) {
  const std::lock_guard lock(mu_);
  if (auto b = launch_body(stream, symbol, d, params, accesses)) {
    add(std::move(*b) + ", \"expect_error\": " + quoted(error_code_name(code)));
  }
}

void ScenarioWriter::on_transfer(StreamRef stream, const View& view, char kind,
                                 std::span<const std::byte> bytes, std::uint64_t submission) {
  const ViewKey key = ViewKey::of(view);
  const std::lock_guard lock(mu_);
  const auto name = name_of(key);
  if (!name) return;
  const std::string head = "\"buf\": " + quoted(*name) + ", \"stream\": " + quoted(stream_name(stream.id()));
  if (kind == 'c') {  // a read-back: what it read, checked again on replay
    if (unknown_contents_.contains(view.allocation_id())) {
      // Contents replay cannot reproduce (note_contents): the same read,
      // waited for as read_back waits, without the check.
      ++unchecked_reads_;
      if (!view.is_contiguous()) return;  // a download could not read it
      const std::string id = "r" + std::to_string(next_name_++);
      add("{\"op\": \"download\", " + head + ", \"id\": " + quoted(id));
      add("{\"op\": \"wait\", \"id\": " + quoted(id));
      return;
    }
    if (const auto values = values_form(view.dtype(), bytes)) {
      add("{\"op\": \"check\", \"what\": \"contents\", \"of\": " + quoted(*name) +
          ", \"equals\": " + *values);
    }
    return;
  }
  if (kind == 'd') {
    add("{\"op\": \"download\", " + head, submission);
    return;
  }
  // A memset comes as one element of its byte pattern: a fill of that value.
  const std::optional<std::string> from = values_form(view.dtype(), bytes);
  if (from) add("{\"op\": \"upload\", " + head + ", \"from\": " + *from, submission);
}

void ScenarioWriter::on_copy(StreamRef stream, const View& src, const View& dst, std::uint64_t submission) {
  const ViewKey ks = ViewKey::of(src), kd = ViewKey::of(dst);
  const std::lock_guard lock(mu_);
  const auto s = name_of(ks), d = name_of(kd);
  if (unknown_contents_.contains(src.allocation_id())) unknown_contents_.insert(dst.allocation_id());
  if (!s || !d) return;
  add("{\"op\": \"copy\", \"src\": " + quoted(*s) + ", \"dst\": " + quoted(*d) +
          ", \"stream\": " + quoted(stream_name(stream.id())),
      submission);
}

void ScenarioWriter::on_wait_submission(std::uint64_t submission) {
  const std::lock_guard lock(mu_);
  if (!named_.contains(submission)) return;  // no step of the recording made it
  waited_.insert(submission);
  add("{\"op\": \"wait\", \"id\": " + quoted("k" + std::to_string(submission)));
}

void ScenarioWriter::on_wait_stream(StreamRef stream) {
  const std::lock_guard lock(mu_);
  add("{\"op\": \"wait\", \"stream\": " + quoted(stream_name(stream.id())));
}

void ScenarioWriter::on_wait_retirement() {
  const std::lock_guard lock(mu_);
  add("{\"op\": \"retire\"");
}

namespace {

void append_steps(std::string& out, const std::vector<std::string>& steps, const char* indent) {
  for (std::size_t i = 0; i < steps.size(); ++i) out += std::string(i ? ",\n" : "\n") + indent + steps[i];
}

}  // namespace

std::string ScenarioWriter::text() {
  const std::lock_guard lock(mu_);
  const auto close = [this](const std::vector<Step>& steps) {
    std::vector<std::string> out;
    for (const Step& st : steps) {
      std::string b = st.body;
      if (st.submission != 0 && waited_.contains(st.submission))
        b += ", \"id\": " + quoted("k" + std::to_string(st.submission));
      out.push_back(b + "}");
    }
    return out;
  };
  std::string description = "recorded by the tandem runtime (TANDEM_RECORD or ContextOptions::record_to)";
  if (unrecorded_launches_ != 0) {
    description +=
        "; " + std::to_string(unrecorded_launches_) +
        " launch(es) not recorded (kernels outside the catalog or on views made outside the recording):";
    for (const std::string& k : unrecorded_kernels_) description += " " + k;
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
      quoted(description) + ",\n  \"backend\": \"auto\",\n  \"conflict_policy\": " +
      quoted(conflict_policy_name(policy_.value_or(ConflictPolicy::order))) + ",\n  \"streams\": [";
  for (std::size_t i = 0; i < stream_order_.size(); ++i) out += (i ? ", " : "") + quoted(stream_order_[i]);
  out += "],\n  \"steps\": [";
  append_steps(out, close(steps_), "    ");
  out += "\n  ]";
  if (!threads_.empty()) {
    out += ",\n  \"threads\": {";
    bool first = true;
    for (const auto& [name, steps] : threads_) {
      out += std::string(first ? "\n" : ",\n") + "    " + quoted(name) + ": [";
      append_steps(out, close(steps), "      ");
      out += "\n    ]";
      first = false;
    }
    out += "\n  }";
  }
  return out + "\n}\n";
}

void ScenarioWriter::write_file() {
  const std::string t = text();
  std::ofstream f(path_);
  f << t;
  if (!f) std::cerr << "tandem: recording: cannot write the recording to " << path_ << "\n";
}

}  // namespace tandem::detail
