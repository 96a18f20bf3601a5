// SPDX-License-Identifier: Apache-2.0
// shrink_passes.hpp — the reductions shrink() applies to a scenario
// document (tandem/scenario/shrink.hpp says which and in what order).
// Each pass makes candidates (the document with one change) and keeps the
// first one the test accepts; the reducer repeats the passes until a round
// keeps nothing or the test's budget is spent.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string_view>
#include <vector>

namespace tandem::scenario::detail {

using ojson = nlohmann::ordered_json;
using JsonPtr = ojson::json_pointer;

// The verdict on a candidate: valid and failing the same way. False also
// once the budget is spent (then exhausted() is true and the passes stop).
class CandidateTest {
 public:
  virtual ~CandidateTest() = default;
  virtual bool fails_same_way(const ojson& candidate) = 0;
  [[nodiscard]] virtual bool exhausted() const = 0;
  virtual void pass_started(std::string_view name, const ojson& doc) = 0;
};

// Every step list: `steps`, each thread's, then the nested bodies, in
// document pre-order (a list before the lists nested in it).
[[nodiscard]] std::vector<JsonPtr> step_lists(const ojson& doc);
// Every step object, in the same order.
[[nodiscard]] std::vector<JsonPtr> step_pointers(const ojson& doc);

class Reducer {
 public:
  Reducer(ojson doc, CandidateTest& test, std::uint64_t seed)
      : doc_(std::move(doc)), test_(test), rng_(seed) {}

  // Runs the passes until a whole round keeps nothing (or the budget is spent).
  void run_to_fixed_point();
  [[nodiscard]] const ojson& doc() const noexcept { return doc_; }
  [[nodiscard]] std::uint64_t accepted() const noexcept { return accepted_; }

 private:
  bool attempt(ojson candidate);
  bool stopped() const { return test_.exhausted(); }
  std::vector<std::size_t> permutation(std::size_t n);

  bool pass_repeat();
  bool pass_ddmin();
  bool ddmin(const JsonPtr& list);
  bool pass_loops();
  bool shrink_loop(const JsonPtr& at);
  bool pass_threads();
  bool pass_streams();
  bool pass_buffers();
  bool pass_views();
  bool pass_dependents();
  bool halve_field(const JsonPtr& at, const char* key);
  bool pass_step_fields();
  bool pass_top_fields();
  bool drop_each_entry(const JsonPtr& at);

  ojson doc_;
  CandidateTest& test_;
  std::mt19937_64 rng_;  // its raw output only: the same on every platform
  std::uint64_t accepted_ = 0;
};

}  // namespace tandem::scenario::detail
