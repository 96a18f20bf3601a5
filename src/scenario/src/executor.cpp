// The scenario executor: steps → runtime calls, observations → RunRecord.
//
// Locking: one mutex (mu_) guards the handle table, the uniqueness model and
// the per-stream bookkeeping. Every call that changes a view count (creating,
// consuming or destroying a View) runs under it, so the model and the
// runtime's count change together and a `check unique` compares like with
// like even while other scenario threads create and drop views. Submissions
// (launch, copy, ...) run outside it: they only read views, and the handles
// they use are kept alive by shared_ptr copies. A Handle is destroyed by its
// shared_ptr deleter, which takes mu_; so no code drops the last reference
// to a handle while holding mu_ (victims are moved out and released after).
#include "tandem/detail/trace.hpp"
#include "tandem/scenario/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "element_codec.hpp"
#include "handles.hpp"
#include "run_record.hpp"
#include "sha256.hpp"
#include "shadow.hpp"
#include "tandem/allocation_watch.hpp"
#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/testing/sim.hpp"
#include "tandem/errors.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/scenario/device_json.hpp"
#include "view_layout.hpp"

namespace tandem::scenario {

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

constexpr auto kLongWait = std::chrono::minutes(10);
constexpr std::uint64_t kKernelInitBytes = std::uint64_t{64} << 20;  // larger fills run a kernel
constexpr std::uint64_t kDefaultVramTolerance = std::uint64_t{64} << 20;

[[noreturn]] void fail(ErrorCode code, std::string message) { throw Error(code, std::move(message)); }

// Thrown through run_steps when a nested list ended the body: the error is
// already recorded, only the unwinding remains.
struct BodyEnded {};

const char* op_name(Op op) noexcept {
  static constexpr const char* kNames[] = {
      "alloc", "foreign", "slice", "split", "peel", "atomic", "to_tensor", "tensor_view", "as_buffer",
      "into_buffer", "reinterpret", "launch", "copy", "upload", "download", "capture", "replay", "drop",
      "forget", "wait", "retire", "check", "vram", "loop", "sleep", "peer_access"};
  return kNames[static_cast<int>(op)];
}

const char* check_name(CheckWhat w) noexcept {
  static constexpr const char* kNames[] = {"unique", "views", "live_allocations", "pending",
                                           "freed", "owner_released", "same_allocation", "contents"};
  return kNames[static_cast<int>(w)];
}

ojson form_json(const ValueForm& f) {
  switch (f.kind) {
    case ValueForm::Kind::fill: return {{"fill", f.fill}};
    case ValueForm::Kind::iota: return {{"iota", {{"start", f.iota_start}, {"step", f.iota_step}}}};
    case ValueForm::Kind::shadow: return "shadow";
    case ValueForm::Kind::values: {
      ojson v = ojson::array();
      for (std::size_t i = 0; i < f.values.size() && i < 16; ++i) v.push_back(f.values[i]);
      if (f.values.size() > 16) return {{"values", v}, {"count", f.values.size()}};
      return v;
    }
    default: return nullptr;
  }
}

double compare_tolerance(DType t) noexcept {
  switch (t) {
    case DType::f64: return 1e-9;
    case DType::f16: case DType::bf16: return 1e-2;
    default: return 1e-4;
  }
}

struct Capture {
  std::uint64_t stream_id = 0;
  GraphRecord* record = nullptr;
  std::set<std::uint64_t> allocations;
};

struct ThreadCtx {
  std::string name;
  Capture* capture = nullptr;
};

class Executor {
 public:
  Executor(const Scenario& s, const RunOptions& o) : sc_(s), opt_(o) {}
  RunResult run();

 private:
  // --- setup / teardown ---
  bool open_backend(RunResult& out);
  void start_repetition();
  void end_repetition();
  void measure_end();

  // --- steps ---
  bool run_steps(const std::vector<Step>& steps, ThreadCtx& t);
  void exec(const Step& st, ThreadCtx& t);
  void record_error(const Step& st, const std::string& code, const std::string& message);
  void record_check(const Step& st, const char* what, ojson expected, ojson actual, bool ok);
  void skip_rest(const std::vector<Step>& steps, std::size_t from);

  void name_new_buffer(const Step& st, View v);
  void op_alloc(const Step& st);
  std::uint64_t alloc_len(const Step& st);  // `len`, or the fraction_of_free form worked out
  void op_foreign(const Step& st);
  void op_derive(const Step& st);
  void op_split(const Step& st);
  void op_transfer(const Step& st);  // to_tensor, into_buffer, reinterpret
  void op_launch(const Step& st, ThreadCtx& t);
  void op_copy(const Step& st, ThreadCtx& t);
  void op_upload(const Step& st, ThreadCtx& t);
  void op_download(const Step& st, ThreadCtx& t);
  void op_capture(const Step& st, ThreadCtx& t);
  void op_replay(const Step& st);
  void op_drop(const Step& st, bool forget);
  void op_wait(const Step& st);
  void op_retire(const Step& st);
  void op_check(const Step& st);
  void op_vram(const Step& st);
  void op_peer_access(const Step& st);
  void check_contents(const Step& st);

  // --- handles (mu_) ---
  std::shared_ptr<Handle> wrap(std::unique_ptr<Handle> h);  // mu_ held
  void destroy(Handle* h) noexcept;
  void require_free(const std::string& name);                 // mu_ held
  void require_free_id(const Step& st);                       // takes mu_
  std::shared_ptr<Handle> find(const std::string& name);      // mu_ held; throws invalid_handle
  std::shared_ptr<Handle> view_handle(const std::string& name, const char* role);  // mu_ held
  std::shared_ptr<Handle> lookup_view(const std::string& name, const char* role);  // takes mu_
  void insert_view(const std::string& name, View v);          // mu_ held
  Stream stream_named(const std::optional<std::string>& name);  // takes mu_
  std::string stream_label(const std::optional<std::string>& name) const;
  bool model_unique(std::uint64_t allocation, bool& known);  // mu_ held
  void settle_graph_releases();                               // mu_ held
  void drop_model_graph_ref(std::uint64_t allocation);        // mu_ held
  void release_graph_in_model(const GraphRecord& r);          // mu_ held
  void compare_uniqueness(bool known, bool expected, bool actual);  // mu_ held

  // --- submissions ---
  void submitted(const std::optional<std::string>& stream, const LaunchFuture& f, std::uint64_t bytes,
                 Clock::duration took, bool launch);
  void init_contents(const std::optional<std::string>& stream, const View& v, const ValueForm& form);
  void arm_fault(const Step& st, const Stream& s);
  void name_future(const Step& st, LaunchFuture f);
  std::vector<std::byte> read_view(const View& v);
  StreamRef check_stream_for(const View& v);  // an internal stream of the view's device

  // --- several devices ---
  Context& ctx_of(std::uint32_t device);  // a device the scenario uses
  std::uint32_t stream_device(const std::optional<std::string>& name) const;
  bool settle(std::chrono::nanoseconds timeout) const;  // every context's work
  RuntimeStats total_stats() const;                      // summed over the contexts
  std::uint64_t free_after_trim(std::uint32_t device);   // settles first

  const Scenario& sc_;
  RunOptions opt_;
  std::optional<Platform> platform_;
  std::optional<Context> ctx_;  // of the scenario's `device`
  std::map<std::uint32_t, Context> ctxs_;  // one per device used (sc_.devices), ctx_ among them
  std::optional<Device> device_;
  driver::SimBackend* sim_ = nullptr;
  std::uint64_t repetitions_ = 1;
  std::uint64_t repetition_ = 0;
  bool shadow_on_ = false;
  Shadow shadow_;

  // Declared before the handle containers: a handle's deleter uses them.
  std::mutex mu_;
  std::unordered_map<std::uint64_t, AllocationModel> model_;
  std::map<std::string, AllocationWatch> watches_;
  std::map<std::string, std::shared_ptr<Handle>> handles_;
  std::vector<std::shared_ptr<Handle>> graveyard_;  // forgotten on purpose: never dropped during the run
  // Dropped graphs with replays in flight: what the model still counts for
  // them. Never the Graph itself (the runtime must be free to destroy it).
  struct PendingRelease {
    std::vector<std::uint64_t> allocations;
    std::vector<LaunchFuture> replays;
  };
  std::vector<PendingRelease> releasing_;
  std::map<std::string, LaunchFuture> last_on_stream_;
  std::set<std::string> fired_faults_;
  std::optional<Stream> default_stream_;
  std::map<std::uint32_t, Stream> check_streams_;  // per device: reads for `check contents`
  std::map<std::uint32_t, std::uint64_t> vram_marks_;  // per device
  // Per device: free memory when the run started (set before the first
  // repetition, read-only after): `len: {"fraction_of_free": f}` is of this.
  std::map<std::uint32_t, std::uint64_t> start_free_;
  std::set<std::string> fraction_noted_;  // step paths whose length is in the notes (rec_mu_)

  std::mutex rec_mu_;
  RunRecord rec_;
  LatencyHistogram submit_hist_;
  LatencyHistogram retire_hist_;  // the contexts' retirement latencies, merged for the report
  std::atomic<std::uint64_t> submissions_{0}, launches_{0}, bytes_moved_{0};
  std::atomic<std::uint64_t> uniq_checks_{0}, uniq_failures_{0};
  Clock::duration body_time_{};
};

// ---------------------------------------------------------------------------
// handles

std::shared_ptr<Handle> Executor::wrap(std::unique_ptr<Handle> h) {
  if (h->kind == Handle::Kind::view && h->view.valid()) ++model_[h->view.allocation_id()].views;
  return std::shared_ptr<Handle>(h.release(), [this](Handle* p) { destroy(p); });
}

void Executor::destroy(Handle* h) noexcept {
  std::lock_guard g(mu_);
  if (h->kind == Handle::Kind::view && h->view.valid()) {
    const std::uint64_t id = h->view.allocation_id();
    auto it = model_.find(id);
    if (it != model_.end() && --it->second.views <= 0 && it->second.graphs <= 0) {
      model_.erase(it);
      if (shadow_on_) shadow_.on_free(id);
    }
  }
  delete h;  // a View's destructor never blocks; it may free memory or run an owner
}

void Executor::require_free(const std::string& name) {
  auto it = handles_.find(name);
  if (it != handles_.end()) {
    fail(ErrorCode::invalid_handle, "cannot create handle '" + name + "': the name holds a live " +
                                        std::string(it->second->kind_name()) + " (drop it first)");
  }
}

std::shared_ptr<Handle> Executor::find(const std::string& name) {
  auto it = handles_.find(name);
  if (it == handles_.end()) {
    fail(ErrorCode::invalid_handle, "handle '" + name + "' " +
                                        (watches_.count(name) != 0 ? "was dropped or consumed"
                                                                   : "does not exist (never created)"));
  }
  return it->second;
}

std::shared_ptr<Handle> Executor::view_handle(const std::string& name, const char* role) {
  std::shared_ptr<Handle> h = find(name);
  if (h->kind != Handle::Kind::view) {
    fail(ErrorCode::invalid_handle, std::string(role) + " '" + name + "' is a " + std::string(h->kind_name()) +
                                        ", not a buffer or tensor");
  }
  return h;
}

std::shared_ptr<Handle> Executor::lookup_view(const std::string& name, const char* role) {
  std::lock_guard g(mu_);
  return view_handle(name, role);
}

void Executor::insert_view(const std::string& name, View v) {
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::view;
  h->view = std::move(v);
  watches_[name] = AllocationWatch(h->view);
  handles_[name] = wrap(std::move(h));
}

std::string Executor::stream_label(const std::optional<std::string>& name) const {
  if (name) return *name;
  return sc_.streams.empty() ? std::string("(default)") : sc_.streams.front();
}

Stream Executor::stream_named(const std::optional<std::string>& name) {
  std::lock_guard g(mu_);
  if (!name && sc_.streams.empty()) return *default_stream_;
  const std::string n = stream_label(name);
  auto it = handles_.find(n);
  if (it == handles_.end() || it->second->kind != Handle::Kind::stream) {
    fail(ErrorCode::invalid_handle, "stream '" + n + "' was dropped" +
                                        (it == handles_.end() ? "" : " (the name now holds a " +
                                                                         std::string(it->second->kind_name()) + ")"));
  }
  return *it->second->stream;
}

void Executor::settle_graph_releases() {
  for (auto it = releasing_.begin(); it != releasing_.end();) {
    PendingRelease& g = *it;
    const bool quarantined = std::any_of(g.replays.begin(), g.replays.end(), [](const LaunchFuture& f) {
      return f.status() == SubmissionStatus::quarantined;
    });
    const bool done = std::all_of(g.replays.begin(), g.replays.end(), [](const LaunchFuture& f) { return f.done(); });
    if (!done || quarantined) {  // quarantined replays keep the graph forever: stays uncertain
      ++it;
      continue;
    }
    // A retired replay has released what it kept (the runtime resets it
    // before publishing "retired"), so the references are gone now.
    for (std::uint64_t a : g.allocations) {
      auto m = model_.find(a);
      if (m == model_.end()) continue;
      --m->second.uncertain;
      drop_model_graph_ref(a);
    }
    it = releasing_.erase(it);
  }
}

void Executor::drop_model_graph_ref(std::uint64_t allocation) {
  auto m = model_.find(allocation);
  if (m != model_.end() && --m->second.graphs <= 0 && m->second.views <= 0) model_.erase(m);
}

// A graph handle goes: its references go now, or (replays in flight) when
// they retire; until then the model cannot know.
void Executor::release_graph_in_model(const GraphRecord& r) {
  const bool pending = std::any_of(r.replays.begin(), r.replays.end(), [](const LaunchFuture& f) {
    return f.status() != SubmissionStatus::retired;
  });
  if (pending) {
    for (std::uint64_t a : r.allocations) ++model_[a].uncertain;
    releasing_.push_back({r.allocations, r.replays});
  } else {
    for (std::uint64_t a : r.allocations) drop_model_graph_ref(a);
  }
}

bool Executor::model_unique(std::uint64_t allocation, bool& known) {
  settle_graph_releases();
  auto it = model_.find(allocation);
  if (it == model_.end()) {
    known = false;
    return false;
  }
  known = it->second.uncertain == 0;
  return it->second.views == 1 && it->second.graphs == 0;
}

void Executor::compare_uniqueness(bool known, bool expected, bool actual) {
  if (!known) return;
  uniq_checks_.fetch_add(1, std::memory_order_relaxed);
  if (expected != actual) uniq_failures_.fetch_add(1, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// records

void Executor::record_error(const Step& st, const std::string& code, const std::string& message) {
  std::lock_guard g(rec_mu_);
  rec_.errors.push_back({st.path, op_name(st.op), code, message, repetition_});
  if (opt_.progress) opt_.progress->errors.fetch_add(1, std::memory_order_relaxed);
}

void Executor::record_check(const Step& st, const char* what, ojson expected, ojson actual, bool ok) {
  std::lock_guard g(rec_mu_);
  rec_.checks.push_back({st.path, what, std::move(expected), std::move(actual), ok});
  if (!ok && opt_.progress) opt_.progress->checks_failed.fetch_add(1, std::memory_order_relaxed);
}

void Executor::skip_rest(const std::vector<Step>& steps, std::size_t from) {
  std::lock_guard g(rec_mu_);
  for (std::size_t i = from; i < steps.size(); ++i) rec_.skipped.push_back(steps[i].path);
}

// ---------------------------------------------------------------------------
// submissions

void Executor::submitted(const std::optional<std::string>& stream, const LaunchFuture& f, std::uint64_t bytes,
                         Clock::duration took, bool launch) {
  submit_hist_.record(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()));
  if (!f.valid()) return;  // captured into a graph: not a submission (yet)
  submissions_.fetch_add(1, std::memory_order_relaxed);
  if (launch) launches_.fetch_add(1, std::memory_order_relaxed);
  bytes_moved_.fetch_add(bytes, std::memory_order_relaxed);
  std::lock_guard g(mu_);
  last_on_stream_[stream_label(stream)] = f;
}

void Executor::arm_fault(const Step& st, const Stream& s) {
  if (sim_ == nullptr || st.id.empty()) return;
  for (const SimFault& f : sc_.sim.faults) {
    if (f.kind != SimFault::Kind::completion_unknown || f.submission != st.id) continue;
    std::lock_guard g(mu_);
    if (!fired_faults_.insert(st.id).second) continue;
    // Its own completion event, and the work before it proven apart: the
    // fault, armed for the next event recorded on the stream, stays with
    // exactly this submission although the context shares events.
    s.isolate_next_submission();
    sim_->arm_completion_unknown(s.native());
  }
}

void Executor::init_contents(const std::optional<std::string>& stream, const View& v, const ValueForm& form) {
  if (form.kind == ValueForm::Kind::none) return;
  const Stream s = stream_named(stream);
  const ViewLayout layout = ViewLayout::of(v);
  const std::uint64_t n = v.element_count();
  const std::uint64_t bytes = n * v.element_size();
  const auto t0 = Clock::now();
  LaunchFuture f;
  if (form.kind == ValueForm::Kind::zero) {
    f = memset_bytes(s, v, 0);
    if (shadow_on_) shadow_.fill_bytes(layout, 0);
  } else {
    const kernels::KernelEntry* k = nullptr;
    if (bytes > kKernelInitBytes && !shadow_on_ &&
        (form.kind == ValueForm::Kind::fill || form.kind == ValueForm::Kind::iota)) {
      k = kernels::find(kernels::Model::simt, form.kind == ValueForm::Kind::fill ? "fill" : "iota", v.dtype());
    }
    if (k != nullptr) {  // a large buffer: fill it on the device instead of staging it on the host
      std::vector<kernels::Arg> args{kernels::Arg::of(v)};
      if (form.kind == ValueForm::Kind::fill) {
        args.push_back(kernels::Arg::value(form.fill));
      } else {
        args.push_back(kernels::Arg::value(form.iota_start));
        args.push_back(kernels::Arg::value(form.iota_step));
      }
      f = kernels::launch(s, *k, args);
    } else {
      const std::vector<std::byte> data = make_elements(v.dtype(), form, n);
      f = upload(s, v, data);
      if (shadow_on_) shadow_.write(layout, data);
    }
  }
  submitted(stream, f, bytes, Clock::now() - t0, false);
}

// launch and replay (and, an extension, copy, upload and download) may name
// their future with `id`.
void Executor::name_future(const Step& st, LaunchFuture f) {
  if (st.id.empty()) return;
  std::lock_guard g(mu_);
  auto it = handles_.find(st.id);
  if (it != handles_.end()) {
    fail(ErrorCode::invalid_handle, "submitted, but cannot name its future '" + st.id + "': the name holds a live " +
                                        std::string(it->second->kind_name()));
  }
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::future;
  h->future = std::move(f);
  handles_[st.id] = wrap(std::move(h));
}

void Executor::require_free_id(const Step& st) {
  if (st.id.empty()) return;
  std::lock_guard g(mu_);
  require_free(st.id);
}

// ---------------------------------------------------------------------------
// ops

// alloc and foreign: model the new memory, name it, then `init` it.
void Executor::name_new_buffer(const Step& st, View v) {
  if (shadow_on_ && v.valid()) shadow_.on_alloc(v.allocation_id(), v.extent_bytes());
  std::shared_ptr<Handle> h;
  {
    std::lock_guard g(mu_);
    require_free(st.id);  // another thread may have taken the name meanwhile
    insert_view(st.id, std::move(v));
    h = handles_[st.id];
  }
  init_contents(st.stream, h->view, st.init);
}

// `len: {"fraction_of_free": f}`: floor(free x f / element size) elements,
// where free is the step's device's free memory when the run started, not
// now: a loop that sized each buffer from the memory left at that moment
// would shrink its buffers while earlier ones are still held and so never
// show whether dropped memory can be reused. The first use of each step
// notes the figures in the report.
std::uint64_t Executor::alloc_len(const Step& st) {
  if (!st.len_fraction_of_free) return st.len;
  const std::uint32_t device = stream_device(st.stream);
  const std::uint64_t free_bytes = start_free_.at(device);
  const std::uint64_t es = dtype_size(*st.dtype);
  const auto share = static_cast<std::uint64_t>(
      std::floor(static_cast<long double>(free_bytes) * static_cast<long double>(*st.len_fraction_of_free)));
  const std::uint64_t n = share / es;
  std::lock_guard g(rec_mu_);
  if (fraction_noted_.insert(st.path).second) {
    std::ostringstream note;
    note << st.path << ".len: fraction_of_free " << *st.len_fraction_of_free << " of the " << free_bytes
         << " bytes free on device " << device << " when the run started = " << n << " x "
         << dtype_name(*st.dtype) << " (" << n * es << " bytes)";
    rec_.notes.push_back(note.str());
  }
  return n;
}

void Executor::op_alloc(const Step& st) {
  {
    std::lock_guard g(mu_);
    require_free(st.id);
  }
  const Stream s = stream_named(st.stream);
  View v = allocate(s, *st.dtype, alloc_len(st));
  name_new_buffer(st, std::move(v));
}

void Executor::op_foreign(const Step& st) {
  {
    std::lock_guard g(mu_);
    require_free(st.id);
  }
  const std::uint64_t bytes = st.len * dtype_size(*st.dtype);
  driver::Backend& b = platform_->backend();
  Context& ctx = ctx_of(stream_device(st.stream));  // foreign memory follows its stream's device
  const driver::ContextHandle ch = ctx.native();
  driver::DevicePtr ptr = 0;
  if (bytes > 0) {
    const driver::Result r = b.mem_alloc(ch, bytes, ptr);
    if (!r.ok()) {
      fail(r.status == driver::Status::out_of_memory ? ErrorCode::out_of_memory : ErrorCode::driver,
           "foreign allocation of " + std::to_string(bytes) + " bytes outside the runtime failed: " + b.describe(r));
    }
  }
  // The owner object: frees the memory with the driver when the runtime
  // says nobody uses it any more. It keeps the platform (and so the
  // backend) alive until then.
  Platform keep = *platform_;
  View v;
  try {
    v = adopt(ctx, ptr, *st.dtype, st.len, [keep, ch, ptr] {
      if (ptr != 0) (void)keep.backend().mem_free(ch, ptr);
    });
  } catch (...) {
    if (ptr != 0) (void)b.mem_free(ch, ptr);
    throw;
  }
  name_new_buffer(st, std::move(v));
}

// slice, peel, atomic, tensor_view, as_buffer: a new counted view of the same allocation.
void Executor::op_derive(const Step& st) {
  std::lock_guard g(mu_);
  require_free(st.id);
  const std::shared_ptr<Handle> h = view_handle(st.of, "view");
  const View& src = h->view;
  View nv;
  switch (st.op) {
    case Op::slice: nv = src.slice(st.offset, st.len); break;
    case Op::peel: nv = src.peel(st.index); break;
    case Op::atomic: nv = src.atomic(); break;
    case Op::as_buffer: nv = src.as_buffer(); break;
    case Op::tensor_view: {
      std::optional<std::span<const std::int64_t>> shape;
      if (!st.shape.empty() || st.slice.empty()) shape = std::span<const std::int64_t>(st.shape);
      if (st.shape.empty()) shape.reset();
      std::vector<DimRange> ranges;
      for (const auto& [b, e] : st.slice) ranges.push_back({b, e});
      std::optional<std::span<const DimRange>> r;
      if (!st.slice.empty()) r = std::span<const DimRange>(ranges);
      nv = src.tensor_view(shape, r);
      break;
    }
    default: fail(ErrorCode::unsupported, "internal: not a derive op");
  }
  insert_view(st.id, std::move(nv));
}

void Executor::op_split(const Step& st) {
  std::shared_ptr<Handle> consumed;  // released after mu_ (its deleter takes mu_)
  std::lock_guard g(mu_);
  if (st.ids.size() != 2 || st.ids[0] == st.ids[1]) {
    fail(ErrorCode::invalid_handle, "split needs two distinct new handle names");
  }
  require_free(st.ids[0]);
  if (st.ids[1] != st.of) require_free(st.ids[1]);
  if (st.ids[0] != st.of) require_free(st.ids[0]);
  std::shared_ptr<Handle> h = view_handle(st.of, "split source");
  if (h.use_count() > 2) {
    fail(ErrorCode::invalid_handle, "cannot consume '" + st.of + "': another thread's step is using it right now");
  }
  const std::uint64_t id = h->view.allocation_id();
  auto [lo, hi] = std::move(h->view).split_at(st.at);
  --model_[id].views;  // the consumed view (its handle now holds nothing)
  consumed = std::move(handles_[st.of]);
  handles_.erase(st.of);
  h.reset();
  insert_view(st.ids[0], std::move(lo));
  insert_view(st.ids[1], std::move(hi));
  // `consumed` must outlive the lock: declared before it, destroyed after.
}

void Executor::op_transfer(const Step& st) {
  std::shared_ptr<Handle> consumed;
  std::lock_guard g(mu_);
  if (st.id != st.from) require_free(st.id);
  std::shared_ptr<Handle> h = view_handle(st.from, "source");
  if (h.use_count() > 2) {
    fail(ErrorCode::invalid_handle, "cannot consume '" + st.from + "': another thread's step is using it right now");
  }
  const std::uint64_t id = h->view.allocation_id();
  bool known = false;
  const bool expected_unique = model_unique(id, known);
  View out;
  try {
    switch (st.op) {
      case Op::to_tensor: out = std::move(h->view).to_tensor(st.shape); break;
      case Op::into_buffer: out = std::move(h->view).into_buffer(); break;
      default:
        if (*st.dtype == DType::boolean) {
          // Bytes become bool only after every byte was read back and found 0 or 1.
          out = std::move(h->view).to_bool_checked(check_stream_for(h->view));
        } else {
          out = std::move(h->view).reinterpret(*st.dtype);
        }
        break;
    }
  } catch (const Error& e) {
    if (e.code() == ErrorCode::aliased) compare_uniqueness(known, expected_unique, false);
    throw;
  }
  compare_uniqueness(known, expected_unique, true);
  --model_[id].views;
  consumed = std::move(handles_[st.from]);
  handles_.erase(st.from);
  h.reset();
  insert_view(st.id, std::move(out));
}

void Executor::op_launch(const Step& st, ThreadCtx& t) {
  require_free_id(st);
  const Stream s = stream_named(st.stream);
  const std::span<const kernels::ParamSpec> params = kernels::kernel_params(st.model, st.kernel);
  std::vector<std::shared_ptr<Handle>> held;  // keeps the views alive for the call
  std::vector<kernels::ArgShape> shapes(params.size());
  std::vector<kernels::Arg> args(params.size());
  std::vector<ShadowArg> shadow_args(params.size());
  {
    std::lock_guard g(mu_);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const kernels::ParamSpec& p = params[i];
      if (p.kind == kernels::ArgKind::scalar) {
        auto it = st.scalars.find(p.name);
        if (it != st.scalars.end()) {
          args[i] = kernels::Arg::value(it->second);
          shadow_args[i].scalar = kernels::ScalarValue(it->second);
        }
        continue;
      }
      auto a = st.args.find(p.name);
      if (a == st.args.end()) fail(ErrorCode::invalid_handle, "argument '" + std::string(p.name) + "' is missing");
      std::shared_ptr<Handle> h = view_handle(a->second, (std::string("argument '") + p.name + "'").c_str());
      const bool tensor = h->view.is_tensor();
      if (st.model == kernels::Model::simt && tensor) {
        fail(ErrorCode::unsupported, "simt kernel '" + st.kernel + "' takes buffers; argument '" + p.name + "' ('" +
                                         a->second + "') is a tensor: hand it over with as_buffer or into_buffer");
      }
      if (st.model == kernels::Model::tile && !tensor) {
        fail(ErrorCode::unsupported, "tile kernel '" + st.kernel + "' takes tensors; argument '" + p.name + "' ('" +
                                         a->second + "') is a buffer: hand it over with to_tensor");
      }
      shapes[i] = kernels::shape_of(h->view);
      args[i] = kernels::Arg::of(h->view);
      shadow_args[i].view = ViewLayout::of(h->view);
      held.push_back(std::move(h));
    }
  }
  kernels::TileShape tile;
  const kernels::TileShape* tile_ptr = nullptr;
  if (!st.tile.empty()) {
    tile.rank = static_cast<int>(st.tile.size());
    tile.dims[0] = st.tile[0];
    tile.dims[1] = st.tile.size() > 1 ? st.tile[1] : 0;
    tile_ptr = &tile;
  }
  std::string why;
  const kernels::KernelEntry* entry = kernels::resolve(st.model, st.kernel, shapes, tile_ptr, &why);
  if (entry == nullptr) {
    fail(tile_ptr != nullptr ? ErrorCode::unsupported : ErrorCode::invalid_dtype,
         std::string(kernels::model_name(st.model)) + " kernel '" + st.kernel + "': " + why);
  }
  std::optional<driver::Dim3> grid, block;
  if (st.grid) grid = driver::Dim3{(*st.grid)[0], (*st.grid)[1], (*st.grid)[2]};
  if (st.block) block = driver::Dim3{(*st.block)[0], (*st.block)[1], (*st.block)[2]};
  arm_fault(st, s);
  const auto t0 = Clock::now();
  LaunchFuture f = kernels::launch(s, *entry, args, grid, block);
  const auto took = Clock::now() - t0;
  std::uint64_t bytes = 0;
  for (const auto& h : held) bytes += h->view.extent_bytes();
  submitted(st.stream, f, bytes, took, true);

  if (shadow_on_ || (!f.valid() && t.capture != nullptr)) {
    driver::LaunchDims dims;
    (void)kernels::launch_dims(*entry, shapes, grid, block, dims);
    auto effect = [entry, shadow_args, dims](Shadow& sh) { sh.launch(*entry, shadow_args, dims); };
    if (!f.valid() && t.capture != nullptr) {
      for (const auto& h : held) {
        if (h->view.extent_bytes() > 0) t.capture->allocations.insert(h->view.allocation_id());
      }
      if (shadow_on_) t.capture->record->effects.emplace_back(effect);
    } else {
      effect(shadow_);
    }
  }
  name_future(st, std::move(f));
}

void Executor::op_copy(const Step& st, ThreadCtx& t) {
  require_free_id(st);
  const Stream s = stream_named(st.stream);
  const std::shared_ptr<Handle> src = lookup_view(st.src, "copy source");
  const std::shared_ptr<Handle> dst = lookup_view(st.dst, "copy destination");
  const auto t0 = Clock::now();
  LaunchFuture f = tandem::copy(s, src->view, dst->view);
  submitted(st.stream, f, 2 * src->view.extent_bytes(), Clock::now() - t0, false);
  const ViewLayout sl = ViewLayout::of(src->view), dl = ViewLayout::of(dst->view);
  if (!f.valid() && t.capture != nullptr) {
    if (src->view.extent_bytes() > 0) {
      t.capture->allocations.insert(src->view.allocation_id());
      t.capture->allocations.insert(dst->view.allocation_id());
    }
    if (shadow_on_) t.capture->record->effects.emplace_back([sl, dl](Shadow& sh) { sh.copy(sl, dl); });
  } else if (shadow_on_) {
    shadow_.copy(sl, dl);
  }
  name_future(st, std::move(f));
}

void Executor::op_upload(const Step& st, ThreadCtx& t) {
  require_free_id(st);
  const Stream s = stream_named(st.stream);
  const std::shared_ptr<Handle> h = lookup_view(st.buf, "upload destination");
  const View& v = h->view;
  const std::uint64_t n = v.element_count();
  if (st.init.kind == ValueForm::Kind::values && st.init.values.size() != n) {
    fail(ErrorCode::out_of_range, "upload of " + std::to_string(st.init.values.size()) + " values into '" + st.buf +
                                      "', which holds " + std::to_string(n) + " elements");
  }
  std::vector<std::byte> data = make_elements(v.dtype(), st.init, n);
  const auto t0 = Clock::now();
  LaunchFuture f = upload(s, v, data);
  submitted(st.stream, f, data.size(), Clock::now() - t0, false);
  const ViewLayout l = ViewLayout::of(v);
  if (!f.valid() && t.capture != nullptr) {
    if (v.extent_bytes() > 0) t.capture->allocations.insert(v.allocation_id());
    if (shadow_on_) {
      auto shared = std::make_shared<const std::vector<std::byte>>(std::move(data));
      t.capture->record->effects.emplace_back([l, shared](Shadow& sh) { sh.write(l, *shared); });
    }
  } else if (shadow_on_) {
    shadow_.write(l, data);
  }
  name_future(st, std::move(f));
}

void Executor::op_download(const Step& st, ThreadCtx& t) {
  require_free_id(st);
  const Stream s = stream_named(st.stream);
  const std::shared_ptr<Handle> h = lookup_view(st.buf, "download source");
  const auto t0 = Clock::now();
  Download d = download(s, h->view);
  submitted(st.stream, d.future(), h->view.extent_bytes(), Clock::now() - t0, false);
  if (!d.future().valid() && t.capture != nullptr && h->view.extent_bytes() > 0) {
    t.capture->allocations.insert(h->view.allocation_id());
  }
  name_future(st, d.future());
}

void Executor::op_capture(const Step& st, ThreadCtx& t) {
  {
    std::lock_guard g(mu_);
    require_free(st.graph);
  }
  const Stream s = stream_named(st.stream);
  auto record = std::make_shared<GraphRecord>();
  Capture cap{s.id(), record.get(), {}};
  ThreadCtx inner{t.name, &cap};
  bool nested_ok = true;
  Graph g = Graph::capture(s, [&] {
    nested_ok = run_steps(st.steps, inner);
    if (!nested_ok) throw BodyEnded{};
  });
  record->graph = std::move(g);
  record->allocations.assign(cap.allocations.begin(), cap.allocations.end());
  std::lock_guard lk(mu_);
  require_free(st.graph);
  for (std::uint64_t a : record->allocations) ++model_[a].graphs;
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::graph;
  h->graph = std::move(record);
  handles_[st.graph] = wrap(std::move(h));
}

void Executor::op_replay(const Step& st) {
  require_free_id(st);
  std::shared_ptr<Handle> h;
  {
    std::lock_guard g(mu_);
    h = find(st.graph);
    if (h->kind != Handle::Kind::graph) {
      fail(ErrorCode::invalid_handle, "'" + st.graph + "' is a " + std::string(h->kind_name()) + ", not a graph");
    }
  }
  const Stream s = stream_named(st.stream);
  arm_fault(st, s);
  const auto t0 = Clock::now();
  LaunchFuture f = h->graph->graph->replay(s);
  submitted(st.stream, f, 0, Clock::now() - t0, true);
  if (shadow_on_) {
    for (const auto& e : h->graph->effects) e(shadow_);
  }
  {
    std::lock_guard g(mu_);
    auto& replays = h->graph->replays;
    replays.erase(std::remove_if(replays.begin(), replays.end(),
                                 [](const LaunchFuture& r) { return r.status() == SubmissionStatus::retired; }),
                  replays.end());
    replays.push_back(f);
  }
  name_future(st, std::move(f));
}

void Executor::op_drop(const Step& st, bool forget) {
  std::shared_ptr<Handle> victim;  // destroyed after the lock is released
  std::lock_guard g(mu_);
  victim = find(st.id);
  handles_.erase(st.id);
  // A forgotten graph is leaked: its references stay, the model keeps counting them.
  if (victim->kind == Handle::Kind::graph && !forget) release_graph_in_model(*victim->graph);
  if (forget) {
    if (victim->kind == Handle::Kind::future) {
      std::move(victim->future).forget();  // the submission record is leaked on purpose
    } else {
      graveyard_.push_back(std::move(victim));  // no destructor runs until the report is written
    }
  }
}

void Executor::op_wait(const Step& st) {
  if (st.wait_all) {
    if (!settle(kLongWait)) fail(ErrorCode::timeout, "waiting for all work: not settled after 10 minutes");
    return;
  }
  LaunchFuture f;
  std::string what;
  {
    std::lock_guard g(mu_);
    if (st.stream) {
      auto h = handles_.find(*st.stream);
      if (h == handles_.end() || h->second->kind != Handle::Kind::stream) {
        fail(ErrorCode::invalid_handle, "stream '" + *st.stream + "' was dropped");
      }
      auto it = last_on_stream_.find(*st.stream);
      if (it != last_on_stream_.end()) f = it->second;
      what = "stream '" + *st.stream + "'";
    } else {
      std::shared_ptr<Handle> h = find(st.id);
      if (h->kind != Handle::Kind::future) {
        fail(ErrorCode::invalid_handle, "wait: '" + st.id + "' is a " + std::string(h->kind_name()) + ", not a future");
      }
      f = h->future;
      what = "future '" + st.id + "'";
    }
  }
  if (f.valid() && !f.wait(kLongWait)) fail(ErrorCode::timeout, "waiting for " + what + ": not done after 10 minutes");
}

void Executor::op_retire(const Step& st) {
  const auto timeout = std::chrono::milliseconds(st.timeout_ms.value_or(60'000));
  if (!settle(timeout)) {
    const RuntimeStats s = total_stats();
    fail(ErrorCode::timeout, "retirement did not settle within " + std::to_string(timeout.count()) + " ms (" +
                                 std::to_string(s.pending_submissions) + " submissions pending)");
  }
}

StreamRef Executor::check_stream_for(const View& v) {
  // The view's own device (a stream of another is device_mismatch).
  auto it = check_streams_.find(static_cast<std::uint32_t>(v.device_ordinal()));
  return it != check_streams_.end() ? StreamRef(it->second) : StreamRef(*default_stream_);
}

std::vector<std::byte> Executor::read_view(const View& v) {
  StreamRef s = check_stream_for(v);
  try {
    return read_back(s, v, kLongWait);
  } catch (const ConflictError&) {
    // reject policy: the read conflicts with work still in flight on another
    // stream. A check waits for it rather than failing the scenario.
    if (!settle(kLongWait)) throw;
    return read_back(s, v, kLongWait);
  }
}

void Executor::check_contents(const Step& st) {
  const std::shared_ptr<Handle> h = lookup_view(st.of, "check contents of");
  const View& v = h->view;
  const DType t = v.dtype();
  const std::size_t es = dtype_size(t);
  const std::uint64_t n = v.element_count();
  std::vector<std::byte> expected;
  std::vector<bool> known;
  bool approximate = false;
  if (st.equals.kind == ValueForm::Kind::shadow) {
    if (!shadow_on_) {
      fail(ErrorCode::unsupported, sc_.threads.empty() ? "the shadow model is off: " + shadow_.why_disabled()
                                                       : "the shadow model needs a single-thread scenario (this one has threads)");
    }
    auto c = shadow_.read(ViewLayout::of(v));
    if (!c) fail(ErrorCode::unsupported, "the shadow model does not hold the allocation of '" + st.of + "'");
    expected = std::move(c->bytes);
    known = std::move(c->known);
    approximate = c->approximate;
  } else {
    if (st.equals.kind == ValueForm::Kind::values && st.equals.values.size() != n) {
      record_check(st, "contents", form_json(st.equals),
                   {{"elements", n}, {"mismatch", "expected " + std::to_string(st.equals.values.size()) +
                                                      " values, the view holds " + std::to_string(n)}},
                   false);
      return;
    }
    expected = make_elements(t, st.equals, n);
    known.assign(n, true);
  }
  const std::vector<std::byte> actual = read_view(v);
  std::uint64_t mismatches = 0, unknown = 0;
  ojson first = nullptr;
  const double tol = compare_tolerance(t);
  for (std::uint64_t i = 0; i < n && (i + 1) * es <= actual.size(); ++i) {
    if (!known[i]) {
      ++unknown;
      continue;
    }
    const std::byte* a = actual.data() + i * es;
    const std::byte* e = expected.data() + i * es;
    bool same = same_element(t, a, e);
    if (!same && approximate) {
      const double x = decode_element(t, a), y = decode_element(t, e);
      same = std::fabs(x - y) <= tol * std::max(1.0, std::fabs(y));
    }
    if (!same) {
      if (mismatches == 0) {
        first = {{"index", i}, {"expected", element_text(t, e)}, {"actual", element_text(t, a)}};
      }
      ++mismatches;
    }
  }
  ojson actual_json = {{"elements", n}, {"mismatches", mismatches}};
  if (unknown > 0) actual_json["unknown"] = unknown;
  if (!first.is_null()) actual_json["first_mismatch"] = first;
  record_check(st, "contents", form_json(st.equals), actual_json, mismatches == 0);
}

void Executor::op_check(const Step& st) {
  const char* what = check_name(st.what);
  switch (st.what) {
    case CheckWhat::unique: {
      std::lock_guard g(mu_);
      const std::shared_ptr<Handle> h = view_handle(st.of, "check unique of");
      bool known = false;
      const bool model = model_unique(h->view.allocation_id(), known);
      const bool actual = h->view.is_unique();
      compare_uniqueness(known, model, actual);
      record_check(st, what, st.bool_value, actual, actual == st.bool_value);  // lock order: mu_, then rec_mu_
      return;
    }
    case CheckWhat::views: {
      const std::shared_ptr<Handle> h = lookup_view(st.of, "check views of");
      const std::uint64_t actual = h->view.view_count();
      record_check(st, what, st.int_value, actual, actual == st.int_value);
      return;
    }
    case CheckWhat::live_allocations: {
      const std::uint64_t actual = total_stats().live_allocations;
      record_check(st, what, st.int_value, actual, actual == st.int_value);
      return;
    }
    case CheckWhat::pending: {
      const std::uint64_t actual = total_stats().pending_submissions;
      record_check(st, what, st.int_value, actual, actual == st.int_value);
      return;
    }
    case CheckWhat::freed:
    case CheckWhat::owner_released: {
      AllocationWatch w;
      {
        std::lock_guard g(mu_);
        auto it = watches_.find(st.of);
        if (it == watches_.end()) {
          fail(ErrorCode::invalid_handle, "check " + std::string(what) + ": no buffer or tensor was ever named '" + st.of + "'");
        }
        w = it->second;
      }
      const bool actual = st.what == CheckWhat::freed ? w.freed() : w.owner_released();
      record_check(st, what, st.bool_value, actual, actual == st.bool_value);
      return;
    }
    case CheckWhat::same_allocation: {
      std::shared_ptr<Handle> a, b;
      {
        std::lock_guard g(mu_);
        a = view_handle(st.a, "check same_allocation of");
        b = view_handle(st.b, "check same_allocation of");
      }
      bool actual = a->view.allocation_id() == b->view.allocation_id();
      if (actual && a->view.byte_offset() == b->view.byte_offset() && a->view.extent_bytes() > 0 &&
          b->view.extent_bytes() > 0) {
        actual = a->view.device_ptr() == b->view.device_ptr();
      }
      record_check(st, what, st.bool_value, actual, actual == st.bool_value);
      return;
    }
    case CheckWhat::contents: check_contents(st); return;
  }
}

// Without `device`, mark/check every device the scenario uses (one check
// record each when there are several). The report's top-level `vram` stays
// the scenario `device`'s; `vram.devices` lists each device when several.
void Executor::op_vram(const Step& st) {
  std::vector<std::uint32_t> devices;
  if (st.device) devices.push_back(*st.device);
  else devices.assign(sc_.devices.begin(), sc_.devices.end());
  // Settle first: memory held by finished work is released by retirement,
  // and the pool keeps freed memory until trimmed.
  (void)settle(kLongWait);
  for (const std::uint32_t d : devices) {
    const std::uint64_t free_now = free_after_trim(d);
    if (st.vram_mark) {
      vram_marks_[d] = free_now;
      std::lock_guard g(rec_mu_);
      rec_.vram_devices[d].baseline_free = free_now;
      if (d == sc_.device) rec_.vram.baseline_free = free_now;
      continue;
    }
    const std::uint64_t mark = vram_marks_[d];
    const auto delta = static_cast<std::int64_t>(mark) - static_cast<std::int64_t>(free_now);
    const bool ok = static_cast<std::uint64_t>(delta < 0 ? -delta : delta) <= st.tolerance_bytes;
    {
      std::lock_guard g(rec_mu_);
      VramRecord& r = rec_.vram_devices[d];
      r = {mark, free_now, st.tolerance_bytes, delta, ok && (!r.checked || r.ok), true};
      if (d == sc_.device) {
        rec_.vram = {mark, free_now, st.tolerance_bytes, delta, ok && (!rec_.vram.checked || rec_.vram.ok), true};
      }
    }
    ojson actual = {{"baseline_free", mark}, {"free", free_now}, {"delta", delta}};
    if (sc_.devices.size() > 1 || st.device) actual["device"] = d;
    record_check(st, "vram", {{"delta_at_most", st.tolerance_bytes}}, actual, ok);
  }
}

void Executor::op_peer_access(const Step& st) {
  ctx_of(st.peer_devices[0]).enable_peer_access(ctx_of(st.peer_devices[1]));
}

Context& Executor::ctx_of(std::uint32_t device) {
  auto it = ctxs_.find(device);
  // The loader adds every device a step names to sc_.devices.
  if (it == ctxs_.end()) fail(ErrorCode::out_of_range, "device " + std::to_string(device) + " is not used by the scenario");
  return it->second;
}

std::uint32_t Executor::stream_device(const std::optional<std::string>& name) const {
  if (!name && sc_.streams.empty()) return sc_.device;
  auto it = sc_.stream_devices.find(stream_label(name));
  return it == sc_.stream_devices.end() ? sc_.device : it->second;
}

bool Executor::settle(std::chrono::nanoseconds timeout) const {
  // The platform's scope covers a copy submitted on one device's stream
  // that leases (and retires on) another device's allocation.
  return platform_->wait_for_retirement(timeout);
}

RuntimeStats Executor::total_stats() const {
  RuntimeStats t;
  for (const auto& [d, c] : ctxs_) {
    const RuntimeStats s = c.stats();
    t.live_allocations += s.live_allocations;
    t.live_bytes += s.live_bytes;
    t.quarantined_allocations += s.quarantined_allocations;
    t.quarantined_bytes += s.quarantined_bytes;
    t.quarantined_submissions += s.quarantined_submissions;
    t.foreign_owners_unreleased += s.foreign_owners_unreleased;
    t.allocations_total += s.allocations_total;
    t.frees_total += s.frees_total;
    t.pending_submissions += s.pending_submissions;
    t.active_leases += s.active_leases;
    t.retired_submissions += s.retired_submissions;
    t.submissions_total += s.submissions_total;
    t.uniqueness_checks += s.uniqueness_checks;
    t.streams += s.streams;
  }
  return t;
}

std::uint64_t Executor::free_after_trim(std::uint32_t device) {
  Context& c = ctx_of(device);
  c.trim();
  return c.memory_info().free_bytes;
}

void Executor::exec(const Step& st, ThreadCtx& t) {
  switch (st.op) {
    case Op::alloc: op_alloc(st); return;
    case Op::foreign: op_foreign(st); return;
    case Op::slice: case Op::peel: case Op::atomic: case Op::tensor_view: case Op::as_buffer: op_derive(st); return;
    case Op::split: op_split(st); return;
    case Op::to_tensor: case Op::into_buffer: case Op::reinterpret: op_transfer(st); return;
    case Op::launch: op_launch(st, t); return;
    case Op::copy: op_copy(st, t); return;
    case Op::upload: op_upload(st, t); return;
    case Op::download: op_download(st, t); return;
    case Op::capture: op_capture(st, t); return;
    case Op::replay: op_replay(st); return;
    case Op::drop: op_drop(st, false); return;
    case Op::forget: op_drop(st, true); return;
    case Op::wait: op_wait(st); return;
    case Op::retire: op_retire(st); return;
    case Op::check: op_check(st); return;
    case Op::vram: op_vram(st); return;
    case Op::peer_access: op_peer_access(st); return;
    case Op::loop:
      for (std::uint64_t i = 0; i < st.count; ++i) {
        if (!run_steps(st.steps, t)) throw BodyEnded{};
      }
      return;
    case Op::sleep: std::this_thread::sleep_for(std::chrono::microseconds(st.us)); return;
  }
}

// Runs a list of steps; false when a step failed without expect_error (the
// rest of the list is listed as skipped and the caller stops too).
bool Executor::run_steps(const std::vector<Step>& steps, ThreadCtx& t) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    std::optional<std::string> code;
    std::string message;
    TANDEM_TRACE("step %s: %s %s", st.path.c_str(), op_name(st.op), st.id.c_str());
    try {
      exec(st, t);
    } catch (const BodyEnded&) {
      skip_rest(steps, i + 1);
      return false;
    } catch (const Error& e) {
      code = std::string(error_code_name(e.code()));
      message = e.what();
    } catch (const std::bad_alloc&) {
      code = "out_of_memory";
      message = "host memory exhausted";
    } catch (const std::exception& e) {
      code = "unsupported";
      message = e.what();
    }
    if (opt_.progress) opt_.progress->steps_done.fetch_add(1, std::memory_order_relaxed);
    if (st.expect_error) {
      const std::string actual = code.value_or("success");
      ojson actual_json = actual;
      if (code && *code != *st.expect_error) actual_json = {{"code", actual}, {"message", message}};
      record_check(st, "expect_error", *st.expect_error, actual_json, code && *code == *st.expect_error);
      continue;
    }
    if (code) {
      record_error(st, *code, message);
      skip_rest(steps, i + 1);
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// setup, repetitions, measurement

bool Executor::open_backend(RunResult& out) {
  Backend b = opt_.backend.value_or(sc_.backend);
  const BackendKind kind = b == Backend::cuda ? BackendKind::cuda : b == Backend::sim ? BackendKind::sim : BackendKind::automatic;
  driver::SimConfig cfg;
  cfg.memory_bytes = sc_.sim.memory_bytes;
  // The sim presents as many devices as the scenario uses.
  const std::uint32_t highest = sc_.devices.empty() ? sc_.device : *sc_.devices.rbegin();
  cfg.devices = static_cast<int>(highest) + 1;
  try {
    platform_ = Platform::open(kind, cfg);
  } catch (const Error& e) {
    rec_.status = "error";
    rec_.errors.push_back({"backend", "open", std::string(error_code_name(e.code())),
                           "backend '" + std::string(backend_kind_name(kind)) + "' is not available: " + e.what(), 0});
    out.exit_code = 4;
    return false;
  }
  rec_.backend = std::string(platform_->backend_name());
  if (static_cast<int>(highest) >= platform_->device_count()) {
    rec_.status = "error";
    rec_.errors.push_back({"device", "open", "out_of_range",
                           "device " + std::to_string(highest) + " does not exist: the scenario uses " +
                               std::to_string(sc_.devices.size()) + " device(s) up to ordinal " +
                               std::to_string(highest) + ", backend '" + rec_.backend + "' has " +
                               std::to_string(platform_->device_count()) + " device(s)",
                           0});
    out.exit_code = 4;
    return false;
  }
  device_ = platform_->device(static_cast<int>(sc_.device));
  rec_.device = device_json(*device_);
  sim_ = testing::sim_backend(*platform_);
  if (!sim_ && (!sc_.sim.faults.empty() || !sc_.sim.stream_delay_us.empty())) {
    rec_.notes.push_back("the scenario's sim settings (faults, stream delays) are ignored on backend '" + rec_.backend + "'");
  }
  ContextOptions co;
  co.conflict_policy = sc_.conflict_policy == ConflictPolicy::reject ? tandem::ConflictPolicy::reject
                                                                     : tandem::ConflictPolicy::order;
  co.measure_retirement_latency = true;  // the report's retire_latency_us
  // Otherwise the runtime users get (completion events shared: a faulted
  // submission gets one of its own, arm_fault).
  rec_.runtime = {{"share_completion_events", co.share_completion_events},
                  {"measure_retirement_latency", co.measure_retirement_latency},
                  {"conflict_policy", co.conflict_policy == tandem::ConflictPolicy::reject ? "reject" : "order"},
                  {"out_of_memory_wait_ms",
                   std::chrono::duration_cast<std::chrono::milliseconds>(co.out_of_memory_wait).count()}};
  for (const std::uint32_t d : sc_.devices) {
    Context c = Context::create(platform_->device(static_cast<int>(d)), co);
    // Before any step: on CUDA a kernel's first load waits for the kernels
    // running on the device, which would let a long kernel finish (and
    // retire) inside a later launch step and change what the steps observe.
    kernels::load_catalog(c);
    ctxs_.emplace(d, std::move(c));
  }
  ctx_ = ctxs_.at(sc_.device);
  return true;
}

void Executor::start_repetition() {
  std::lock_guard g(mu_);
  fired_faults_.clear();
  last_on_stream_.clear();
  for (const std::string& name : sc_.streams) {
    auto h = std::make_unique<Handle>();
    h->kind = Handle::Kind::stream;
    h->stream = Stream::create(ctx_of(sc_.stream_devices.at(name)));
    if (sim_) {
      auto d = sc_.sim.stream_delay_us.find(name);
      if (d != sc_.sim.stream_delay_us.end()) {
        sim_->set_stream_delay(h->stream->native(), std::chrono::microseconds(d->second));
      }
    }
    handles_[name] = wrap(std::move(h));
  }
  default_stream_ = Stream::create(*ctx_);
  for (auto& [d, c] : ctxs_) check_streams_.insert_or_assign(d, Stream::create(c));
  if (sim_) {
    for (const SimFault& f : sc_.sim.faults) {
      if (f.kind == SimFault::Kind::alloc_fail) sim_->fail_nth_alloc(f.nth);
    }
  }
}

void Executor::end_repetition() {
  std::map<std::string, std::shared_ptr<Handle>> victims;
  {
    std::lock_guard g(mu_);
    // Graphs dropped now may still have replays in flight.
    for (auto& [name, h] : handles_) {
      if (h->kind == Handle::Kind::graph) release_graph_in_model(*h->graph);
    }
    victims.swap(handles_);
    last_on_stream_.clear();
  }
  victims.clear();  // dropping never waits for the GPU
  default_stream_.reset();
  check_streams_.clear();
  if (sim_) sim_->fail_nth_alloc(0);
}

void Executor::measure_end() {
  const bool settled = settle(kLongWait);
  if (!settled) rec_.notes.push_back("retirement had not settled 10 minutes after the body ended");
  const RuntimeStats s = total_stats();
  rec_.live_allocations = s.live_allocations;
  rec_.live_bytes = s.live_bytes;
  rec_.quarantined_allocations = s.quarantined_allocations;
  rec_.quarantined_bytes = s.quarantined_bytes;
  rec_.foreign_owners_unreleased = s.foreign_owners_unreleased;
  rec_.retired = s.retired_submissions;
  rec_.runtime_uniqueness_checks = s.uniqueness_checks;
  rec_.uniqueness_checks = uniq_checks_.load();
  rec_.uniqueness_failures = uniq_failures_.load();
  rec_.submissions = submissions_.load();
  rec_.launches = launches_.load();
  rec_.bytes_moved = bytes_moved_.load();
  rec_.body_seconds = std::chrono::duration<double>(body_time_).count();
  rec_.submit_ns = &submit_hist_;
  // Devices without an explicit `vram check`: report the whole run's delta
  // for information (the default expectations cover leaks through the live
  // allocation count, which does not depend on other users of the GPU).
  for (const std::uint32_t d : sc_.devices) {
    VramRecord& r = rec_.vram_devices[d];
    if (r.checked) continue;
    try {
      const std::uint64_t free_now = free_after_trim(d);
      const auto delta = static_cast<std::int64_t>(r.baseline_free) - static_cast<std::int64_t>(free_now);
      r.final_free = free_now;
      r.delta = delta;
      r.tolerance = kDefaultVramTolerance;
      r.ok = static_cast<std::uint64_t>(delta < 0 ? -delta : delta) <= kDefaultVramTolerance;
      if (d == sc_.device) rec_.vram = r;
    } catch (const Error& e) {
      rec_.notes.push_back("final free-memory measurement of device " + std::to_string(d) + " failed: " + e.what());
    }
  }
  if (sc_.devices.size() < 2) rec_.vram_devices.clear();  // one device: the top-level figures say it all
  if (sim_) {
    for (const driver::Violation& v : sim_->violations()) {
      rec_.violations.push_back({{"kind", driver::violation_kind_name(v.kind)}, {"detail", v.detail}});
    }
  }
  // End-of-run expectations, per repetition (a body that leaks one buffer
  // leaks `repeat` of them).
  const std::uint64_t n = repetitions_;
  auto expect = [&](const char* key, std::uint64_t expected_per_run, std::uint64_t actual) {
    const std::uint64_t expected = expected_per_run * n;
    rec_.checks.push_back({std::string("expect.") + key, key, expected, actual, expected == actual});
  };
  expect("live_allocations", sc_.expect.live_allocations, rec_.live_allocations);
  expect("quarantined_allocations", sc_.expect.quarantined_allocations, rec_.quarantined_allocations);
  expect("foreign_owners_unreleased", sc_.expect.foreign_owners_unreleased, rec_.foreign_owners_unreleased);
  expect("violations", sc_.expect.violations, rec_.violations.size());
  expect("uniqueness_failures", sc_.expect.uniqueness_failures, rec_.uniqueness_failures);
}

RunResult Executor::run() {
  const auto start = Clock::now();
  RunResult out;
  rec_.tool = {{"name", "tandem"}, {"version", opt_.tool_version}, {"git", opt_.tool_git}};
  rec_.scenario = {{"name", sc_.name}, {"file", sc_.file},
                   {"sha256", opt_.file_text.empty() ? ojson(nullptr) : ojson(sha256_hex(opt_.file_text))}};
  repetitions_ = opt_.repeat.value_or(sc_.repeat);
  rec_.repetitions = repetitions_;
  if (opt_.progress) opt_.progress->repetitions.store(repetitions_);
  shadow_on_ = sc_.threads.empty();
  if (!shadow_on_) shadow_.disable("the scenario has threads");
  bool opened = false;
  try {
    opened = open_backend(out);
    if (opened) {
      for (const std::uint32_t d : sc_.devices) {
        vram_marks_[d] = free_after_trim(d);
        rec_.vram_devices[d].baseline_free = vram_marks_[d];
      }
      rec_.vram.baseline_free = vram_marks_[sc_.device];
      start_free_ = vram_marks_;
      for (repetition_ = 1; repetition_ <= repetitions_; ++repetition_) {
        if (opt_.progress) opt_.progress->repetition.store(repetition_);
        start_repetition();
        const auto body_start = Clock::now();
        ThreadCtx main{"main", nullptr};
        run_steps(sc_.steps, main);
        std::vector<std::thread> threads;
        std::vector<ThreadCtx> ctxs;
        ctxs.reserve(sc_.threads.size());
        for (const auto& [name, steps] : sc_.threads) ctxs.push_back({name, nullptr});
        std::size_t k = 0;
        for (const auto& entry : sc_.threads) {
          ThreadCtx* c = &ctxs[k++];
          const std::vector<Step>* steps = &entry.second;
          threads.emplace_back([this, c, steps] { run_steps(*steps, *c); });
        }
        for (std::thread& th : threads) th.join();
        body_time_ += Clock::now() - body_start;
        end_repetition();
      }
      repetition_ = repetitions_;
      measure_end();
    }
  } catch (const Error& e) {
    rec_.status = "error";
    rec_.errors.push_back({"run", "setup", std::string(error_code_name(e.code())), e.what(), repetition_});
    out.exit_code = 3;
  } catch (const std::exception& e) {
    rec_.status = "error";
    rec_.errors.push_back({"run", "setup", "driver", e.what(), repetition_});
    out.exit_code = 3;
  }
  rec_.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (rec_.status != "error") {
    const bool device_error = std::any_of(rec_.errors.begin(), rec_.errors.end(),
                                          [](const ErrorRecord& e) { return e.code == "driver"; });
    const bool checks_ok = std::all_of(rec_.checks.begin(), rec_.checks.end(), [](const CheckRecord& c) { return c.ok; });
    if (device_error) {
      rec_.status = "error";
      out.exit_code = 3;
    } else if (!checks_ok || !rec_.errors.empty()) {
      rec_.status = "fail";
      out.exit_code = 1;
    } else {
      rec_.status = "pass";
      out.exit_code = 0;
    }
  }
  // One latency histogram per context (device): the report gives them together.
  for (const auto& [d, c] : ctxs_) {
    if (const LatencyHistogram* h = c.retire_latency()) retire_hist_.add(*h);
  }
  rec_.retire_ns = &retire_hist_;
  out.report = report_json(rec_);
  // Only now, with the report written, do forgotten handles go (they must
  // not be destroyed while the run measures them).
  std::vector<std::shared_ptr<Handle>> leaked;
  {
    std::lock_guard g(mu_);
    leaked.swap(graveyard_);
  }
  leaked.clear();
  if (platform_) (void)platform_->wait_for_retirement(std::chrono::seconds(60));
  return out;
}

}  // namespace

RunResult run(const Scenario& scenario, const RunOptions& options) {
  Executor e(scenario, options);
  return e.run();
}

}  // namespace tandem::scenario
