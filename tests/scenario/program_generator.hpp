// SPDX-License-Identifier: Apache-2.0
// program_generator.hpp — random valid scenario programs and the model that
// keeps them valid (tests/scenario/program_fuzz_test.cpp runs them).
//
// The generator tracks what the contract implies: views per allocation and
// graph references (uniqueness), each view's elements in its allocation and
// the leases that may still be held (the reject policy), the device of each
// allocation (two devices). A step whose outcome the model says must fail
// carries expect_error.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sanitizers.hpp"

namespace tandem::scenario::test {

using json = nlohmann::ordered_json;

// A forgotten future leaks its submission record by contract, which
// LeakSanitizer rightly reports: ASan builds drop those futures instead and
// keep every other allocation leak-checked.
#if defined(TANDEM_TEST_ASAN)
constexpr bool kForget = false;
#else
constexpr bool kForget = true;
#endif

struct Handle {
  std::string name;
  std::size_t alloc;
  bool tensor = false;
  std::uint32_t len = 0;
  std::uint32_t rows = 0, cols = 0;  // tensors
  bool contiguous = true;            // tensor sub-views with ranges are strided
  bool shared = false;               // threaded programs: made before the threads, only launched on
  std::uint32_t offset = 0;          // first element in the allocation
  std::uint32_t strided_span = 0;    // elements from the first to past the last; 0: len

  std::uint32_t span() const { return strided_span ? strided_span : len; }
  // The same view under another name and kind (tensor conversions move it).
  Handle as(std::string new_name, bool as_tensor, std::uint32_t r = 0, std::uint32_t c = 0) const {
    Handle h = *this;
    h.name = std::move(new_name);
    h.tensor = as_tensor;
    h.rows = r;
    h.cols = c;
    return h;
  }
};

struct Graph {
  std::string name;
  std::size_t alloc;
  std::uint32_t offset, span;  // the captured scale's elements
};

// One lease a submission takes: elements [lo, hi) of an allocation.
struct Access {
  std::size_t alloc;
  std::uint32_t lo, hi;
  bool write;
};

inline Access read_of(const Handle& h) { return {h.alloc, h.offset, h.offset + h.span(), false}; }
inline Access write_of(const Handle& h) { return {h.alloc, h.offset, h.offset + h.span(), true}; }

// Uniqueness in the model: alloc, slice, split, peel, as_buffer and
// tensor_view add a view, to_tensor and into_buffer move one, drop removes
// one; a capture adds a graph reference, which a dropped graph gives back
// once retirement is waited for.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(std::uint64_t seed) : rng_(seed), seed_(seed) {}

  // One thread: `steps` random steps, then the shadow contents of every
  // live handle.
  json make(int steps) {
    json sc = header();
    json body = json::array();
    for (int i = 0; i < steps; ++i) step(body);
    for (const Handle& h : live_) body.push_back(shadow_check(h));
    sc["steps"] = body;
    return sc;
  }

  // One thread, two simulated devices with peer access: two streams each;
  // launches on each device's own views, copies between the devices.
  json make_two_devices(int steps) {
    streams_ = {"s0", "s1", "g0", "g1"};
    stream_device_ = {0, 0, 1, 1};
    two_devices_ = true;
    json sc = header();
    json body = json::array({{{"op", "peer_access"}, {"devices", {0, 1}}}});
    for (int i = 0; i < steps; ++i) step(body);
    for (const Handle& h : live_) body.push_back(shadow_check(h));
    sc["steps"] = body;
    return sc;
  }

  // One thread, and the sim reports completion_unknown for one launch that
  // kept its future: exactly the allocations that launch used are
  // quarantined (runtime.md §6), everything else is freed, and retirement
  // still settles. The work itself ran, so the shadow contents hold.
  json make_quarantine(int steps) {
    json sc = make(steps);
    if (launch_allocs_.empty()) return sc;
    auto it = launch_allocs_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(below(launch_allocs_.size())));
    sc["sim"]["faults"] = json::array({{{"kind", "completion_unknown"}, {"submission", it->first}}});
    sc["expect"] = {{"quarantined_allocations", it->second.size()}};
    return sc;
  }

  // One thread, and the sim fails one driver allocation (an alloc step
  // among the first dozen): that step must fail with out_of_memory and the
  // rest run as if it had never been asked (shadow contents, no leak).
  json make_oom(int steps) {
    oom_at_ = 1 + below(12);
    json sc = make(steps);
    if (oom_nth_ != 0) sc["sim"]["faults"] = json::array({{{"kind", "alloc_fail"}, {"nth", oom_nth_}}});
    return sc;
  }

  // One thread under the reject policy: the program waits for retirement
  // before any submission that could conflict with work in flight, so
  // only the one deliberate conflict may be rejected: no false conflict
  // (disjoint slices, reads, one stream, retired leases), shadow contents.
  json make_reject(int steps) {
    reject_ = true;
    return make(steps);
  }

  // Two or three threads of `steps` steps each, over their own handles and
  // launching also on buffers and a tensor the main steps made (shared,
  // never viewed, converted or dropped by a thread, so every step stays
  // valid whatever the interleaving). Threads and streams cross freely:
  // the order policy must keep the sim free of violations.
  json make_threaded(int steps) {
    json sc = header();
    json main = json::array();
    for (int i = 0; i < 2; ++i) alloc(main);
    (void)make_tensor(main, 16, 16, 0);
    main.push_back({{"op", "wait"}, {"all", true}});
    for (Handle& h : live_) h.shared = true;
    const std::vector<Handle> shared = live_;
    threaded_ = true;
    json threads = json::object();
    const std::size_t count = 2 + below(2);
    for (std::size_t t = 0; t < count; ++t) {
      futures_.clear();
      json body = json::array();
      for (int i = 0; i < steps; ++i) step(body);
      threads[named_thread(t)] = body;
      live_ = shared;
    }
    sc["steps"] = main;
    sc["threads"] = threads;
    return sc;
  }

 private:
  template <class T>
  T pick(std::initializer_list<T> options) {
    return *(options.begin() + static_cast<std::ptrdiff_t>(rng_() % options.size()));
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  json header() {
    json sc = {{"format", "tandem.scenario/1"},
               {"name", "program-fuzz-" + std::to_string(seed_)},
               {"description",
                "generated by tests/scenario/program_generator.hpp from seed " + std::to_string(seed_)},
               {"backend", "sim"},
               {"conflict_policy", reject_ ? "reject" : "order"}};
    json streams = json::array();
    json delays = json::object();
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      streams.push_back(json{{"name", streams_[i]}, {"device", stream_device_[i]}});
      if (i != 0) delays[streams_[i]] = pick<int>({0, 20, 200});  // the first stream runs at device speed
    }
    sc["streams"] = streams;
    sc["sim"] = {{"stream_delay_us", delays}};
    return sc;
  }
  std::string fresh() { return named('h'); }
  static std::string named_thread(std::size_t t) {
    std::string name = "w";  // not "w" + to_string: g++ 12 -O3 warns (-Wrestrict) on that inlined
    name += std::to_string(t);
    return name;
  }
  std::string named(char prefix) {
    std::string name(1, prefix);
    name += std::to_string(next_name_++);
    return name;
  }
  std::string stream() { return streams_[below(streams_.size())]; }
  int device_of_stream(const std::string& s) const {
    return stream_device_[static_cast<std::size_t>(std::find(streams_.begin(), streams_.end(), s) -
                                                   streams_.begin())];
  }
  int device_of(const Handle& h) const { return alloc_device_[h.alloc]; }
  // A stream of `device`, other than `not_this` where the device has another.
  std::string stream_on(int device, const std::string& not_this = {}) {
    std::vector<std::string> on;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (stream_device_[i] == device && streams_[i] != not_this) on.push_back(streams_[i]);
    }
    return on[below(on.size())];
  }
  bool unique(std::size_t alloc) const { return views_[alloc] == 1 && graph_refs_[alloc] == 0; }

  // Launch operands may be shared handles; views, conversions, drops and
  // checks (`owned_only`) touch only the current thread's own.
  std::vector<std::size_t> live_of(bool tensor, bool owned_only = false) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < live_.size(); ++i) {
      if (live_[i].tensor == tensor && !(owned_only && live_[i].shared)) out.push_back(i);
    }
    return out;
  }
  std::vector<std::size_t> owned() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < live_.size(); ++i) {
      if (!live_[i].shared) out.push_back(i);
    }
    return out;
  }
  // `count` live handles of one kind with equal element counts (tensors:
  // equal shapes), each on a different allocation, on `device` (< 0: any
  // device, for copies); empty if there are none.
  std::vector<std::size_t> matching(bool tensor, std::size_t count, int device = -1) {
    std::vector<std::size_t> all;
    for (std::size_t i : live_of(tensor)) {
      if (device < 0 || device_of(live_[i]) == device) all.push_back(i);
    }
    std::shuffle(all.begin(), all.end(), rng_);
    for (std::size_t first : all) {
      std::vector<std::size_t> got{first};
      for (std::size_t j : all) {
        if (got.size() == count) break;
        const Handle &a = live_[first], &b = live_[j];
        const bool same_shape = a.len == b.len && a.rows == b.rows && a.cols == b.cols;
        const bool other_alloc =
            std::none_of(got.begin(), got.end(), [&](std::size_t g) { return live_[g].alloc == b.alloc; });
        if (same_shape && other_alloc) got.push_back(j);
      }
      if (got.size() == count) return got;
    }
    return {};
  }

  json shadow_check(const Handle& h) const {
    return {{"op", "check"}, {"what", "contents"}, {"of", h.name}, {"equals", "shadow"}};
  }

  // Could `acc` on stream `s` conflict with a lease that may still be held?
  // (runtime.md §4: overlapping, another stream, a write among the two.)
  bool conflicts(const std::vector<Access>& acc, const std::string& s) const {
    for (const Access& a : acc) {
      for (const auto& [p, ps] : pending_) {
        if (ps != s && p.alloc == a.alloc && (a.write || p.write) && a.lo < p.hi && p.lo < a.hi) return true;
      }
    }
    return false;
  }

  // Emits a submission. Under the reject policy a submission that could
  // conflict with work not yet proven retired is preceded by `wait all`, so
  // no step of a generated program is rejected unless it says so. The model
  // forgets a lease only where retirement is certain (wait all, retire);
  // kept longer, it only adds waits.
  void submit(json& body, json step, const std::string& s, const std::vector<Access>& acc) {
    if (reject_ && conflicts(acc, s)) settled(body);
    body.push_back(std::move(step));
    for (const Access& a : acc) {
      if (a.lo < a.hi) pending_.emplace_back(a, s);
    }
  }
  void settled(json& body) {
    body.push_back({{"op", "wait"}, {"all", true}});
    pending_.clear();
  }

  void step(json& body) {
    if (reject_ && !rejected_ && below(30) == 0) return rejected(body);
    if (two_devices_ && below(6) == 0) return cross_copy(body);
    switch (below(21)) {
      case 0:
      case 1:
        return alloc(body);
      case 2:
        return slice(body);
      case 3:
        return split_or_peel(body);
      case 4:
      case 5:
        return simt(body);
      case 6:
        return below(3) == 0 ? declared(body) : simt(body);
      case 7:
      case 8:
        return tile(body);
      case 9:
        return to_tensor(body);
      case 10:
        return from_tensor(body);
      case 11:
        return sub_tensor(body);
      case 12:
        return transfer(body);
      case 13:
        return drop(body);
      case 14:
        return graph(body);
      case 15:
        return future(body);
      case 16:
        return loop(body);
      case 17:
        return wait(body);
      case 18:
        return borrowed(body);
      default:
        return check(body);
    }
  }

  // Under reject, once per program, after a wait for everything: work held
  // in flight for 300 ms on one stream and, right after it on another
  // stream, a use of the same memory that must be rejected with `conflict`
  // and change nothing, or a read beside a read that must not be
  // (runtime.md §3, §4). The pair is one of: a write of a buffer and a fill
  // of it; a write and a read of only its last element (a lease must cover
  // it); a write through an atomic view and a plain read (atomic accesses
  // count as writes); a write of one half of a buffer and of the other (no
  // conflict), then of the first; a read through a peel and a read of its
  // buffer (a peel of a plain view shares reads), then a write of the peel.
  void rejected(json& body) {
    const std::vector<std::size_t> bufs = live_of(false);
    if (bufs.empty()) return alloc(body);
    const Handle h = live_[bufs[below(bufs.size())]];
    const std::string held = stream_on(device_of(h));
    const std::string other = stream_on(device_of(h), held);
    settled(body);
    rejected_ = true;
    // The checksums' u32 results, one per stream, outside the model.
    const std::string sum = fresh(), sum_other = fresh();
    for (const auto& [id, s] : {std::pair{sum, held}, std::pair{sum_other, other}}) {
      body.push_back(
          {{"op", "alloc"}, {"id", id}, {"dtype", "u32"}, {"len", 1}, {"init", "zero"}, {"stream", s}});
      ++driver_allocs_;
    }
    auto spin = [&](const std::string& x) {
      return json{{"op", "launch"}, {"model", "simt"},    {"kernel", "spin"},
                  {"stream", held}, {"args", {{"x", x}}}, {"scalars", {{"ns", 300'000'000}}}};
    };
    auto checksum = [&](const std::string& x, const std::string& s) {
      return json{{"op", "launch"},
                  {"model", "simt"},
                  {"kernel", "checksum"},
                  {"stream", s},
                  {"args", {{"x", x}, {"out", s == held ? sum : sum_other}}}};
    };
    auto fill = [&](const std::string& x) {
      return json{{"op", "launch"},  {"model", "simt"},      {"kernel", "fill"},
                  {"stream", other}, {"args", {{"out", x}}}, {"scalars", {{"value", 9}}}};
    };
    auto conflict = [](json step) {
      step["expect_error"] = "conflict";
      return step;
    };
    const std::string v = fresh();  // a peel or an atomic view of h, dropped at the end
    switch (h.len < 2 ? 0 : below(5)) {
      case 0:
        submit(body, spin(h.name), held, {write_of(h)});
        body.push_back(conflict(fill(h.name)));
        break;
      case 1:
        submit(body, spin(h.name), held, {write_of(h)});
        body.push_back({{"op", "peel"}, {"id", v}, {"of", h.name}, {"index", h.len - 1}});
        body.push_back(conflict(checksum(v, other)));
        body.push_back({{"op", "drop"}, {"id", v}});
        break;
      case 2:
        body.push_back({{"op", "atomic"}, {"id", v}, {"of", h.name}});
        submit(body, spin(v), held, {write_of(h)});
        body.push_back(conflict(checksum(h.name, other)));
        body.push_back({{"op", "drop"}, {"id", v}});
        break;
      case 3: {
        // Two halves of a fresh buffer: a write of the second beside held
        // work on the first is not a conflict (a lease covers its own
        // elements only), a write of the first is.
        Handle whole = alloc_buffer(body, pick<std::uint32_t>({16, 64}), device_of(h));
        settled(body);
        const std::uint32_t at = whole.len / 2;
        Handle a{fresh(), whole.alloc, false, at}, b{fresh(), whole.alloc, false, whole.len - at};
        b.offset = at;
        body.push_back({{"op", "split"}, {"of", whole.name}, {"at", at}, {"ids", {a.name, b.name}}});
        ++views_[whole.alloc];
        live_.back() = a;
        live_.push_back(b);
        submit(body, spin(a.name), held, {write_of(a)});
        submit(body, fill(b.name), other, {write_of(b)});
        body.push_back(conflict(fill(a.name)));
        break;
      }
      default: {
        const std::uint32_t index = static_cast<std::uint32_t>(below(h.len));
        Handle p = h;
        p.offset = h.offset + index;
        p.len = 1;
        p.strided_span = 0;
        body.push_back(spin(sum));
        body.push_back({{"op", "peel"}, {"id", v}, {"of", h.name}, {"index", index}});
        submit(body, checksum(v, held), held, {read_of(p)});
        submit(body, checksum(h.name, other), other, {read_of(h)});
        body.push_back(conflict(fill(v)));
        body.push_back({{"op", "drop"}, {"id", v}});
      }
    }
    body.push_back({{"op", "drop"}, {"id", sum}});
    body.push_back({{"op", "drop"}, {"id", sum_other}});
  }

  // A buffer of `want` elements (0: a random length) on `device` (< 0: a
  // random stream's).
  void alloc(json& body) {
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
  Handle alloc_buffer(json& body, std::uint32_t want = 0, int device = -1) {
    const std::uint32_t len = want ? want : pick<std::uint32_t>({16, 64, 256, 1024});
    const json init = pick<json>({"zero", "iota", json{{"fill", 3}}, json{{"random", rng_() % 1000}}});
    Handle h{fresh(), views_.size(), false, len};
    views_.push_back(1);
    graph_refs_.push_back(0);
    const std::string s = device < 0 ? stream() : stream_on(device);
    alloc_device_.push_back(device_of_stream(s));
    ++driver_allocs_;
    submit(body,
           {{"op", "alloc"}, {"id", h.name}, {"dtype", "f32"}, {"len", len}, {"init", init}, {"stream", s}},
           s, {write_of(h)});
    live_.push_back(h);
    return h;
  }

  // Two devices: a copy from a buffer of one device into one of the other
  // (made if there is none of that length), on a stream of either side.
  void cross_copy(json& body) {
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

  void slice(json& body) {
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

  // A launch of a kernel outside the catalog, as a recording writes it:
  // 1-3 buffers of distinct allocations, each read, written, read-written
  // or atomically updated (leased as a write). No body: the shadow model
  // sees no effect, the leases are the point.
  void declared(json& body) {
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
    json step = {
        {"op", "declared_launch"}, {"kernel", "fuzz_declared"}, {"stream", s}, {"accesses", accesses}};
    submit(body, step, s, acc);
  }

  // In a loop body (`loop_stream`) only the launch itself, on that stream,
  // appended to `loop_acc` for the loop to submit: no future kept and no
  // allocation made instead, so the model does not change.
  void simt(json& body, const std::string* loop_stream = nullptr, std::vector<Access>* loop_acc = nullptr) {
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

  // split consumes its source and yields two disjoint views (one more view
  // in all); peel adds a one-element view.
  void split_or_peel(json& body) {
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

  // A counted sub-view of a tensor: its top-left quarter, strided unless it
  // is a single row.
  void sub_tensor(json& body) {
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

  // A kept launch future is waited for, dropped or forgotten: none of it
  // changes the submission's leases.
  void future(json& body) {
    if (futures_.empty()) return simt(body);
    const std::size_t i = below(futures_.size());
    body.push_back(
        {{"op", pick<std::string>({"wait", "drop", kForget ? "forget" : "drop"})}, {"id", futures_[i]}});
    futures_.erase(futures_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  // Launches repeated by a loop, on one stream (under reject, launches of
  // two streams could conflict with each other's earlier rounds):
  // handle-neutral, so the model is unchanged.
  void loop(json& body) {
    const std::string s = stream();
    json inner = json::array();
    std::vector<Access> acc;
    for (int k = 0; k < 2; ++k) simt(inner, &s, &acc);
    if (inner.empty()) return wait(body);
    submit(body, {{"op", "loop"}, {"count", 1 + below(3)}, {"steps", inner}}, s, acc);
  }

  // A Tile launch on a random live tensor; the other operands are live
  // tensors of the shape the kernel needs on other allocations, or made
  // for it (a fresh buffer turned into a tensor).
  void tile(json& body) {
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

  Handle make_tensor(json& body, std::uint32_t rows, std::uint32_t cols, int device) {
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

  // A buffer becomes a tensor (moving its view) when the allocation is
  // unique; otherwise the step must fail with `aliased` and leave it usable.
  void to_tensor(json& body) {
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

  // A tensor goes back into a buffer (unique) or lends a borrowed buffer view.
  void from_tensor(json& body) {
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

  void transfer(json& body) {
    switch (below(3)) {
      case 0: {
        const std::vector<std::size_t> got = matching(false, 2);
        if (got.empty()) return alloc(body);
        // Between devices (peer access is on): a stream of either side.
        const std::string s = stream_on(device_of(live_[got[below(2)]]));
        submit(body,
               {{"op", "copy"}, {"src", live_[got[0]].name}, {"dst", live_[got[1]].name}, {"stream", s}}, s,
               {read_of(live_[got[0]]), write_of(live_[got[1]])});
        return;
      }
      case 1: {
        const std::vector<std::size_t> bufs = live_of(false);
        if (bufs.empty()) return alloc(body);
        const Handle& h = live_[bufs[below(bufs.size())]];
        const std::string s = stream_on(device_of(h));
        submit(body,
               {{"op", "upload"}, {"buf", h.name}, {"stream", s}, {"from", {{"fill", pick<int>({4, -3})}}}},
               s, {write_of(h)});
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

  void drop(json& body) {
    const std::vector<std::size_t> mine = owned();
    if (mine.empty()) return alloc(body);
    const std::size_t i = mine[below(mine.size())];
    --views_[live_[i].alloc];
    body.push_back({{"op", "drop"}, {"id", live_[i].name}});
    live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  // Capture a scale of a buffer, replay it, or drop a graph. A dropped graph
  // releases its references only when its replays retire (runtime.md §8),
  // so the program waits for retirement before the model forgets them.
  void graph(json& body) {
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

  // Interop (runtime.md §2): a driver stream made outside the runtime is
  // borrowed and joins the streams every later step picks from, or one is
  // dropped (its work may be in flight: its leases must still be honoured,
  // and the runtime must leave the driver stream alive for the run to
  // destroy); or a borrowed context gets a borrowed stream and a buffer of
  // its own, the context and stream dropped with work in flight. Not in
  // threaded programs (another thread may be using the stream), on two
  // devices, or before an oom program's failing allocation.
  void borrowed(json& body) {
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
  void borrowed_context(json& body) {
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

  void wait(json& body) {
    if (below(3) == 0) {
      settled(body);
    } else {
      body.push_back({{"op", "wait"}, {"stream", stream()}});
    }
  }

  // Threads check uniqueness only: the shadow model needs one program order.
  void check(json& body) {
    const std::vector<std::size_t> mine = owned();
    if (mine.empty()) return alloc(body);
    const Handle& h = live_[mine[below(mine.size())]];
    if (threaded_ || below(3) == 0) {
      body.push_back({{"op", "check"}, {"what", "unique"}, {"of", h.name}, {"value", unique(h.alloc)}});
    } else {
      body.push_back(shadow_check(h));
    }
  }

  std::mt19937_64 rng_;
  std::uint64_t seed_;
  std::vector<std::string> streams_{"s0", "s1", "s2"};
  std::vector<int> stream_device_{0, 0, 0};
  std::vector<int> alloc_device_;  // per allocation
  std::vector<Handle> live_;
  std::vector<int> views_;       // per allocation
  std::vector<int> graph_refs_;  // per allocation
  std::vector<Graph> graphs_;
  std::vector<std::string> borrowed_;  // borrowed streams not yet dropped (also in streams_)
  std::vector<std::string> futures_;   // kept launch futures not yet waited, dropped or forgotten
  std::map<std::string, std::vector<std::size_t>> launch_allocs_;  // launches with an id: their allocations
  std::size_t oom_at_ = 0;           // make_oom: which plain alloc step fails (1-based; 0: none)
  std::size_t plain_allocs_ = 0;     // alloc steps asked for so far
  std::uint64_t driver_allocs_ = 0;  // driver allocations the program has made so far
  std::uint64_t oom_nth_ = 0;        // the failing one's number, for the sim's alloc_fail
  bool threaded_ = false;
  bool reject_ = false;                                  // the reject policy (make_reject)
  bool two_devices_ = false;                             // make_two_devices
  bool rejected_ = false;                                // the one deliberate conflict is made
  std::vector<std::pair<Access, std::string>> pending_;  // leases that may still be held, and their streams
  int next_name_ = 0;
};

}  // namespace tandem::scenario::test
