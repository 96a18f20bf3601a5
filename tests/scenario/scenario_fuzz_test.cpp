// SPDX-License-Identifier: Apache-2.0
// Bounded random-mutation test: the loader returns (ok or error) on every
// mutated input, never crashes or hangs. TANDEM_FUZZ_SCALE multiplies the
// number of mutations (default 1 -> 100,000 in total).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "scenario/scenario_test_util.hpp"
#include "tandem/scenario/validation_report.hpp"

namespace ts = tandem::scenario;

namespace {

double fuzz_scale() {
  const char* s = std::getenv("TANDEM_FUZZ_SCALE");
  if (s == nullptr) return 1.0;
  const double v = std::atof(s);
  return v > 0 ? v : 1.0;
}

const char* const kTokens[] = {
    "{",       "}",      "[",         "]",        ",",          ":",      "\"",
    "null",    "true",   "false",     "-1",       "0",          "1e999",  "18446744073709551616",
    "-0.5",    "\"op\"", "\"steps\"", "\"loop\"", "\"stream\"", "\"s0\"", "\"f32\"",
    "\\u0000", "\xff",   "\"\""};

nlohmann::json random_value(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return -static_cast<std::int64_t>(rng() % 1000);
    case 3:
      return rng();
    case 4:
      return 1.5e300;
    case 5:
      return "s" + std::to_string(rng() % 3);
    case 6:
      return nlohmann::json::array({1, "x"});
    default:
      return nlohmann::json::object({{"op", "sleep"}, {"us", 1}});
  }
}

// Replace one random node of the parsed document with a value of another type.
void swap_type(nlohmann::json& j, std::mt19937_64& rng) {
  nlohmann::json* node = &j;
  for (int depth = 0; depth < 8; ++depth) {
    if ((node->is_object() || node->is_array()) && !node->empty() && rng() % 4 != 0) {
      auto it = node->begin();
      std::advance(it, static_cast<long>(rng() % node->size()));
      node = &*it;
    } else {
      break;
    }
  }
  *node = random_value(rng);
}

std::string mutate(const std::string& in, const nlohmann::json& parsed, std::mt19937_64& rng) {
  std::string s = in;
  switch (rng() % 5) {
    case 0:  // byte flips
      for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n && !s.empty(); ++i) {
        const auto at = rng() % s.size();  // separate statements: a fixed call order on every compiler
        const auto bit = rng() % 8;
        s[at] = static_cast<char>(static_cast<unsigned char>(s[at]) ^ (1u << bit));
      }
      break;
    case 1: {  // delete a range
      if (s.empty()) break;
      const auto at = rng() % s.size();
      s.erase(at, 1 + rng() % 32);
      break;
    }
    case 2: {  // insert JSON tokens
      for (int i = 0, n = 1 + static_cast<int>(rng() % 3); i < n; ++i) {
        const auto at = rng() % (s.size() + 1);
        s.insert(at, kTokens[rng() % std::size(kTokens)]);
      }
      break;
    }
    case 3: {  // duplicate a range (deeper nesting, repeated keys)
      if (s.empty()) break;
      const auto at = rng() % s.size();
      const auto len = std::min<std::size_t>(1 + rng() % 64, s.size() - at);
      const auto to = rng() % (s.size() + 1);
      s.insert(to, s.substr(at, len));
      break;
    }
    default: {  // type swap on parsed values
      nlohmann::json j = parsed;
      for (int i = 0, n = 1 + static_cast<int>(rng() % 3); i < n; ++i) swap_type(j, rng);
      s = j.dump();
      break;
    }
  }
  return s;
}

}  // namespace

TEST(ScenarioFuzz, RandomMutationsNeverCrash) {
  std::vector<std::string> texts;
  std::vector<nlohmann::json> parsed;
  for (const auto& f : ts::test::files_in("valid", ".json")) {
    texts.push_back(ts::test::read_all(f));
    parsed.push_back(nlohmann::json::parse(texts.back()));
  }
  ASSERT_FALSE(texts.empty());
  const auto total = static_cast<std::uint64_t>(100'000 * fuzz_scale());
  std::mt19937_64 rng(0x7a6d656eULL);
  std::uint64_t ok = 0, invalid = 0;
  double worst_ms = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    const std::size_t k = rng() % texts.size();
    // Chain a few mutations now and then.
    std::string s = mutate(texts[k], parsed[k], rng);
    if (rng() % 8 == 0) s = mutate(s, parsed[k], rng);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = ts::validate_text(s, "fuzz.json");
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    worst_ms = std::max(worst_ms, ms);
    ASSERT_LT(ms, 2000.0) << "load took too long on mutation " << i;
    if (r.ok) {
      ++ok;
      ASSERT_TRUE(r.ok);
    } else {
      ++invalid;
      ASSERT_FALSE(r.ok);
      ASSERT_FALSE(r.errors.empty());
    }
  }
  EXPECT_EQ(ok + invalid, total);
  EXPECT_GT(invalid, 0u);
  RecordProperty("ok", static_cast<int>(ok));
  RecordProperty("invalid", static_cast<int>(invalid));
  std::printf("fuzz: %llu mutations, %llu ok, %llu invalid, worst load %.2f ms\n",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(ok),
              static_cast<unsigned long long>(invalid), worst_ms);
}
