// SPDX-License-Identifier: Apache-2.0
// How a recording writes strings, numbers and device data
// (recorded_values.hpp): each form must read back, as JSON, to what was
// written down.
#include "recorded_values.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace tandem::detail::recorded {
namespace {

template <class T, std::size_t N>
std::span<const std::byte> bytes_of(const std::array<T, N>& a) {
  return std::as_bytes(std::span<const T>(a));
}

TEST(RecordedValues, AQuotedStringReadsBackAsItselfWhateverItHolds) {
  for (const std::string& s :
       {std::string("plain"), std::string("a \"quoted\" name"), std::string("back\\slash"),
        std::string("tab\tand\nnewline"), std::string("\x01")}) {
    const std::string q = json_quoted(s);
    EXPECT_EQ(nlohmann::json::parse(q).get<std::string>(), s) << q;
  }
}

TEST(RecordedValues, ANumberReadsBackExactly) {
  for (const double v :
       {0.0, -0.0, 1.0, 0.1, 1.0 / 3.0, 5e8, -123456789.125, 1e-300, std::numeric_limits<double>::max()}) {
    const std::string t = number(v);
    EXPECT_EQ(nlohmann::json::parse(t).get<double>(), v) << t;
  }
}

TEST(RecordedValues, EqualElementsAreAFillAWholeNumberRunAnIotaAndTheRestAList) {
  const std::array<float, 4> same = {2.5F, 2.5F, 2.5F, 2.5F};
  EXPECT_EQ(nlohmann::json::parse(*values_form(DType::f32, bytes_of(same))), nlohmann::json({{"fill", 2.5}}));
  const std::array<std::int32_t, 4> run = {3, 5, 7, 9};
  EXPECT_EQ(nlohmann::json::parse(*values_form(DType::i32, bytes_of(run))),
            nlohmann::json({{"iota", {{"start", 3}, {"step", 2}}}}));
  const std::array<float, 3> other = {1.0F, 0.5F, 4.0F};
  EXPECT_EQ(nlohmann::json::parse(*values_form(DType::f32, bytes_of(other))),
            nlohmann::json({1.0, 0.5, 4.0}));
  // A size-refused upload keeps its own count, so never a fill.
  EXPECT_EQ(nlohmann::json::parse(*values_list(DType::f32, bytes_of(same))),
            nlohmann::json({2.5, 2.5, 2.5, 2.5}));
}

// tf32 is stored as the f32 it holds, and the scenario engine writes an
// upload of it from numbers (element_codec.cpp): its values are recorded as
// f32's are, rather than left out. The 8-bit and 4-bit float formats have
// no number form, in the engine or here.
TEST(RecordedValues, Tf32ValuesAreRecordedAsTheF32TheyAreStoredAs) {
  const std::array<float, 3> values = {1.0F, 0.5F, -4.25F};
  EXPECT_EQ(nlohmann::json::parse(*values_list(DType::tf32, bytes_of(values))),
            nlohmann::json({1.0, 0.5, -4.25}));
  const std::array<std::uint8_t, 3> fp8 = {1, 2, 3};
  EXPECT_FALSE(values_list(DType::fp8_e4m3, bytes_of(fp8)).has_value());
}

}  // namespace
}  // namespace tandem::detail::recorded
