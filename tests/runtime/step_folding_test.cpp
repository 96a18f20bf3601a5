// SPDX-License-Identifier: Apache-2.0
// A recording's repeated steps written as loops (step_folding.hpp,
// docs/runtime.md "Recording"): runs of three or more identical blocks
// fold, anything else is left as it was, and unrolling the result gives
// back exactly the steps given.
#include "step_folding.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

namespace tandem::test {
namespace {

using detail::fold_repeats;
using nlohmann::json;

std::string step(char c) { return std::string("{\"op\": \"note\", \"message\": \"") + c + "\"}"; }

std::vector<std::string> steps(const std::string& letters) {
  std::vector<std::string> out;
  for (const char c : letters) out.push_back(step(c));
  return out;
}

// The steps a folded list runs, loops unrolled.
void unroll(const json& list, json& out) {
  for (const json& s : list) {
    if (s.at("op") == "loop") {
      for (int i = 0; i < s.at("count").get<int>(); ++i) unroll(s.at("steps"), out);
    } else {
      out.push_back(s);
    }
  }
}

json parsed(const std::vector<std::string>& list) {
  json out = json::array();
  for (const std::string& s : list) out.push_back(json::parse(s));
  return out;
}

TEST(StepFolding, ThreeOrMoreRepeatsOfABlockBecomeOneLoop) {
  const std::vector<std::string> folded = fold_repeats(steps("abababc"));
  ASSERT_EQ(folded.size(), 2u);
  const json loop = json::parse(folded[0]);
  EXPECT_EQ(loop.at("op"), "loop");
  EXPECT_EQ(loop.at("count"), 3);
  EXPECT_EQ(loop.at("steps"), parsed(steps("ab")));
  EXPECT_EQ(folded[1], step('c'));
}

TEST(StepFolding, TwoRepeatsAreLeftAsTheyAre) { EXPECT_EQ(fold_repeats(steps("aabab")), steps("aabab")); }

TEST(StepFolding, TheShortestBlockWinsAmongThoseCoveringTheSameSteps) {
  const std::vector<std::string> folded = fold_repeats(steps("aaaaaa"));
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(json::parse(folded[0]).at("count"), 6);
  EXPECT_EQ(json::parse(folded[0]).at("steps"), parsed(steps("a")));
}

TEST(StepFolding, UnrollingTheFoldedStepsGivesBackTheStepsGiven) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string letters;
    const int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      // Blocks repeated a few times, among random letters.
      if (rng() % 4 == 0) {
        const std::string block = std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 3));
        for (unsigned k = 0; k < 2 + rng() % 4; ++k) letters += block + static_cast<char>('x' + rng() % 2);
      } else {
        letters += static_cast<char>('a' + rng() % 3);
      }
    }
    json unrolled = json::array();
    unroll(parsed(fold_repeats(steps(letters))), unrolled);
    ASSERT_EQ(unrolled, parsed(steps(letters))) << letters;
  }
}

}  // namespace
}  // namespace tandem::test
