// SPDX-License-Identifier: Apache-2.0
// json_reader.cpp — the typed field readers and the message helpers.
#include "json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tandem::scenario::detail {

namespace {

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

}  // namespace

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
        if (c.size() > got.size() && c.compare(0, got.size(), got) == 0)
          return " (did you mean '" + c + "'?)";
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
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return j.get<bool>() ? "true" : "false";
    case json::value_t::string:
      kind = "string ";
      break;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      kind = "number ";
      break;
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    default:
      return "a value";
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

bool Reader::str(const json& j, const std::string& p, std::string& out) {
  if (!j.is_string()) {
    expected(p, "a string", j);
    return false;
  }
  out = j.get<std::string>();
  return true;
}
bool Reader::name_str(const json& j, const std::string& p, std::string& out) {
  if (!j.is_string() || j.get_ref<const std::string&>().empty()) {
    expected(p, "a non-empty name string", j);
    return false;
  }
  out = j.get<std::string>();
  return true;
}
bool Reader::enum_str(const json& j, const std::string& p, const std::vector<std::string>& allowed,
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
bool Reader::uint_in(const json& j, const std::string& p, std::uint64_t lo, std::uint64_t hi,
                     std::uint64_t& out) {
  const std::string want = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
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
bool Reader::number(const json& j, const std::string& p, double& out) {
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
bool Reader::boolean(const json& j, const std::string& p, bool& out) {
  if (!j.is_boolean()) {
    expected(p, "true or false", j);
    return false;
  }
  out = j.get<bool>();
  return true;
}
bool Reader::stream_name(const json& j, const std::string& p, std::optional<std::string>& out) {
  std::string n;
  if (!name_str(j, p, n)) return false;
  if (std::find(streams.begin(), streams.end(), n) == streams.end()) {
    std::vector<std::string> declared;
    for (const std::string& d : streams)
      if (std::find(borrowed_streams.begin(), borrowed_streams.end(), d) == borrowed_streams.end())
        declared.push_back(d);
    error(p, "unknown stream '" + n + "'" + did_you_mean(n, streams) + "; declared streams: [" +
                 list(declared) + "]" +
                 (borrowed_streams.empty() ? "" : "; borrowed streams: [" + list(borrowed_streams) + "]"));
    return false;
  }
  out = n;
  return true;
}
bool Reader::dims_list(const json& j, const std::string& p, std::size_t min_rank, std::size_t max_rank,
                       std::int64_t lo, std::vector<std::int64_t>& out) {
  const std::string want = "an array of " + std::to_string(min_rank) + " to " + std::to_string(max_rank) +
                           " integers >= " + std::to_string(lo);
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
bool Reader::dim3(const json& j, const std::string& p, std::optional<std::array<std::uint32_t, 3>>& out) {
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
bool Reader::values_array(const json& j, const std::string& p, ValueForm& out) {
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
      if (number(j[i], q, d))
        out.values.push_back(d);
      else
        ok = false;
    }
  }
  return ok;
}
bool Reader::iota_obj(const json& j, const std::string& p, ValueForm& out) {
  out.kind = ValueForm::Kind::iota;
  if (!j.is_object()) {
    expected(p, "an object {\"start\": s, \"step\": d}", j);
    return false;
  }
  bool ok = true;
  for (const auto& [k, v] : j.items()) {
    if (k == "start")
      ok &= number(v, p + ".start", out.iota_start);
    else if (k == "step")
      ok &= number(v, p + ".step", out.iota_step);
    else {
      error(p + "." + k,
            "unknown iota field '" + k + "'" + did_you_mean(k, {"start", "step"}) + "; expected start, step");
      ok = false;
    }
  }
  return ok;
}
bool Reader::value_form(const json& j, const std::string& p, unsigned forms, const std::string& want,
                        ValueForm& out) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "none" && (forms & F_NONE)) {
      out.kind = ValueForm::Kind::none;
      return true;
    }
    if (s == "zero" && (forms & F_ZERO)) {
      out.kind = ValueForm::Kind::zero;
      return true;
    }
    if (s == "iota" && (forms & F_IOTA_STR)) {
      out.kind = ValueForm::Kind::iota;
      return true;
    }
    if (s == "shadow" && (forms & F_SHADOW)) {
      out.kind = ValueForm::Kind::shadow;
      return true;
    }
  } else if (j.is_array() && (forms & F_VALUES)) {
    return values_array(j, p, out);
  } else if (j.is_object() && j.size() == 1) {
    const auto first = j.begin();
    const std::string& k = first.key();
    const json& v = first.value();
    if (k == "fill" && (forms & F_FILL)) {
      out.kind = ValueForm::Kind::fill;
      if (v.is_boolean()) {
        out.fill = v.get<bool>() ? 1.0 : 0.0;
        return true;
      }
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

}  // namespace tandem::scenario::detail
