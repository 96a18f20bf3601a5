// SPDX-License-Identifier: Apache-2.0
// tandem/scenario/shrink.hpp — reduce a failing scenario to a minimal one
// that fails the same way (`tandem shrink`).
//
//   tandem::scenario::ShrinkOptions o;            // sim, seed 0, 2000 runs
//   tandem::scenario::ShrinkResult r = tandem::scenario::shrink(text, o);
//   if (r.status == tandem::scenario::ShrinkStatus::shrunk) write(r.text);
//
// The shrinker works on the JSON document (field order kept), never on the
// typed AST: each candidate is the document with one reduction applied; it
// is loaded (an invalid candidate is skipped, not run, not counted as a run)
// and run, and it is kept when it fails with the original's failure
// signature (below). The passes, repeated until none makes progress:
// `repeat` to 1; delta debugging (ddmin) over every step list (`steps`,
// each thread's, nested `loop`/`capture` bodies); loop `count` to 1 or
// halved, loops of one iteration inlined; threads dropped, or a single
// thread's steps moved into `steps`; declared streams removed (their users
// retargeted to a stream of the same device); alloc/foreign `len` to 1 or
// halved; a view step (slice, peel, atomic, as_buffer, tensor_view) removed,
// its users given its source; optional fields removed (a step's optional fields, e.g. `init` →
// none; top-level `repeat`, `device`, `conflict_policy`; `expect` keys;
// `sim` entries: memory, each stream delay, each fault).
//
// Deterministic: the same text, options and verdicts give the same result;
// the only randomness (the order in which ddmin tries the chunks of a
// partition) comes from `seed`.
//
// Blocking: runs the scenario many times on the calling thread. Never
// throws for anything a scenario does.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tandem/base/backend_kind.hpp"
#include "tandem/scenario/outcome.hpp"

namespace tandem::scenario {

// How a run failed, computed from its report (the first that applies):
//   1. the first failed check recorded by a step (not `expect.*`):
//        kind "check", detail its `what`; for `contents` also "(values
//        differ)" or "(value count differs)"; for `expect_error` also the
//        expected code and what happened ("expected aliased, got success");
//   2. else the first step error: kind "error", detail "CODE at OP"
//        (`errors[0].code`, `errors[0].op`);
//   3. else, when `expect.violations` failed and the sim saw a violation:
//        kind "violation", detail `violations[0].kind`;
//   4. else the first failed `expect.*` check: kind "check", detail e.g.
//        "expect.live_allocations";
//   5. else kind "status", detail the report's status.
// A candidate fails "the same way" when its outcome is the original's and
// its signature is equal.
struct FailureSignature {
  std::string kind;  // check | error | violation | status
  std::string detail;
  [[nodiscard]] std::string text() const { return kind + " " + detail; }
  friend bool operator==(const FailureSignature&, const FailureSignature&) = default;
};

// nullopt when the report's status is "pass".
[[nodiscard]] std::optional<FailureSignature> failure_signature(const nlohmann::ordered_json& report);

// Every step object of a scenario document, nested ones included (a loop
// with two body steps counts 3).
[[nodiscard]] std::size_t count_steps(const nlohmann::ordered_json& doc);

// The document as `tandem shrink` writes it: two-space indentation, one
// step per line (nested bodies indented), other values compact.
[[nodiscard]] std::string format_scenario(const nlohmann::ordered_json& doc);

struct ShrinkProgress {
  std::size_t steps_before = 0;
  std::size_t steps_now = 0;
  std::uint64_t runs = 0;                // scenario runs so far (invalid candidates are not run)
  std::uint64_t invalid_candidates = 0;  // skipped: the loader refused them
  std::string_view pass;                 // the pass now running
  double elapsed_s = 0;
};

struct ShrinkOptions {
  // The backend every run uses; nullopt: the file's own `backend` (what
  // `tandem run` would use).
  std::optional<BackendKind> backend = BackendKind::sim;
  std::uint64_t seed = 0;
  std::uint64_t max_runs = 2000;  // the original's runs included
  double time_limit_s = 600;      // checked between runs
  // Runs per verdict: the original is run until it fails (at most this
  // many times), and a candidate is kept when one of at most this many runs
  // fails the same way (timing-dependent failures).
  unsigned confirm = 1;
  std::string file_label = "<text>";                    // for the loader's messages
  std::function<void(const ShrinkProgress&)> progress;  // after each run; optional
  // Optional: a candidate that fails the same way is kept only if this also
  // holds for its text (`tandem shrink --reference-env`: it passes on a
  // reference, so a reduction cannot keep the failure by breaking the
  // file's own expectations, e.g. an expect_error whose cause was removed).
  std::function<bool(const std::string&)> keep_also;
};

enum class ShrinkStatus : std::uint8_t {
  shrunk,       // `text` holds the smallest failing document found
  invalid,      // the input is not a valid scenario (`message`)
  passes,       // the input does not fail: nothing to shrink
  unavailable,  // the backend (or a device the file needs) is not there
};

struct ShrinkResult {
  ShrinkStatus status = ShrinkStatus::invalid;
  std::string message;              // why it was refused; empty when shrunk
  Outcome outcome = Outcome::pass;  // the original run's
  FailureSignature signature;       // the original run's (when shrunk)
  std::string text;                 // the minimal document, format_scenario()
  std::size_t steps_before = 0, steps_after = 0;
  std::uint64_t runs = 0;                // scenario runs, the original's included
  std::uint64_t invalid_candidates = 0;  // loader-refused candidates (not run)
  std::uint64_t accepted = 0;            // reductions kept
  double seconds = 0;
  std::string stopped_early;  // empty at a fixed point; else which limit stopped it
};

[[nodiscard]] ShrinkResult shrink(std::string_view text, const ShrinkOptions& options);

}  // namespace tandem::scenario
