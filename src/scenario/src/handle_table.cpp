// SPDX-License-Identifier: Apache-2.0
// handle_table.cpp — slots, the uniqueness model and graph references.
#include "handle_table.hpp"

#include <algorithm>

#include "shadow.hpp"
#include "tandem/base/guard.hpp"
#include "tandem/errors.hpp"

namespace tandem::scenario::detail {

namespace {

thread_local bool t_refused = false;

[[noreturn]] void fail(ErrorCode code, std::string message) { HandleTable::refuse(code, std::move(message)); }

std::string kind_of(const Handle& h) { return std::string(h.kind_name()); }

}  // namespace

// Several slots' locks, taken in ascending order (each once).
class HandleTable::Locks {
 public:
  Locks(HandleTable& t, std::initializer_list<Slot> slots) {
    std::vector<Slot> s;
    for (Slot x : slots)
      if (x != kNoSlot && std::find(s.begin(), s.end(), x) == s.end()) s.push_back(x);
    std::sort(s.begin(), s.end());
    for (Slot x : s) held_[count_++] = std::unique_lock(t.slots_[x]->mu);
  }

 private:
  std::array<std::unique_lock<base::Mutex>, 4> held_;
  std::size_t count_ = 0;
};

HandleTable::HandleTable(const std::vector<std::string>& names, Shadow* shadow) : shadow_(shadow) {
  slots_.reserve(names.size());
  for (const std::string& n : names) {
    slots_.push_back(std::make_unique<SlotState>());
    slots_.back()->name = n;
  }
}

HandleTable::~HandleTable() {
  clear();
  release_forgotten();
}

std::shared_ptr<Handle> HandleTable::wrap(std::unique_ptr<Handle> h) {
  bump_epoch();  // every put goes through here
  if (h->kind == Handle::Kind::view && h->view.valid())
    ++shard(h->view.allocation_id()).model[h->view.allocation_id()].views;
  return std::shared_ptr<Handle>(h.release(), [this](Handle* p) { destroy(p); });
}

void HandleTable::destroy(Handle* h) noexcept {
  if (h->kind != Handle::Kind::view || !h->view.valid()) {
    delete h;
    return;
  }
  const std::uint64_t id = h->view.allocation_id();
  Shard& sh = shard(id);
  base::Guard g(sh.mu);
  auto it = sh.model.find(id);
  if (it != sh.model.end() && --it->second.views <= 0 && it->second.graphs <= 0) {
    sh.model.erase(it);
    if (shadow_ != nullptr) shadow_->on_free(id);
  }
  delete h;  // a View's destructor never blocks; it may free memory or run an owner
}

std::shared_ptr<Handle> HandleTable::find_locked(SlotState& s) {
  if (!s.handle) {
    fail(ErrorCode::invalid_handle,
         "handle '" + s.name + "' " +
             (s.watch ? "was dropped or consumed" : "does not exist (never created)"));
  }
  return s.handle;
}

std::shared_ptr<Handle> HandleTable::view_locked(SlotState& s, Role role) {
  std::shared_ptr<Handle> h = find_locked(s);
  if (h->kind != Handle::Kind::view) {
    fail(ErrorCode::invalid_handle, std::string(role.a) + role.b + role.c + " '" + s.name + "' is a " +
                                        kind_of(*h) + ", not a buffer or tensor");
  }
  return h;
}

void HandleTable::require_free_locked(SlotState& s) {
  if (s.handle) {
    fail(ErrorCode::invalid_handle, "cannot create handle '" + s.name + "': the name holds a live " +
                                        kind_of(*s.handle) + " (drop it first)");
  }
}

void HandleTable::insert_view_locked(SlotState& s, View v) {
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::view;
  h->view = std::move(v);
  s.watch = AllocationWatch(h->view);
  s.handle = wrap(std::move(h));
}

std::shared_ptr<Handle> HandleTable::find(Slot s) {
  base::Guard g(slots_[s]->mu);
  return find_locked(*slots_[s]);
}

std::shared_ptr<Handle> HandleTable::view(Slot s, Role role) {
  base::Guard g(slots_[s]->mu);
  return view_locked(*slots_[s], role);
}

Stream HandleTable::stream(Slot s) {
  SlotState& st = *slots_[s];
  base::Guard g(st.mu);
  if (!st.handle || st.handle->kind != Handle::Kind::stream) {
    fail(ErrorCode::invalid_handle,
         "stream '" + st.name + "' was dropped" +
             (!st.handle ? "" : " (the name now holds a " + kind_of(*st.handle) + ")"));
  }
  return *st.handle->stream;
}

bool HandleTable::holds_stream(Slot s) {
  base::Guard g(slots_[s]->mu);
  return slots_[s]->handle && slots_[s]->handle->kind == Handle::Kind::stream;
}

Context HandleTable::context(Slot s) {
  std::shared_ptr<Handle> h = find(s);
  if (h->kind != Handle::Kind::context) {
    fail(ErrorCode::invalid_handle, "'" + name(s) + "' is a " + kind_of(*h) + ", not a borrowed context");
  }
  return *h->context;
}

LaunchFuture HandleTable::future(Slot s) {
  std::shared_ptr<Handle> h = find(s);
  if (h->kind != Handle::Kind::future) {
    fail(ErrorCode::invalid_handle, "wait: '" + name(s) + "' is a " + kind_of(*h) + ", not a future");
  }
  return h->future;
}

std::shared_ptr<Handle> HandleTable::graph(Slot s) {
  std::shared_ptr<Handle> h = find(s);
  if (h->kind != Handle::Kind::graph) {
    fail(ErrorCode::invalid_handle, "'" + name(s) + "' is a " + kind_of(*h) + ", not a graph");
  }
  return h;
}

std::optional<AllocationWatch> HandleTable::watch(Slot s) {
  base::Guard g(slots_[s]->mu);
  return slots_[s]->watch;
}

void HandleTable::require_free(Slot s) {
  if (s == kNoSlot) return;
  base::Guard g(slots_[s]->mu);
  require_free_locked(*slots_[s]);
}

std::shared_ptr<Handle> HandleTable::put_view(Slot s, View v) {
  SlotState& st = *slots_[s];
  base::Guard g(st.mu);
  require_free_locked(st);
  if (!v.valid()) {
    insert_view_locked(st, std::move(v));
    return st.handle;
  }
  base::Guard m(shard(v.allocation_id()).mu);
  insert_view_locked(st, std::move(v));
  return st.handle;
}

void HandleTable::put_future(Slot s, LaunchFuture f) {
  SlotState& st = *slots_[s];
  base::Guard g(st.mu);
  if (st.handle) {
    fail(ErrorCode::invalid_handle, "submitted, but cannot name its future '" + st.name +
                                        "': the name holds a live " + kind_of(*st.handle));
  }
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::future;
  h->future = std::move(f);
  st.handle = wrap(std::move(h));
}

void HandleTable::put_graph(Slot s, std::shared_ptr<GraphRecord> g) {
  SlotState& st = *slots_[s];
  base::Guard lk(st.mu);
  require_free_locked(st);
  for (std::uint64_t a : g->allocations) {
    Shard& sh = shard(a);
    base::Guard m(sh.mu);
    ++sh.model[a].graphs;
  }
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::graph;
  h->graph = std::move(g);
  st.handle = wrap(std::move(h));
}

void HandleTable::put_stream(Slot s, Stream stream) {
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::stream;
  h->stream = std::move(stream);
  std::shared_ptr<Handle> old;  // released after the lock
  base::Guard g(slots_[s]->mu);
  old = std::exchange(slots_[s]->handle, wrap(std::move(h)));
}

void HandleTable::put_in_free(Slot s, std::unique_ptr<Handle> h) {
  SlotState& st = *slots_[s];
  base::Guard g(st.mu);
  require_free_locked(st);
  st.handle = wrap(std::move(h));
}

void HandleTable::put_borrowed(Slot s, Stream stream) {
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::stream;
  h->stream = std::move(stream);
  put_in_free(s, std::move(h));
}

void HandleTable::put_borrowed(Slot s, Context context) {
  auto h = std::make_unique<Handle>();
  h->kind = Handle::Kind::context;
  h->context = std::move(context);
  put_in_free(s, std::move(h));
}

// Locks (several slots at once) is beyond the analysis: it holds each slot used here.
void HandleTable::derive(Slot id, Slot of,
                         const std::function<View(const View&)>& make) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  Locks locks(*this, {id, of});
  require_free_locked(*slots_[id]);
  const std::shared_ptr<Handle> h = view_locked(*slots_[of], {"view"});
  if (!h->view.valid()) {
    insert_view_locked(*slots_[id], make(h->view));
    return;
  }
  base::Guard m(shard(h->view.allocation_id()).mu);
  insert_view_locked(*slots_[id], make(h->view));
}

void HandleTable::convert(Slot id, Slot from, const std::function<View(View&&, bool, bool)>& make)
    TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  std::shared_ptr<Handle> consumed;  // released after every lock
  Locks locks(*this, {id, from});
  SlotState& src = *slots_[from];
  if (id != from) require_free_locked(*slots_[id]);
  std::shared_ptr<Handle> h = view_locked(src, {"source"});
  if (h.use_count() > 2) {
    fail(ErrorCode::invalid_handle,
         "cannot consume '" + src.name + "': another thread's step is using it right now");
  }
  const std::uint64_t a = h->view.allocation_id();
  settle_graph_releases();
  Shard& sh = shard(a);
  base::Guard m(sh.mu);
  auto it = sh.model.find(a);
  const bool known = it != sh.model.end() && it->second.uncertain == 0;
  const bool unique = it != sh.model.end() && it->second.views == 1 && it->second.graphs == 0;
  View out = make(std::move(h->view), known, unique);
  --sh.model[a].views;  // the consumed view (its handle now holds nothing)
  consumed = std::move(src.handle);
  h.reset();
  insert_view_locked(*slots_[id], std::move(out));
}

void HandleTable::split(Slot of, std::array<Slot, 2> ids, std::uint64_t at) TANDEM_NO_THREAD_SAFETY_ANALYSIS {
  std::shared_ptr<Handle> consumed;  // released after every lock
  if (ids[0] == kNoSlot || ids[1] == kNoSlot || ids[0] == ids[1]) {
    fail(ErrorCode::invalid_handle, "split needs two distinct new handle names");
  }
  Locks locks(*this, {of, ids[0], ids[1]});
  require_free_locked(*slots_[ids[0]]);
  if (ids[1] != of) require_free_locked(*slots_[ids[1]]);
  SlotState& src = *slots_[of];
  std::shared_ptr<Handle> h = view_locked(src, {"split source"});
  if (h.use_count() > 2) {
    fail(ErrorCode::invalid_handle,
         "cannot consume '" + src.name + "': another thread's step is using it right now");
  }
  const std::uint64_t a = h->view.allocation_id();
  Shard& sh = shard(a);
  base::Guard m(sh.mu);
  auto [lo, hi] = std::move(h->view).split_at(at);
  --sh.model[a].views;
  consumed = std::move(src.handle);
  h.reset();
  insert_view_locked(*slots_[ids[0]], std::move(lo));
  insert_view_locked(*slots_[ids[1]], std::move(hi));
}

void HandleTable::add_replay(GraphRecord& g, const LaunchFuture& f) {
  base::Guard lk(replays_mu_);
  auto& replays = g.replays;
  replays.erase(std::remove_if(replays.begin(), replays.end(),
                               [](const LaunchFuture& r) { return r.status() == SubmissionStatus::retired; }),
                replays.end());
  replays.push_back(f);
}

void HandleTable::drop(Slot s, bool forget) {
  std::shared_ptr<Handle> victim;  // destroyed after the lock is released
  {
    base::Guard g(slots_[s]->mu);
    victim = find_locked(*slots_[s]);
    slots_[s]->handle.reset();
  }
  bump_epoch();
  // A forgotten graph is leaked: its references stay, the model keeps counting them.
  if (victim->kind == Handle::Kind::graph && !forget) release_graph(*victim->graph);
  if (!forget) return;
  if (victim->kind == Handle::Kind::future) {
    std::move(victim->future).forget();  // the submission record is leaked on purpose
  } else {
    base::Guard g(forgotten_mu_);
    forgotten_.push_back(std::move(victim));  // no destructor runs until the report is written
  }
}

void HandleTable::clear() {
  std::vector<std::shared_ptr<Handle>> victims;
  for (auto& s : slots_) {
    base::Guard g(s->mu);
    if (s->handle) victims.push_back(std::move(s->handle));
  }
  bump_epoch();
  // Graphs dropped now may still have replays in flight.
  for (const auto& h : victims)
    if (h->kind == Handle::Kind::graph) release_graph(*h->graph);
  victims.clear();  // dropping never waits for the GPU
}

void HandleTable::release_forgotten() {
  std::vector<std::shared_ptr<Handle>> leaked;
  {
    base::Guard g(forgotten_mu_);
    leaked.swap(forgotten_);
  }
}

void HandleTable::refuse(ErrorCode code, std::string message) {
  t_refused = true;
  throw Error(code, std::move(message));
}

bool HandleTable::refused() noexcept { return t_refused; }

void HandleTable::clear_refusal() noexcept { t_refused = false; }

HandleTable::Uniqueness HandleTable::uniqueness(Slot s, Role role) {
  base::Guard g(slots_[s]->mu);
  const std::shared_ptr<Handle> h = view_locked(*slots_[s], role);
  settle_graph_releases();
  Uniqueness u;
  const std::uint64_t a = h->view.allocation_id();
  Shard& sh = shard(a);
  base::Guard m(sh.mu);
  auto it = sh.model.find(a);
  if (it != sh.model.end()) {
    u.known = it->second.uncertain == 0;
    u.model = it->second.views == 1 && it->second.graphs == 0;
  }
  u.actual = h->view.is_unique();
  return u;
}

void HandleTable::compare(bool known, bool expected, bool actual) noexcept {
  if (!known) return;
  checks_.fetch_add(1, std::memory_order_relaxed);
  if (expected != actual) failures_.fetch_add(1, std::memory_order_relaxed);
}

void HandleTable::drop_graph_ref(Shard& sh, std::uint64_t allocation) {
  auto m = sh.model.find(allocation);
  if (m != sh.model.end() && --m->second.graphs <= 0 && m->second.views <= 0) sh.model.erase(m);
}

// A graph handle goes: its references go now, or (replays in flight) when
// they retire; until then the model cannot know.
void HandleTable::release_graph(const GraphRecord& r) {
  std::vector<LaunchFuture> replays;
  {
    base::Guard lk(replays_mu_);
    replays = r.replays;
  }
  const bool pending = std::any_of(replays.begin(), replays.end(), [](const LaunchFuture& f) {
    return f.status() != SubmissionStatus::retired;
  });
  for (std::uint64_t a : r.allocations) {
    Shard& sh = shard(a);
    base::Guard m(sh.mu);
    if (pending)
      ++sh.model[a].uncertain;
    else
      drop_graph_ref(sh, a);
  }
  if (!pending) return;
  base::Guard g(releasing_mu_);
  releasing_.push_back({r.allocations, replays});
  releasing_count_.fetch_add(1, std::memory_order_release);
}

void HandleTable::settle_graph_releases() {
  if (releasing_count_.load(std::memory_order_acquire) == 0) return;
  base::Guard g(releasing_mu_);
  for (auto it = releasing_.begin(); it != releasing_.end();) {
    const PendingRelease& p = *it;
    const bool quarantined = std::any_of(p.replays.begin(), p.replays.end(), [](const LaunchFuture& f) {
      return f.status() == SubmissionStatus::quarantined;
    });
    const bool done =
        std::all_of(p.replays.begin(), p.replays.end(), [](const LaunchFuture& f) { return f.done(); });
    if (!done || quarantined) {  // quarantined replays keep the graph forever: stays uncertain
      ++it;
      continue;
    }
    // A retired replay has released what it kept (the runtime resets it
    // before publishing "retired"), so the references are gone now.
    for (std::uint64_t a : p.allocations) {
      Shard& sh = shard(a);
      base::Guard m(sh.mu);
      auto e = sh.model.find(a);
      if (e == sh.model.end()) continue;
      --e->second.uncertain;
      drop_graph_ref(sh, a);
    }
    it = releasing_.erase(it);
    releasing_count_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace tandem::scenario::detail
