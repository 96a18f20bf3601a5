// Scenario loader: JSON parse (bounded) + whole-document validation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "tandem/dtype.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/scenario/loader.hpp"
#include "tandem/scenario/validation_report.hpp"

namespace tandem::scenario {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t kMaxLen = std::uint64_t{1} << 40;
constexpr std::uint64_t kMaxRepeat = 1'000'000;
constexpr std::uint64_t kMaxLoop = 10'000'000;
constexpr std::uint64_t kMaxSleepUs = 60'000'000;
constexpr std::uint64_t kMaxTimeoutMs = 3'600'000;
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;
constexpr std::uint64_t kMaxDevice = 1024;
constexpr std::uint64_t kMaxExpect = std::uint64_t{1} << 40;
constexpr std::size_t kMaxInlineValues = 1u << 20;

const char* const kErrorCodes[] = {"aliased", "non_contiguous", "conflict", "out_of_range",
                                   "device_mismatch", "invalid_dtype", "out_of_memory",
                                   "invalid_handle", "driver", "timeout", "unsupported"};

struct ParseAbort {
  std::string path, message;
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// " (did you mean 'x'?)" when a candidate is close enough, else "".
std::string did_you_mean(std::string_view got, const std::vector<std::string>& candidates) {
  if (got.size() > 64) return "";
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(got, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, got.size() / 3);
  if (best.empty() || best_d > limit) {
    // A prefix of a known name ("memory" -> "memory_bytes") is a good hint too.
    if (got.size() >= 3)
      for (const auto& c : candidates)
        if (c.size() > got.size() && c.compare(0, got.size(), got) == 0) return " (did you mean '" + c + "'?)";
    return "";
  }
  return " (did you mean '" + best + "'?)";
}

std::string list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string describe(const json& j) {
  std::string kind;
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case json::value_t::string: kind = "string "; break;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: kind = "number "; break;
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    default: return "a value";
  }
  std::string d = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (d.size() > 48) d = d.substr(0, 45) + "...";
  return kind + d;
}

// Parser messages may quote raw input bytes: keep messages printable ASCII.
std::string sanitize(std::string_view in) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

class Validator {
 public:
  explicit Validator(std::string file) : file_(std::move(file)) {}

  std::vector<Diagnostic> diags;

  void error(const std::string& path, const std::string& msg) {
    if (diags.size() < kMaxDiagnostics) diags.push_back({file_, path, msg});
  }
  void expected(const std::string& path, const std::string& what, const json& found) {
    error(path, "expected " + what + ", found " + describe(found));
  }
  [[nodiscard]] bool full() const { return diags.size() >= kMaxDiagnostics; }

  Scenario run(const json& doc) {
    Scenario s;
    s.file = file_;
    if (!doc.is_object()) {
      expected("", "a JSON object at the top level", doc);
      return s;
    }
    static const std::vector<std::string> top = {"format", "name", "description", "backend", "device",
                                                 "conflict_policy", "streams", "repeat", "steps",
                                                 "threads", "expect", "sim"};
    for (const auto& [k, v] : doc.items()) {
      if (std::find(top.begin(), top.end(), k) == top.end())
        error(k, "unknown top-level key '" + k + "'" + did_you_mean(k, top) + "; expected one of " +
                     list(top));
    }
    // streams first: steps refer to them.
    if (auto it = doc.find("streams"); it != doc.end()) {
      if (!it->is_array()) {
        expected("streams", "an array of stream names", *it);
      } else {
        std::set<std::string> seen;
        for (std::size_t i = 0; i < it->size(); ++i) {
          const std::string p = "streams[" + std::to_string(i) + "]";
          std::string n;
          std::optional<std::uint32_t> dev;
          if (stream_entry((*it)[i], p, n, dev)) {
            if (!seen.insert(n).second) {
              error(p, "duplicate stream name '" + n + "'");
            } else {
              s.streams.push_back(n);
              if (dev) explicit_stream_devices_[n] = *dev;
            }
          }
        }
      }
    }
    streams_ = s.streams;
    if (auto it = doc.find("format"); it == doc.end()) {
      error("format", "missing required key 'format' (expected \"tandem.scenario/1\")");
    } else if (!it->is_string() || it->get<std::string>() != "tandem.scenario/1") {
      expected("format", "exactly \"tandem.scenario/1\"", *it);
    } else {
      s.format = it->get<std::string>();
    }
    if (auto it = doc.find("name"); it != doc.end()) str(*it, "name", s.name);
    if (auto it = doc.find("description"); it != doc.end()) str(*it, "description", s.description);
    if (auto it = doc.find("backend"); it != doc.end()) {
      std::string b;
      if (enum_str(*it, "backend", {"auto", "cuda", "sim"}, b))
        s.backend = b == "auto" ? Backend::automatic : b == "cuda" ? Backend::cuda : Backend::sim;
    }
    if (auto it = doc.find("device"); it != doc.end()) {
      std::uint64_t d = 0;
      if (uint_in(*it, "device", 0, kMaxDevice, d)) s.device = static_cast<std::uint32_t>(d);
    }
    s.devices.insert(s.device);
    for (const std::string& n : s.streams) {
      auto d = explicit_stream_devices_.find(n);
      s.stream_devices[n] = d == explicit_stream_devices_.end() ? s.device : d->second;
      s.devices.insert(s.stream_devices[n]);
    }
    if (auto it = doc.find("conflict_policy"); it != doc.end()) {
      std::string c;
      if (enum_str(*it, "conflict_policy", {"order", "reject"}, c))
        s.conflict_policy = c == "order" ? ConflictPolicy::order : ConflictPolicy::reject;
    }
    if (auto it = doc.find("repeat"); it != doc.end()) uint_in(*it, "repeat", 1, kMaxRepeat, s.repeat);
    if (auto it = doc.find("steps"); it != doc.end()) s.steps = steps(*it, "steps", 0);
    if (auto it = doc.find("threads"); it != doc.end()) {
      if (!it->is_object()) {
        expected("threads", "an object mapping thread names to step arrays", *it);
      } else {
        for (const auto& [k, v] : it->items()) {
          const std::string p = "threads." + k;
          if (k.empty()) error(p, "thread names must be non-empty");
          s.threads[k] = steps(v, p, 0);
        }
      }
    }
    if (auto it = doc.find("expect"); it != doc.end()) expectations(*it, s.expect);
    if (auto it = doc.find("sim"); it != doc.end()) sim(*it, s.sim);
    s.devices.insert(step_devices_.begin(), step_devices_.end());
    // Faults name launch/replay ids anywhere in the file.
    for (const auto& [path, sub] : fault_refs_) {
      if (std::find(submission_ids_.begin(), submission_ids_.end(), sub) == submission_ids_.end())
        error(path, "expected the id of a launch or replay step, found '" + sub + "'" +
                        did_you_mean(sub, submission_ids_));
    }
    return s;
  }

 private:
  std::string file_;
  std::vector<std::string> streams_;
  std::vector<std::string> submission_ids_;
  std::vector<std::pair<std::string, std::string>> fault_refs_;
  std::map<std::string, std::uint32_t> explicit_stream_devices_;  // object-form streams
  std::set<std::uint32_t> step_devices_;  // named by peer_access and vram steps

  // A `streams` entry: a plain name, or {"name": n, "device": d} (extension).
  bool stream_entry(const json& j, const std::string& p, std::string& name, std::optional<std::uint32_t>& dev) {
    if (!j.is_object()) return name_str(j, p, name);
    static const std::vector<std::string> keys = {"name", "device"};
    for (const auto& [k, v] : j.items()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        error(p + "." + k, "unknown stream field '" + k + "'" + did_you_mean(k, keys) + "; expected " + list(keys));
    }
    bool ok = true;
    if (auto it = j.find("name"); it == j.end()) {
      error(p + ".name", "missing required field 'name' of a stream object");
      ok = false;
    } else {
      ok = name_str(*it, p + ".name", name);
    }
    if (auto it = j.find("device"); it != j.end()) {
      std::uint64_t d = 0;
      if (uint_in(*it, p + ".device", 0, kMaxDevice, d)) dev = static_cast<std::uint32_t>(d);
      else ok = false;
    }
    return ok;
  }

  bool str(const json& j, const std::string& p, std::string& out) {
    if (!j.is_string()) {
      expected(p, "a string", j);
      return false;
    }
    out = j.get<std::string>();
    return true;
  }
  bool name_str(const json& j, const std::string& p, std::string& out) {
    if (!j.is_string() || j.get_ref<const std::string&>().empty()) {
      expected(p, "a non-empty name string", j);
      return false;
    }
    out = j.get<std::string>();
    return true;
  }
  bool enum_str(const json& j, const std::string& p, const std::vector<std::string>& allowed,
                std::string& out) {
    if (j.is_string()) {
      const auto& v = j.get_ref<const std::string&>();
      if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) {
        out = v;
        return true;
      }
      error(p, "expected one of " + list(allowed) + ", found '" + v + "'" + did_you_mean(v, allowed));
      return false;
    }
    expected(p, "one of " + list(allowed), j);
    return false;
  }
  bool uint_in(const json& j, const std::string& p, std::uint64_t lo, std::uint64_t hi,
               std::uint64_t& out) {
    const std::string want =
        "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (j.is_number_unsigned()) {
      const auto v = j.get<std::uint64_t>();
      if (v >= lo && v <= hi) {
        out = v;
        return true;
      }
    } else if (j.is_number_integer()) {
      // negative
    } else if (j.is_number_float()) {
      const double d = j.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(lo) &&
          d <= static_cast<double>(hi)) {
        out = static_cast<std::uint64_t>(d);
        return true;
      }
    }
    expected(p, want, j);
    return false;
  }
  bool number(const json& j, const std::string& p, double& out) {
    if (j.is_number()) {
      const double d = j.get<double>();
      if (std::isfinite(d)) {
        out = d;
        return true;
      }
    }
    expected(p, "a finite number", j);
    return false;
  }
  bool boolean(const json& j, const std::string& p, bool& out) {
    if (!j.is_boolean()) {
      expected(p, "true or false", j);
      return false;
    }
    out = j.get<bool>();
    return true;
  }
  bool stream_name(const json& j, const std::string& p, std::optional<std::string>& out) {
    std::string n;
    if (!name_str(j, p, n)) return false;
    if (std::find(streams_.begin(), streams_.end(), n) == streams_.end()) {
      error(p, "unknown stream '" + n + "'" + did_you_mean(n, streams_) +
                   "; declared streams: [" + list(streams_) + "]");
      return false;
    }
    out = n;
    return true;
  }
  bool dims_list(const json& j, const std::string& p, std::size_t min_rank, std::size_t max_rank,
                 std::int64_t lo, std::vector<std::int64_t>& out) {
    const std::string want = "an array of " + std::to_string(min_rank) + " to " +
                             std::to_string(max_rank) + " integers >= " + std::to_string(lo);
    if (!j.is_array() || j.size() < min_rank || j.size() > max_rank) {
      expected(p, want, j);
      return false;
    }
    out.clear();
    bool ok = true;
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::uint64_t v = 0;
      if (uint_in(j[i], p + "[" + std::to_string(i) + "]", static_cast<std::uint64_t>(lo), kMaxLen, v))
        out.push_back(static_cast<std::int64_t>(v));
      else
        ok = false;
    }
    return ok;
  }
  bool dim3(const json& j, const std::string& p, std::optional<std::array<std::uint32_t, 3>>& out) {
    std::array<std::uint32_t, 3> d = {1, 1, 1};
    if (j.is_number()) {
      std::uint64_t v = 0;
      if (!uint_in(j, p, 1, 0xffffffffu, v)) return false;
      d[0] = static_cast<std::uint32_t>(v);
    } else {
      std::vector<std::int64_t> v;
      if (!dims_list(j, p, 1, 3, 1, v)) return false;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] > 0xffffffffLL) {
          expected(p + "[" + std::to_string(i) + "]", "an integer in [1, 4294967295]", j[i]);
          return false;
        }
        d[i] = static_cast<std::uint32_t>(v[i]);
      }
    }
    out = d;
    return true;
  }
  bool values_array(const json& j, const std::string& p, ValueForm& out) {
    if (j.size() > kMaxInlineValues) {
      error(p, "too many inline values (" + std::to_string(j.size()) + "; at most " +
                   std::to_string(kMaxInlineValues) + ")");
      return false;
    }
    out.kind = ValueForm::Kind::values;
    bool ok = true;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::string q = p + "[" + std::to_string(i) + "]";
      if (j[i].is_boolean()) {
        out.values.push_back(j[i].get<bool>() ? 1.0 : 0.0);
      } else {
        double d = 0;
        if (number(j[i], q, d)) out.values.push_back(d);
        else ok = false;
      }
    }
    return ok;
  }
  bool iota_obj(const json& j, const std::string& p, ValueForm& out) {
    out.kind = ValueForm::Kind::iota;
    if (!j.is_object()) {
      expected(p, "an object {\"start\": s, \"step\": d}", j);
      return false;
    }
    bool ok = true;
    for (const auto& [k, v] : j.items()) {
      if (k == "start") ok &= number(v, p + ".start", out.iota_start);
      else if (k == "step") ok &= number(v, p + ".step", out.iota_step);
      else {
        error(p + "." + k, "unknown iota field '" + k + "'" + did_you_mean(k, {"start", "step"}) +
                               "; expected start, step");
        ok = false;
      }
    }
    return ok;
  }
  // kinds: bitmask of accepted forms.
  enum Form : unsigned { F_NONE = 1, F_ZERO = 2, F_IOTA_STR = 4, F_FILL = 8, F_RANDOM = 16,
                         F_IOTA_OBJ = 32, F_VALUES = 64, F_SHADOW = 128 };
  bool value_form(const json& j, const std::string& p, unsigned forms, const std::string& want,
                  ValueForm& out) {
    if (j.is_string()) {
      const auto& s = j.get_ref<const std::string&>();
      if (s == "none" && (forms & F_NONE)) { out.kind = ValueForm::Kind::none; return true; }
      if (s == "zero" && (forms & F_ZERO)) { out.kind = ValueForm::Kind::zero; return true; }
      if (s == "iota" && (forms & F_IOTA_STR)) { out.kind = ValueForm::Kind::iota; return true; }
      if (s == "shadow" && (forms & F_SHADOW)) { out.kind = ValueForm::Kind::shadow; return true; }
    } else if (j.is_array() && (forms & F_VALUES)) {
      return values_array(j, p, out);
    } else if (j.is_object() && j.size() == 1) {
      const auto first = j.begin();
      const std::string& k = first.key();
      const json& v = first.value();
      if (k == "fill" && (forms & F_FILL)) {
        out.kind = ValueForm::Kind::fill;
        if (v.is_boolean()) { out.fill = v.get<bool>() ? 1.0 : 0.0; return true; }
        return number(v, p + ".fill", out.fill);
      }
      if (k == "random" && (forms & F_RANDOM)) {
        out.kind = ValueForm::Kind::random;
        return uint_in(v, p + ".random", 0, std::numeric_limits<std::uint64_t>::max(), out.seed);
      }
      if (k == "iota" && (forms & F_IOTA_OBJ)) return iota_obj(v, p + ".iota", out);
    }
    expected(p, want, j);
    return false;
  }

  // `len`: an element count; for alloc also {"fraction_of_free": f} (an
  // extension). Any other form keeps the integer's message unchanged.
  void len(const json& j, const std::string& p, Step& s) {
    if (!j.is_object() || (s.op != Op::alloc && !j.contains("fraction_of_free"))) {
      uint_in(j, p, 0, kMaxLen, s.len);
      return;
    }
    if (s.op != Op::alloc) {
      expected(p, std::string("an integer in [0, ") + std::to_string(kMaxLen) + "] (the {\"fraction_of_free\": f} form is for alloc only)", j);
      return;
    }
    static const std::vector<std::string> keys = {"fraction_of_free"};
    for (const auto& [k, v] : j.items()) {
      if (k != keys[0])
        error(p + "." + k, "unknown len field '" + k + "'" + did_you_mean(k, keys) + "; expected fraction_of_free");
    }
    const auto it = j.find("fraction_of_free");
    if (it == j.end()) {
      error(p + ".fraction_of_free", "missing required field 'fraction_of_free' of a len object, e.g. {\"fraction_of_free\": 0.6}");
      return;
    }
    if (it->is_number()) {
      const double f = it->get<double>();
      if (std::isfinite(f) && f > 0 && f <= 1) {
        s.len_fraction_of_free = f;
        return;
      }
    }
    expected(p + ".fraction_of_free", "a number in (0, 1] (a fraction of the device's free memory)", *it);
  }

  struct OpSpec {
    Op op;
    const char* name;
    std::vector<std::string> required;
    std::vector<std::string> optional;
  };
  static const std::vector<OpSpec>& op_specs() {
    static const std::vector<OpSpec> specs = {
        {Op::alloc, "alloc", {"id", "dtype", "len"}, {"init", "stream"}},
        {Op::foreign, "foreign", {"id", "dtype", "len"}, {"init", "stream"}},
        {Op::slice, "slice", {"id", "of", "offset", "len"}, {}},
        {Op::split, "split", {"of", "at", "ids"}, {}},
        {Op::peel, "peel", {"id", "of", "index"}, {}},
        {Op::atomic, "atomic", {"id", "of"}, {}},
        {Op::to_tensor, "to_tensor", {"id", "from", "shape"}, {}},
        {Op::tensor_view, "tensor_view", {"id", "of"}, {"shape", "slice"}},
        {Op::as_buffer, "as_buffer", {"id", "of"}, {}},
        {Op::into_buffer, "into_buffer", {"id", "from"}, {}},
        {Op::reinterpret, "reinterpret", {"id", "from", "dtype"}, {}},
        {Op::launch, "launch", {"model", "kernel", "stream", "args"}, {"id", "scalars", "grid", "block", "tile"}},
        {Op::copy, "copy", {"src", "dst", "stream"}, {"id"}},
        {Op::upload, "upload", {"buf", "stream", "from"}, {"id"}},
        {Op::download, "download", {"buf", "stream"}, {"id"}},
        {Op::capture, "capture", {"graph", "stream", "steps"}, {}},
        {Op::replay, "replay", {"graph", "stream"}, {"id"}},
        {Op::drop, "drop", {"id"}, {}},
        {Op::forget, "forget", {"id"}, {}},
        {Op::wait, "wait", {}, {"id", "stream", "all"}},
        {Op::retire, "retire", {}, {"timeout_ms"}},
        {Op::check, "check", {"what"}, {"of", "value", "a", "b", "equals"}},
        {Op::vram, "vram", {}, {"mark", "check", "tolerance_bytes", "device"}},
        {Op::loop, "loop", {"count", "steps"}, {}},
        {Op::sleep, "sleep", {"us"}, {}},
        {Op::peer_access, "peer_access", {"devices"}, {}},
    };
    return specs;
  }

  std::vector<Step> steps(const json& j, const std::string& p, int depth) {
    std::vector<Step> out;
    if (!j.is_array()) {
      expected(p, "an array of steps", j);
      return out;
    }
    for (std::size_t i = 0; i < j.size() && !full(); ++i) {
      Step s;
      if (step(j[i], p + "[" + std::to_string(i) + "]", depth, s)) out.push_back(std::move(s));
    }
    return out;
  }

  bool step(const json& j, const std::string& p, int depth, Step& s) {
    s.path = p;
    if (!j.is_object()) {
      expected(p, "a step object {\"op\": ...}", j);
      return false;
    }
    const auto opit = j.find("op");
    std::vector<std::string> op_names;
    for (const auto& sp : op_specs()) op_names.emplace_back(sp.name);
    if (opit == j.end()) {
      error(p + ".op", "missing required field 'op'; expected one of " + list(op_names));
      return false;
    }
    if (!opit->is_string()) {
      expected(p + ".op", "an op name string", *opit);
      return false;
    }
    const auto& opn = opit->get_ref<const std::string&>();
    const OpSpec* spec = nullptr;
    for (const auto& sp : op_specs())
      if (opn == sp.name) spec = &sp;
    if (spec == nullptr) {
      error(p + ".op", "unknown op '" + opn + "'" + did_you_mean(opn, op_names) + "; expected one of " +
                           list(op_names));
      return false;
    }
    s.op = spec->op;
    const std::size_t before = diags.size();
    std::vector<std::string> allowed = {"op", "expect_error"};
    allowed.insert(allowed.end(), spec->required.begin(), spec->required.end());
    allowed.insert(allowed.end(), spec->optional.begin(), spec->optional.end());
    for (const auto& [k, v] : j.items()) {
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        error(p + "." + k, "unknown field '" + k + "' for op '" + opn + "'" + did_you_mean(k, allowed) +
                               "; expected " + list(allowed));
    }
    for (const auto& r : spec->required)
      if (!j.contains(r)) error(p + "." + r, "missing required field '" + r + "' for op '" + opn + "'");

    if (auto it = j.find("expect_error"); it != j.end()) {
      std::vector<std::string> codes(std::begin(kErrorCodes), std::end(kErrorCodes));
      std::string c;
      if (enum_str(*it, p + ".expect_error", codes, c)) s.expect_error = c;
    }
    auto handle = [&](const char* key, std::string& out) {
      if (auto it = j.find(key); it != j.end()) name_str(*it, p + "." + key, out);
    };
    handle("id", s.id);
    handle("of", s.of);
    if (s.op != Op::upload) handle("from", s.from);
    handle("src", s.src);
    handle("dst", s.dst);
    handle("buf", s.buf);
    handle("graph", s.graph);
    if (auto it = j.find("stream"); it != j.end()) stream_name(*it, p + ".stream", s.stream);
    if (auto it = j.find("dtype"); it != j.end()) {
      if (!it->is_string()) {
        expected(p + ".dtype", "a dtype name (f32, i32, u32, u8, bool, ...)", *it);
      } else if (auto d = dtype_from_name(it->get_ref<const std::string&>())) {
        s.dtype = *d;
      } else {
        std::vector<std::string> names;
        for (DType t : kAllDTypes) names.emplace_back(dtype_name(t));
        const auto& n = it->get_ref<const std::string&>();
        error(p + ".dtype", "unknown dtype '" + n + "'" + did_you_mean(n, names) + "; expected one of " +
                                list(names));
      }
    }
    if (auto it = j.find("len"); it != j.end()) len(*it, p + ".len", s);
    if (auto it = j.find("offset"); it != j.end()) uint_in(*it, p + ".offset", 0, kMaxLen, s.offset);
    if (auto it = j.find("at"); it != j.end()) uint_in(*it, p + ".at", 0, kMaxLen, s.at);
    if (auto it = j.find("index"); it != j.end()) uint_in(*it, p + ".index", 0, kMaxLen, s.index);
    if (auto it = j.find("ids"); it != j.end()) {
      if (!it->is_array() || it->size() != 2) {
        expected(p + ".ids", "an array of two handle names [a, b]", *it);
      } else {
        for (std::size_t i = 0; i < 2; ++i) {
          std::string n;
          if (name_str((*it)[i], p + ".ids[" + std::to_string(i) + "]", n)) s.ids.push_back(n);
        }
      }
    }
    if (auto it = j.find("init"); it != j.end())
      value_form(*it, p + ".init", F_NONE | F_ZERO | F_IOTA_STR | F_FILL | F_RANDOM,
                 "\"none\", \"zero\", \"iota\", {\"fill\": v} or {\"random\": seed}", s.init);
    if (s.op == Op::upload) {
      if (auto it = j.find("from"); it != j.end())
        value_form(*it, p + ".from", F_FILL | F_IOTA_OBJ | F_VALUES,
                   "{\"fill\": v}, {\"iota\": {...}} or an array of values", s.init);
    }
    if (auto it = j.find("shape"); it != j.end()) dims_list(*it, p + ".shape", 1, 4, 0, s.shape);
    if (auto it = j.find("slice"); it != j.end()) {
      if (!it->is_array() || it->empty() || it->size() > 4) {
        expected(p + ".slice", "an array of 1 to 4 [begin, end) pairs", *it);
      } else {
        for (std::size_t i = 0; i < it->size(); ++i) {
          const std::string q = p + ".slice[" + std::to_string(i) + "]";
          std::vector<std::int64_t> be;
          if (!dims_list((*it)[i], q, 2, 2, 0, be)) continue;
          if (be[0] > be[1]) {
            error(q, "expected begin <= end, found [" + std::to_string(be[0]) + ", " +
                         std::to_string(be[1]) + "]");
            continue;
          }
          s.slice.emplace_back(be[0], be[1]);
        }
      }
    }
    if (s.op == Op::launch) launch(j, p, s);
    if (s.op == Op::capture || s.op == Op::loop) {
      if (auto it = j.find("steps"); it != j.end()) {
        if (depth + 1 > kMaxStepNesting)
          error(p + ".steps", "capture/loop nesting deeper than " + std::to_string(kMaxStepNesting));
        else
          s.steps = steps(*it, p + ".steps", depth + 1);
      }
    }
    if (s.op == Op::replay && !s.id.empty()) submission_ids_.push_back(s.id);
    if (auto it = j.find("count"); it != j.end()) uint_in(*it, p + ".count", 0, kMaxLoop, s.count);
    if (auto it = j.find("us"); it != j.end()) uint_in(*it, p + ".us", 0, kMaxSleepUs, s.us);
    if (auto it = j.find("timeout_ms"); it != j.end()) {
      std::uint64_t t = 0;
      if (uint_in(*it, p + ".timeout_ms", 0, kMaxTimeoutMs, t)) s.timeout_ms = t;
    }
    if (s.op == Op::wait) {
      int n = 0;
      if (j.contains("id")) ++n;
      if (j.contains("stream")) ++n;
      if (auto it = j.find("all"); it != j.end()) {
        ++n;
        if (!it->is_boolean() || !it->get<bool>()) expected(p + ".all", "true", *it);
        else s.wait_all = true;
      }
      if (n != 1) error(p, "wait takes exactly one of 'id', 'stream' or \"all\": true; found " + std::to_string(n));
    }
    if (s.op == Op::vram) {
      const bool m = j.contains("mark"), c = j.contains("check");
      bool v = false;
      if (m && boolean(j.at("mark"), p + ".mark", v) && !v) expected(p + ".mark", "true", j.at("mark"));
      if (c && boolean(j.at("check"), p + ".check", v) && !v) expected(p + ".check", "true", j.at("check"));
      if (m == c) error(p, "vram takes exactly one of \"mark\": true or \"check\": true");
      if (m && j.contains("tolerance_bytes"))
        error(p + ".tolerance_bytes", "tolerance_bytes goes with \"check\", not \"mark\"");
      if (auto it = j.find("tolerance_bytes"); it != j.end())
        uint_in(*it, p + ".tolerance_bytes", 0, kMaxBytes, s.tolerance_bytes);
      s.vram_mark = m;
      if (auto it = j.find("device"); it != j.end()) {
        std::uint64_t d = 0;
        if (uint_in(*it, p + ".device", 0, kMaxDevice, d)) {
          s.device = static_cast<std::uint32_t>(d);
          step_devices_.insert(*s.device);
        }
      }
    }
    if (s.op == Op::peer_access) peer_access(j, p, s);
    if (s.op == Op::check) check(j, p, s);
    return diags.size() == before;
  }

  // {"op": "peer_access", "devices": [a, b]}: two distinct device ordinals.
  void peer_access(const json& j, const std::string& p, Step& s) {
    auto it = j.find("devices");
    if (it == j.end()) return;  // reported as a missing required field
    if (!it->is_array() || it->size() != 2) {
      expected(p + ".devices", "an array of two device ordinals, e.g. [0, 1]", *it);
      return;
    }
    bool ok = true;
    for (std::size_t i = 0; i < 2; ++i) {
      std::uint64_t d = 0;
      if (uint_in((*it)[i], p + ".devices[" + std::to_string(i) + "]", 0, kMaxDevice, d))
        s.peer_devices[i] = static_cast<std::uint32_t>(d);
      else ok = false;
    }
    if (!ok) return;
    if (s.peer_devices[0] == s.peer_devices[1]) {
      error(p + ".devices", "peer access is between two different devices; found device " +
                                std::to_string(s.peer_devices[0]) + " twice");
      return;
    }
    step_devices_.insert(s.peer_devices.begin(), s.peer_devices.end());
  }

  void check(const json& j, const std::string& p, Step& s) {
    static const std::vector<std::string> whats = {"unique", "views", "live_allocations", "pending",
                                                   "freed", "owner_released", "same_allocation",
                                                   "contents"};
    std::string w;
    const auto wit = j.find("what");
    if (wit == j.end() || !enum_str(*wit, p + ".what", whats, w)) return;
    // fields each form takes (besides op, what, expect_error)
    std::vector<std::string> fields;
    enum { kBool, kInt, kEquals } val = kBool;
    if (w == "unique") { s.what = CheckWhat::unique; fields = {"of", "value"}; }
    else if (w == "views") { s.what = CheckWhat::views; fields = {"of", "value"}; val = kInt; }
    else if (w == "live_allocations") { s.what = CheckWhat::live_allocations; fields = {"value"}; val = kInt; }
    else if (w == "pending") { s.what = CheckWhat::pending; fields = {"value"}; val = kInt; }
    else if (w == "freed") { s.what = CheckWhat::freed; fields = {"of", "value"}; }
    else if (w == "owner_released") { s.what = CheckWhat::owner_released; fields = {"of", "value"}; }
    else if (w == "same_allocation") { s.what = CheckWhat::same_allocation; fields = {"a", "b", "value"}; }
    else { s.what = CheckWhat::contents; fields = {"of", "equals"}; val = kEquals; }
    for (const char* k : {"of", "value", "a", "b", "equals"}) {
      const bool want = std::find(fields.begin(), fields.end(), k) != fields.end();
      const bool has = j.contains(k);
      if (want && !has) error(p + "." + k, std::string("missing required field '") + k + "' for check '" + w + "'");
      if (!want && has) error(p + "." + k, std::string("unexpected field '") + k + "' for check '" + w +
                                               "'; expected " + list(fields));
    }
    if (j.contains("a")) name_str(j.at("a"), p + ".a", s.a);
    if (j.contains("b")) name_str(j.at("b"), p + ".b", s.b);
    if (auto it = j.find("value"); it != j.end()) {
      if (val == kBool) boolean(*it, p + ".value", s.bool_value);
      else if (val == kInt) uint_in(*it, p + ".value", 0, kMaxExpect, s.int_value);
    }
    if (auto it = j.find("equals"); it != j.end() && val == kEquals)
      value_form(*it, p + ".equals", F_FILL | F_IOTA_OBJ | F_VALUES | F_SHADOW,
                 "{\"fill\": v}, {\"iota\": {\"start\": s, \"step\": d}}, an array of values or \"shadow\"",
                 s.equals);
  }

  void launch(const json& j, const std::string& p, Step& s) {
    if (!s.id.empty()) submission_ids_.push_back(s.id);
    std::string m;
    bool have_model = false;
    if (auto it = j.find("model"); it != j.end() && enum_str(*it, p + ".model", {"simt", "tile"}, m)) {
      s.model = m == "simt" ? kernels::Model::simt : kernels::Model::tile;
      have_model = true;
    }
    std::span<const kernels::ParamSpec> params;
    bool have_kernel = false;
    if (auto it = j.find("kernel"); it != j.end() && name_str(*it, p + ".kernel", s.kernel) && have_model) {
      params = kernels::kernel_params(s.model, s.kernel);
      if (params.empty()) {
        const auto near = kernels::suggest(s.model, s.kernel, 3);
        std::string hint;
        if (!near.empty()) hint = " (did you mean '" + near.front() + "'?)";
        error(p + ".kernel", "unknown " + m + " kernel '" + s.kernel + "'" + hint + "; known: " +
                                 list(kernels::kernel_names(s.model)));
      } else {
        have_kernel = true;
      }
    }
    std::vector<std::string> views, scalars;
    for (const auto& ps : params)
      (ps.kind == kernels::ArgKind::view ? views : scalars).emplace_back(ps.name);
    if (auto it = j.find("args"); it != j.end()) {
      if (!it->is_object()) {
        expected(p + ".args", "an object {param: handle}", *it);
      } else {
        for (const auto& [k, v] : it->items()) {
          const std::string q = p + ".args." + k;
          std::string h;
          if (!name_str(v, q, h)) continue;
          if (have_kernel && std::find(views.begin(), views.end(), k) == views.end()) {
            error(q, "kernel '" + s.kernel + "' has no view parameter '" + k + "'" + did_you_mean(k, views) +
                         "; expected " + list(views));
            continue;
          }
          s.args[k] = h;
        }
        if (have_kernel)
          for (const auto& v : views)
            if (!it->contains(v)) error(p + ".args." + v, "missing argument '" + v + "' of kernel '" + s.kernel + "'");
      }
    }
    if (auto it = j.find("scalars"); it != j.end()) {
      if (!it->is_object()) {
        expected(p + ".scalars", "an object {param: number}", *it);
      } else {
        for (const auto& [k, v] : it->items()) {
          const std::string q = p + ".scalars." + k;
          double d = 0;
          if (!number(v, q, d)) continue;
          if (have_kernel && std::find(scalars.begin(), scalars.end(), k) == scalars.end()) {
            error(q, "kernel '" + s.kernel + "' has no scalar parameter '" + k + "'" + did_you_mean(k, scalars) +
                         (scalars.empty() ? std::string("; it takes no scalars") : "; expected " + list(scalars)));
            continue;
          }
          s.scalars[k] = d;
        }
      }
    }
    if (have_kernel)
      for (const auto& ps : params)
        if (ps.kind == kernels::ArgKind::scalar && !ps.default_value && !s.scalars.contains(ps.name))
          error(p + ".scalars." + ps.name, std::string("missing scalar '") + ps.name + "' of kernel '" + s.kernel +
                                               "' (it has no default)");
    const bool tile = have_model && s.model == kernels::Model::tile;
    for (const char* k : {"grid", "block"}) {
      if (auto it = j.find(k); it != j.end()) {
        if (tile) error(p + "." + k, std::string("'") + k + "' is for simt launches; tile launches take 'tile'");
        else dim3(*it, p + "." + k, std::string(k) == "grid" ? s.grid : s.block);
      }
    }
    if (auto it = j.find("tile"); it != j.end()) {
      if (have_model && !tile) {
        error(p + ".tile", "'tile' is for tile launches; simt launches take 'grid'/'block'");
      } else if (it->is_number()) {
        std::uint64_t v = 0;
        if (uint_in(*it, p + ".tile", 1, kMaxLen, v)) s.tile = {static_cast<std::int64_t>(v)};
      } else {
        dims_list(*it, p + ".tile", 1, 2, 1, s.tile);
      }
    }
  }

  void expectations(const json& j, Expectations& e) {
    if (!j.is_object()) {
      expected("expect", "an object", j);
      return;
    }
    static const std::vector<std::string> keys = {"live_allocations", "quarantined_allocations",
                                                  "foreign_owners_unreleased", "violations",
                                                  "uniqueness_failures"};
    for (const auto& [k, v] : j.items()) {
      const std::string p = "expect." + k;
      if (k == keys[0]) uint_in(v, p, 0, kMaxExpect, e.live_allocations);
      else if (k == keys[1]) uint_in(v, p, 0, kMaxExpect, e.quarantined_allocations);
      else if (k == keys[2]) uint_in(v, p, 0, kMaxExpect, e.foreign_owners_unreleased);
      else if (k == keys[3]) uint_in(v, p, 0, kMaxExpect, e.violations);
      else if (k == keys[4]) uint_in(v, p, 0, kMaxExpect, e.uniqueness_failures);
      else error(p, "unknown expect key '" + k + "'" + did_you_mean(k, keys) + "; expected " + list(keys));
    }
  }

  void sim(const json& j, SimSettings& out) {
    if (!j.is_object()) {
      expected("sim", "an object", j);
      return;
    }
    static const std::vector<std::string> keys = {"memory_bytes", "stream_delay_us", "faults"};
    for (const auto& [k, v] : j.items()) {
      const std::string p = "sim." + k;
      if (k == "memory_bytes") {
        uint_in(v, p, 1, kMaxBytes, out.memory_bytes);
      } else if (k == "stream_delay_us") {
        if (!v.is_object()) {
          expected(p, "an object {stream: microseconds}", v);
          continue;
        }
        for (const auto& [sn, us] : v.items()) {
          const std::string q = p + "." + sn;
          if (std::find(streams_.begin(), streams_.end(), sn) == streams_.end()) {
            error(q, "unknown stream '" + sn + "'" + did_you_mean(sn, streams_) + "; declared streams: [" +
                         list(streams_) + "]");
            continue;
          }
          std::uint64_t d = 0;
          if (uint_in(us, q, 0, kMaxSleepUs, d)) out.stream_delay_us[sn] = d;
        }
      } else if (k == "faults") {
        if (!v.is_array()) {
          expected(p, "an array of fault objects", v);
          continue;
        }
        for (std::size_t i = 0; i < v.size(); ++i) fault(v[i], p + "[" + std::to_string(i) + "]", out);
      } else {
        error(p, "unknown sim key '" + k + "'" + did_you_mean(k, keys) + "; expected " + list(keys));
      }
    }
  }

  void fault(const json& j, const std::string& p, SimSettings& out) {
    if (!j.is_object()) {
      expected(p, "a fault object {\"kind\": ...}", j);
      return;
    }
    SimFault f;
    std::string kind;
    auto it = j.find("kind");
    if (it == j.end()) {
      error(p + ".kind", "missing required field 'kind' (completion_unknown or alloc_fail)");
      return;
    }
    if (!enum_str(*it, p + ".kind", {"completion_unknown", "alloc_fail"}, kind)) return;
    const std::string field = kind == "completion_unknown" ? "submission" : "nth";
    for (const auto& [k, v] : j.items())
      if (k != "kind" && k != field)
        error(p + "." + k, "unknown field '" + k + "' for fault '" + kind + "'" + did_you_mean(k, {field}) +
                               "; expected kind, " + field);
    auto fv = j.find(field);
    if (fv == j.end()) {
      error(p + "." + field, "missing required field '" + field + "' for fault '" + kind + "'");
      return;
    }
    if (kind == "completion_unknown") {
      f.kind = SimFault::Kind::completion_unknown;
      if (!name_str(*fv, p + ".submission", f.submission)) return;
      fault_refs_.emplace_back(p + ".submission", f.submission);
    } else {
      f.kind = SimFault::Kind::alloc_fail;
      if (!uint_in(*fv, p + ".nth", 1, kMaxExpect, f.nth)) return;
    }
    out.faults.push_back(f);
  }
};

// Parse with a depth limit; duplicate keys are rejected.
json parse_bounded(std::string_view text, const std::string& file) {
  std::vector<std::set<std::string>> keys;
  std::vector<std::string> where;  // for error paths (best effort)
  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
    if (depth > kMaxJsonDepth)
      throw ParseAbort{"", "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
    switch (ev) {
      case json::parse_event_t::object_start: keys.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() && !keys.back().insert(parsed.get<std::string>()).second)
          throw ParseAbort{parsed.get<std::string>(), "duplicate key '" + parsed.get<std::string>() + "'"};
        break;
      default: break;
    }
    return true;
  };
  (void)file;
  return json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
}

}  // namespace

Scenario load_text(std::string_view text, const std::string& file_label) {
  if (text.size() > kMaxFileBytes)
    throw ScenarioError({{file_label, "", "file too large (" + std::to_string(text.size()) +
                                              " bytes; at most " + std::to_string(kMaxFileBytes) + ")"}});
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw ScenarioError({{file_label, "", "empty file: expected a JSON object"}});
  json doc;
  try {
    doc = parse_bounded(text, file_label);
  } catch (const ParseAbort& a) {
    throw ScenarioError({{file_label, a.path, "invalid JSON: " + sanitize(a.message)}});
  } catch (const json::exception& e) {
    throw ScenarioError({{file_label, "", "invalid JSON (expected UTF-8 JSON text): " + sanitize(e.what())}});
  }
  Validator v(file_label);
  Scenario s = v.run(doc);
  if (!v.diags.empty()) throw ScenarioError(std::move(v.diags));
  return s;
}

Scenario load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError({{path, "", "cannot open file"}});
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      throw ScenarioError({{path, "", "file too large (more than " + std::to_string(kMaxFileBytes) + " bytes)"}});
  }
  if (in.bad()) throw ScenarioError({{path, "", "read error"}});
  return load_text(text, path);
}

std::string ValidationReport::message() const {
  std::string s;
  for (const auto& d : errors) s += d.to_string() + "\n";
  return s;
}

namespace {
template <class F>
ValidationReport report_of(F&& f) {
  ValidationReport r;
  try {
    (void)f();
    r.ok = true;
    r.exit_code = 0;
  } catch (const ScenarioError& e) {
    r.errors = e.diagnostics();
  }
  return r;
}
}  // namespace

ValidationReport validate_file(const std::string& path) {
  return report_of([&] { return load(path); });
}
ValidationReport validate_text(const std::string& text, const std::string& file_label) {
  return report_of([&] { return load_text(text, file_label); });
}

}  // namespace tandem::scenario
