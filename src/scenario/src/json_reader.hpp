// SPDX-License-Identifier: Apache-2.0
// json_reader.hpp — reading one scenario document: typed field readers that
// report every problem (file, JSON path, what was expected, what was found)
// instead of stopping at the first, and the scenario-wide names steps refer
// to (declared streams, submission ids, devices).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tandem/scenario/diagnostic.hpp"
#include "tandem/scenario/scenario_error.hpp"
#include "tandem/scenario/step.hpp"

namespace tandem::scenario::detail {

using json = nlohmann::json;

// Bounds of the format (spec/scenario-format.md; larger values are refused).
inline constexpr std::uint64_t kMaxLen = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kMaxRepeat = 1'000'000;
inline constexpr std::uint64_t kMaxLoop = 10'000'000;
inline constexpr std::uint64_t kMaxSleepUs = 60'000'000;
inline constexpr std::uint64_t kMaxTimeoutMs = 3'600'000;
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;
inline constexpr std::uint64_t kMaxDevice = 1024;
inline constexpr std::uint64_t kMaxExpect = std::uint64_t{1} << 40;
inline constexpr std::size_t kMaxInlineValues = 1u << 20;
inline constexpr std::size_t kMaxTextBytes = 4096;  // a text field (note's message)

// " (did you mean 'x'?)" when a candidate is close enough, else "".
[[nodiscard]] std::string did_you_mean(std::string_view got, const std::vector<std::string>& candidates);
// "a, b, c"
[[nodiscard]] std::string list(const std::vector<std::string>& v);
// A found value as an error message quotes it: `string "x"`, `number 3`, `an object`...
[[nodiscard]] std::string describe(const json& j);
// Printable ASCII (parser messages may quote raw input bytes).
[[nodiscard]] std::string sanitize(std::string_view in);

// The forms a value may take (init, upload's from, check's equals), as a mask.
enum ValueFormMask : unsigned {
  F_NONE = 1,
  F_ZERO = 2,
  F_IOTA_STR = 4,
  F_FILL = 8,
  F_RANDOM = 16,
  F_IOTA_OBJ = 32,
  F_VALUES = 64,
  F_SHADOW = 128
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  std::vector<Diagnostic> diags;

  void error(const std::string& path, const std::string& msg) {
    if (diags.size() < kMaxDiagnostics) diags.push_back({file_, path, msg});
  }
  void expected(const std::string& path, const std::string& what, const json& found) {
    error(path, "expected " + what + ", found " + describe(found));
  }
  [[nodiscard]] bool full() const { return diags.size() >= kMaxDiagnostics; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  // Each reader checks one value; false (and a diagnostic) when it is wrong.
  bool str(const json& j, const std::string& p, std::string& out);
  bool name_str(const json& j, const std::string& p, std::string& out);
  bool enum_str(const json& j, const std::string& p, const std::vector<std::string>& allowed,
                std::string& out);
  bool uint_in(const json& j, const std::string& p, std::uint64_t lo, std::uint64_t hi, std::uint64_t& out);
  bool number(const json& j, const std::string& p, double& out);
  bool boolean(const json& j, const std::string& p, bool& out);
  bool stream_name(const json& j, const std::string& p, std::optional<std::string>& out);
  bool dims_list(const json& j, const std::string& p, std::size_t min_rank, std::size_t max_rank,
                 std::int64_t lo, std::vector<std::int64_t>& out);
  bool dim3(const json& j, const std::string& p, std::optional<std::array<std::uint32_t, 3>>& out);
  bool value_form(const json& j, const std::string& p, unsigned forms, const std::string& want,
                  ValueForm& out);

  // What steps refer to across the document.
  std::vector<std::string> streams;                             // declared, in order, then borrowed
  std::vector<std::string> borrowed_streams;                    // named by borrow_stream steps
  std::vector<std::string> submission_ids;                      // launch/replay ids
  std::vector<std::pair<std::string, std::string>> fault_refs;  // (path, id) named by sim faults
  std::set<std::uint32_t> step_devices;                         // named by peer_access and vram

 private:
  bool values_array(const json& j, const std::string& p, ValueForm& out);
  bool iota_obj(const json& j, const std::string& p, ValueForm& out);

  std::string file_;
};

// The steps of `j` (an array) at JSON path `p`, `depth` capture/loop levels down.
[[nodiscard]] std::vector<Step> read_steps(Reader& r, const json& j, const std::string& p, int depth);

}  // namespace tandem::scenario::detail
