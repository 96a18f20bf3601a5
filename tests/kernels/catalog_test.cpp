// SPDX-License-Identifier: Apache-2.0
// The catalog: the spec table's kernels, lookup, argument checks, launch
// dimensions, symbols and embedded modules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_test_util.hpp"
#include "tandem/kernel_name.hpp"
#include "tandem/kernels/declared.hpp"
#include "tandem/tile/config.hpp"

namespace tandem::kernels::test {
namespace {

using driver::AccessMode;

struct ExpectedParam {
  const char* name;
  ArgKind kind;
  AccessMode mode;  // views
  bool atomic;
  std::optional<DType> fixed;
  std::optional<double> def;  // scalars
};

struct ExpectedKernel {
  Model model;
  const char* name;
  std::vector<ExpectedParam> params;
};

constexpr auto R = AccessMode::read;
constexpr auto W = AccessMode::write;
constexpr auto RW = AccessMode::read_write;
constexpr auto V = ArgKind::view;
constexpr auto S = ArgKind::scalar;

// spec/scenario-format.md §2, the kernel table.
const std::vector<ExpectedKernel>& spec_table() {
  static const std::vector<ExpectedKernel> table = {
      {Model::simt, "fill", {{"out", V, W, false, {}, {}}, {"value", S, R, false, {}, {}}}},
      {Model::simt,
       "iota",
       {{"out", V, W, false, {}, {}}, {"start", S, R, false, {}, 0.0}, {"step", S, R, false, {}, 1.0}}},
      {Model::simt,
       "axpy",
       {{"x", V, R, false, {}, {}}, {"y", V, RW, false, {}, {}}, {"a", S, R, false, {}, {}}}},
      {Model::simt, "scale", {{"x", V, RW, false, {}, {}}, {"a", S, R, false, {}, {}}}},
      {Model::simt, "copy", {{"src", V, R, false, {}, {}}, {"dst", V, W, false, {}, {}}}},
      {Model::simt,
       "add",
       {{"a", V, R, false, {}, {}}, {"b", V, R, false, {}, {}}, {"out", V, W, false, {}, {}}}},
      {Model::simt, "atomic_sum", {{"x", V, R, false, {}, {}}, {"acc", V, RW, true, {}, {}}}},
      {Model::simt,
       "histogram",
       {{"x", V, R, false, {}, {}},
        {"bins", V, RW, true, DType::u32, {}},
        {"lo", S, R, false, {}, {}},
        {"hi", S, R, false, {}, {}}}},
      {Model::simt, "checksum", {{"x", V, R, false, {}, {}}, {"out", V, W, false, DType::u32, {}}}},
      {Model::simt, "spin", {{"x", V, RW, false, {}, {}}, {"ns", S, R, false, {}, {}}}},
      {Model::tile,
       "add",
       {{"a", V, R, false, {}, {}}, {"b", V, R, false, {}, {}}, {"out", V, W, false, {}, {}}}},
      {Model::tile, "scale", {{"x", V, RW, false, {}, {}}, {"a", S, R, false, {}, {}}}},
      {Model::tile, "copy", {{"src", V, R, false, {}, {}}, {"dst", V, W, false, {}, {}}}},
      {Model::tile, "transpose", {{"src", V, R, false, {}, {}}, {"dst", V, W, false, {}, {}}}},
      {Model::tile,
       "matmul",
       {{"a", V, R, false, {}, {}}, {"b", V, R, false, {}, {}}, {"c", V, W, false, {}, {}}}},
      {Model::tile, "row_sum", {{"x", V, R, false, {}, {}}, {"out", V, W, false, {}, {}}}},
  };
  return table;
}

TEST(Catalog, EveryTableKernelExistsForF32WithTheSpecParameters) {
  for (const auto& k : spec_table()) {
    SCOPED_TRACE(std::string(model_name(k.model)) + " " + k.name);
    const KernelEntry* e = find(k.model, k.name, DType::f32);
    ASSERT_NE(e, nullptr);
    EXPECT_STREQ(e->name, k.name);
    EXPECT_EQ(e->model, k.model);
    ASSERT_EQ(e->params.size(), k.params.size());
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      const ParamSpec& p = e->params[i];
      const ExpectedParam& x = k.params[i];
      SCOPED_TRACE(x.name);
      EXPECT_STREQ(p.name, x.name);
      EXPECT_EQ(p.kind, x.kind);
      if (x.kind == V) {
        EXPECT_EQ(p.mode, x.atomic ? AccessMode::atomic : x.mode);
        EXPECT_EQ(p.tracked_mode(), x.atomic ? W : x.mode);
        EXPECT_EQ(p.fixed_dtype, x.fixed);
        EXPECT_EQ(p.rank == 0, k.model == Model::simt);
      } else {
        EXPECT_EQ(p.default_value, x.def);
      }
    }
    EXPECT_NE(std::string_view(e->effect), "");
    EXPECT_EQ(std::string_view(kernel_effect(k.model, k.name)), std::string_view(e->effect));
  }
}

TEST(Catalog, EveryEntryBelongsToATableKernelAndParamsAgreeAcrossDtypes) {
  for (const KernelEntry& e : catalog()) {
    const auto it = std::find_if(spec_table().begin(), spec_table().end(), [&](const ExpectedKernel& k) {
      return k.model == e.model && std::string_view(k.name) == e.name;
    });
    ASSERT_NE(it, spec_table().end()) << e.name;
    const auto ref = kernel_params(e.model, e.name);
    ASSERT_EQ(e.params.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      EXPECT_STREQ(e.params[i].name, ref[i].name);
      EXPECT_EQ(e.params[i].mode, ref[i].mode);
    }
  }
}

TEST(Catalog, DtypeMatrixCoversTheRequiredDtypes) {
  auto has = [](Model m, const char* name, std::initializer_list<DType> dts) {
    for (DType d : dts) EXPECT_NE(find(m, name, d), nullptr) << name << " dtype " << static_cast<int>(d);
  };
  const auto arith = {DType::f32, DType::f64, DType::i32, DType::u32, DType::i64};
  for (const char* k : {"axpy", "scale", "add", "atomic_sum", "histogram"}) has(Model::simt, k, arith);
  for (const char* k : {"fill", "copy", "iota"}) has(Model::simt, k, arith);
  for (const char* k : {"fill", "copy", "iota"}) has(Model::simt, k, {DType::u8});
  for (const char* k : {"fill", "copy"}) has(Model::simt, k, {DType::f16, DType::bf16});
  for (const char* k : {"add", "scale", "copy"})
    has(Model::tile, k, {DType::f32, DType::f64, DType::i32, DType::f16, DType::bf16});
  for (const char* k : {"transpose", "row_sum"}) has(Model::tile, k, {DType::f32, DType::f64, DType::i32});
  EXPECT_EQ(find(Model::tile, "matmul", DType::f64), nullptr);
  EXPECT_EQ(find(Model::simt, "axpy", DType::boolean), nullptr);
}

TEST(Catalog, ChecksumAndSpinAreOneEntryAcceptingAnyDtype) {
  for (const char* name : {"checksum", "spin"}) {
    const KernelEntry* e = find(Model::simt, name, DType::f32);
    ASSERT_NE(e, nullptr);
    EXPECT_FALSE(e->dtype.has_value());
    for (DType d : kAllDTypes) EXPECT_EQ(find(Model::simt, name, d), e);
    EXPECT_TRUE(e->params[0].bytes);
    EXPECT_EQ(std::count_if(catalog().begin(), catalog().end(),
                            [&](const KernelEntry& x) { return std::string_view(x.name) == name; }),
              1);
  }
}

TEST(Catalog, DefaultTilesAre4096ForRank1And64x64ForRank2) {
  for (const char* k : {"add", "scale", "copy"}) {
    const KernelEntry* r1 = find(Model::tile, k, DType::f32, nullptr, 1);
    const KernelEntry* r2 = find(Model::tile, k, DType::f32, nullptr, 2);
    ASSERT_NE(r1, nullptr);
    ASSERT_NE(r2, nullptr);
    EXPECT_EQ(r1->tile, (TileShape{1, {4096, 0}}));
    EXPECT_EQ(r2->tile, (TileShape{2, {64, 64}}));
    EXPECT_TRUE(r1->default_tile && r2->default_tile);
    EXPECT_EQ(find(Model::tile, k, DType::f32), r1);  // rank 0: the lowest rank
    EXPECT_EQ(kernel_tiles(Model::tile, k, DType::f32).size(), 4U);
  }
  for (const char* k : {"transpose", "matmul", "row_sum"}) {
    const KernelEntry* e = find(Model::tile, k, DType::f32);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->tile, (TileShape{2, {64, 64}}));
    EXPECT_EQ(find(Model::tile, k, DType::f32, nullptr, 1), nullptr);
  }
  // exactly one default per kernel, dtype and rank
  for (const KernelEntry& e : catalog()) {
    if (e.model != Model::tile) continue;
    const auto n = std::count_if(catalog().begin(), catalog().end(), [&](const KernelEntry& x) {
      return x.model == Model::tile && std::string_view(x.name) == e.name && x.dtype == e.dtype &&
             x.tile.rank == e.tile.rank && x.default_tile;
    });
    EXPECT_EQ(n, 1) << e.name << " " << to_string(e.tile);
  }
}

TEST(Catalog, FindByExplicitTileAndUnknownNames) {
  const TileShape t32{2, {32, 32}};
  const KernelEntry* e = find(Model::tile, "transpose", DType::f64, &t32);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->tile, t32);
  EXPECT_EQ(e->block_threads, static_cast<std::uint32_t>(tile::threads_for(32, 32)));
  const TileShape t16{2, {16, 16}};
  EXPECT_EQ(find(Model::tile, "transpose", DType::f32, &t16), nullptr);
  EXPECT_EQ(find(Model::simt, "transpose", DType::f32), nullptr);
  EXPECT_EQ(find(Model::tile, "fill", DType::f32), nullptr);
  EXPECT_EQ(find(Model::simt, "nope", DType::f32), nullptr);
  EXPECT_EQ(to_string(t32), "32x32");
  EXPECT_EQ(to_string(TileShape{1, {4096, 0}}), "4096");
}

TEST(Catalog, KernelNamesAndSuggestions) {
  EXPECT_EQ(kernel_names(Model::tile),
            (std::vector<std::string>{"add", "copy", "matmul", "row_sum", "scale", "transpose"}));
  EXPECT_EQ(kernel_names(Model::simt).size(), 10U);
  EXPECT_EQ(suggest(Model::tile, "trasnpose").front(), "transpose");
  EXPECT_EQ(suggest(Model::simt, "atomicsum").front(), "atomic_sum");
  EXPECT_TRUE(suggest(Model::simt, "zzzzzzzzzzzz").empty());
}

TEST(Catalog, ResolveInfersDtypeAndRankFromTheArguments) {
  std::string why;
  const std::vector<ArgShape> axpy = {ArgShape::buffer(DType::f64, 10), ArgShape::buffer(DType::f64, 10),
                                      ArgShape{}};
  const KernelEntry* e = resolve(Model::simt, "axpy", axpy, nullptr, &why);
  ASSERT_NE(e, nullptr) << why;
  EXPECT_EQ(e->dtype, DType::f64);

  // histogram: bins are fixed u32, the dtype comes from x
  const std::vector<ArgShape> hist = {ArgShape::buffer(DType::i32, 10), ArgShape::buffer(DType::u32, 4),
                                      ArgShape{}, ArgShape{}};
  e = resolve(Model::simt, "histogram", hist, nullptr, &why);
  ASSERT_NE(e, nullptr) << why;
  EXPECT_EQ(e->dtype, DType::i32);

  const std::int64_t s2[] = {100, 30};
  const std::int64_t s1[] = {100};
  const auto t2 = ArgShape::tensor(DType::f32, s2);
  const auto t1 = ArgShape::tensor(DType::f32, s1);
  e = resolve(Model::tile, "add", std::vector<ArgShape>{t2, t2, t2}, nullptr, &why);
  ASSERT_NE(e, nullptr) << why;
  EXPECT_EQ(e->tile, (TileShape{2, {64, 64}}));
  e = resolve(Model::tile, "add", std::vector<ArgShape>{t1, t1, t1}, nullptr, &why);
  ASSERT_NE(e, nullptr) << why;
  EXPECT_EQ(e->tile, (TileShape{1, {4096, 0}}));
  const TileShape small{1, {1024, 0}};
  e = resolve(Model::tile, "add", std::vector<ArgShape>{t1, t1, t1}, &small, &why);
  ASSERT_NE(e, nullptr) << why;
  EXPECT_EQ(e->tile, small);
  e = resolve(Model::tile, "row_sum", std::vector<ArgShape>{t2, t1}, nullptr, &why);
  ASSERT_NE(e, nullptr) << why;
}

TEST(Catalog, ResolveExplainsWhatIsMissing) {
  std::string why;
  const std::int64_t s2[] = {8, 8};
  const std::int64_t s1[] = {8};
  const auto d2 = ArgShape::tensor(DType::f64, s2);
  EXPECT_EQ(resolve(Model::tile, "matmul", std::vector<ArgShape>{d2, d2, d2}, nullptr, &why), nullptr);
  EXPECT_NE(why.find("no f64 version"), std::string::npos) << why;
  EXPECT_NE(why.find("f32"), std::string::npos) << why;

  EXPECT_EQ(resolve(Model::tile, "trasnpose", std::vector<ArgShape>{d2, d2}, nullptr, &why), nullptr);
  EXPECT_NE(why.find("did you mean 'transpose'"), std::string::npos) << why;

  const auto f1 = ArgShape::tensor(DType::f32, s1);
  EXPECT_EQ(resolve(Model::tile, "transpose", std::vector<ArgShape>{f1, f1}, nullptr, &why), nullptr);
  EXPECT_NE(why.find("rank 2"), std::string::npos) << why;

  const TileShape t{2, {16, 16}};
  const auto f2 = ArgShape::tensor(DType::f32, s2);
  EXPECT_EQ(resolve(Model::tile, "add", std::vector<ArgShape>{f2, f2, f2}, &t, &why), nullptr);
  EXPECT_NE(why.find("16x16"), std::string::npos) << why;
  EXPECT_NE(why.find("64x64"), std::string::npos) << why;

  EXPECT_EQ(
      resolve(Model::simt, "copy", std::vector<ArgShape>{ArgShape::buffer(DType::f32, 1)}, nullptr, &why),
      nullptr);
  EXPECT_NE(why.find("takes 2 arguments"), std::string::npos) << why;
}

TEST(CheckArgs, RejectsMismatchedLengthsShapesDtypesAndRanks) {
  auto err = [](Model m, const char* name, DType d, std::vector<ArgShape> a, int rank = 0) {
    const KernelEntry* e = find(m, name, d, nullptr, rank);
    EXPECT_NE(e, nullptr);
    return e == nullptr ? std::string("no entry") : check_args(*e, a);
  };
  using A = ArgShape;
  EXPECT_EQ(err(Model::simt, "axpy", DType::f32, {A::buffer(DType::f32, 4), A::buffer(DType::f32, 4), A{}}),
            "");
  EXPECT_NE(err(Model::simt, "axpy", DType::f32, {A::buffer(DType::f32, 4), A::buffer(DType::f32, 5), A{}})
                .find("'y'"),
            std::string::npos);
  EXPECT_NE(err(Model::simt, "copy", DType::f32, {A::buffer(DType::f32, 4), A::buffer(DType::f64, 4)})
                .find("dtype f64"),
            std::string::npos);
  EXPECT_NE(err(Model::simt, "histogram", DType::f32,
                {A::buffer(DType::f32, 4), A::buffer(DType::i32, 4), A{}, A{}})
                .find("expected u32"),
            std::string::npos);
  EXPECT_NE(err(Model::simt, "atomic_sum", DType::f32, {A::buffer(DType::f32, 4), A::buffer(DType::f32, 0)})
                .find("at least one"),
            std::string::npos);
  EXPECT_NE(err(Model::simt, "checksum", DType::f32, {A::buffer(DType::f32, 4), A::buffer(DType::u32, 0)})
                .find("at least one"),
            std::string::npos);
  EXPECT_NE(err(Model::simt, "add", DType::f32, {A::buffer(DType::f32, 4), A::buffer(DType::f32, 4)})
                .find("takes 3"),
            std::string::npos);

  const std::int64_t s35[] = {3, 5}, s53[] = {5, 3}, s34[] = {3, 4}, s3[] = {3}, s4[] = {4};
  const std::int64_t st[] = {1, 3};
  EXPECT_NE(
      err(Model::simt, "scale", DType::f32, {A::tensor(DType::f32, s35), A{}}).find("contiguous buffer"),
      std::string::npos);
  EXPECT_EQ(
      err(Model::tile, "transpose", DType::f32, {A::tensor(DType::f32, s35), A::tensor(DType::f32, s53)}),
      "");
  EXPECT_NE(
      err(Model::tile, "transpose", DType::f32, {A::tensor(DType::f32, s35), A::tensor(DType::f32, s35)})
          .find("[5, 3]"),
      std::string::npos);
  EXPECT_EQ(err(Model::tile, "matmul", DType::f32,
                {A::tensor(DType::f32, s35), A::tensor(DType::f32, s53),
                 A::tensor(DType::f32, std::vector<std::int64_t>{3, 3})}),
            "");
  EXPECT_NE(err(Model::tile, "matmul", DType::f32,
                {A::tensor(DType::f32, s35), A::tensor(DType::f32, s35), A::tensor(DType::f32, s35)})
                .find("columns"),
            std::string::npos);
  EXPECT_NE(err(Model::tile, "add", DType::f32,
                {A::tensor(DType::f32, s35), A::tensor(DType::f32, s34), A::tensor(DType::f32, s35)}, 2)
                .find("'b'"),
            std::string::npos);
  EXPECT_NE(err(Model::tile, "add", DType::f32,
                {A::tensor(DType::f32, s3), A::tensor(DType::f32, s3), A::tensor(DType::f32, s3)}, 2)
                .find("rank-2"),
            std::string::npos);
  EXPECT_EQ(err(Model::tile, "row_sum", DType::f32, {A::tensor(DType::f32, s35), A::tensor(DType::f32, s3)}),
            "");
  EXPECT_NE(err(Model::tile, "row_sum", DType::f32, {A::tensor(DType::f32, s35), A::tensor(DType::f32, s4)})
                .find("rows"),
            std::string::npos);
  // strided views are fine to read and write...
  EXPECT_EQ(err(Model::tile, "copy", DType::f32,
                {A::tensor(DType::f32, s35, st), A::tensor(DType::f32, s35, st)}, 2),
            "");
  // ...but a written view must not overlap itself (stride 0 over an extent > 1)
  const std::int64_t bcast[] = {0, 1};
  EXPECT_EQ(err(Model::tile, "copy", DType::f32,
                {A::tensor(DType::f32, s35, bcast), A::tensor(DType::f32, s35)}, 2),
            "");
  EXPECT_NE(
      err(Model::tile, "copy", DType::f32, {A::tensor(DType::f32, s35), A::tensor(DType::f32, s35, bcast)}, 2)
          .find("stride 0"),
      std::string::npos);
}

TEST(LaunchDims, SimtDefaultRuleIsBlock256AndGridFromTheLargestLengthCapped) {
  driver::LaunchDims d;
  const KernelEntry* fill = find(Model::simt, "fill", DType::f32);
  std::vector<ArgShape> a = {ArgShape::buffer(DType::f32, 1000), ArgShape{}};
  ASSERT_EQ(launch_dims(*fill, a, std::nullopt, std::nullopt, d), "");
  EXPECT_EQ(d.block, (driver::Dim3{256, 1, 1}));
  EXPECT_EQ(d.grid, (driver::Dim3{4, 1, 1}));
  a[0] = ArgShape::buffer(DType::f32, 0);
  ASSERT_EQ(launch_dims(*fill, a, std::nullopt, std::nullopt, d), "");
  EXPECT_EQ(d.grid.x, 1U);  // never a zero grid
  a[0] = ArgShape::buffer(DType::f32, std::uint64_t{1} << 32);
  ASSERT_EQ(launch_dims(*fill, a, std::nullopt, std::nullopt, d), "");
  EXPECT_EQ(d.grid.x, kMaxSimtGrid);

  const KernelEntry* add = find(Model::simt, "add", DType::f32);
  const std::vector<ArgShape> three = {ArgShape::buffer(DType::f32, 1000), ArgShape::buffer(DType::f32, 1000),
                                       ArgShape::buffer(DType::f32, 1000)};
  ASSERT_EQ(launch_dims(*add, three, std::nullopt, driver::Dim3{128, 1, 1}, d), "");
  EXPECT_EQ(d.block.x, 128U);
  EXPECT_EQ(d.grid.x, 8U);
  ASSERT_EQ(launch_dims(*add, three, driver::Dim3{3, 2, 1}, std::nullopt, d), "");
  EXPECT_EQ(d.grid, (driver::Dim3{3, 2, 1}));
  EXPECT_EQ(d.block.x, 256U);
  EXPECT_NE(launch_dims(*add, three, std::nullopt, driver::Dim3{2048, 1, 1}, d), "");
  EXPECT_NE(launch_dims(*add, three, driver::Dim3{0, 1, 1}, std::nullopt, d), "");

  const KernelEntry* sum = find(Model::simt, "atomic_sum", DType::f32);
  const std::vector<ArgShape> big = {ArgShape::buffer(DType::f32, std::uint64_t{1} << 28),
                                     ArgShape::buffer(DType::f32, 1)};
  ASSERT_EQ(launch_dims(*sum, big, std::nullopt, std::nullopt, d), "");
  EXPECT_LE(d.grid.x, 1024U);  // few blocks, few atomics

  const KernelEntry* checksum = find(Model::simt, "checksum", DType::u8);
  ASSERT_EQ(launch_dims(*checksum, big, std::nullopt, std::nullopt, d), "");
  EXPECT_EQ(d.grid.x, 1U);
  EXPECT_EQ(d.block.x, 1024U);
  const KernelEntry* spin = find(Model::simt, "spin", DType::u8);
  ASSERT_EQ(launch_dims(*spin, std::vector<ArgShape>{ArgShape::buffer(DType::u8, 10), ArgShape{}},
                        std::nullopt, std::nullopt, d),
            "");
  EXPECT_EQ(d.grid.x, 1U);
}

TEST(LaunchDims, TileGridIsOneBlockPerTileOfThePartitionTensor) {
  driver::LaunchDims d;
  const std::int64_t s[] = {100, 130};
  const auto t = ArgShape::tensor(DType::f32, s);
  const KernelEntry* add = find(Model::tile, "add", DType::f32, nullptr, 2);
  ASSERT_EQ(launch_dims(*add, std::vector<ArgShape>{t, t, t}, std::nullopt, std::nullopt, d), "");
  EXPECT_EQ(d.grid, (driver::Dim3{2 * 3, 1, 1}));
  EXPECT_EQ(d.block.x, 256U);
  EXPECT_NE(launch_dims(*add, std::vector<ArgShape>{t, t, t}, driver::Dim3{1, 1, 1}, std::nullopt, d), "");

  const std::int64_t n[] = {10000};
  const auto v = ArgShape::tensor(DType::f32, n);
  const KernelEntry* copy1 = find(Model::tile, "copy", DType::f32, nullptr, 1);
  ASSERT_EQ(launch_dims(*copy1, std::vector<ArgShape>{v, v}, std::nullopt, std::nullopt, d), "");
  EXPECT_EQ(d.grid.x, 3U);  // ceil(10000 / 4096)

  // transpose partitions by dst: src 100 x 130 -> dst 130 x 100 -> 3 x 2 tiles of 64x64
  const std::int64_t st[] = {130, 100};
  const KernelEntry* tr = find(Model::tile, "transpose", DType::f32);
  ASSERT_EQ(launch_dims(*tr, std::vector<ArgShape>{t, ArgShape::tensor(DType::f32, st)}, std::nullopt,
                        std::nullopt, d),
            "");
  EXPECT_EQ(d.grid.x, 6U);

  // row_sum partitions by out: 100 rows -> 2 pieces of 64 rows
  const std::int64_t rows[] = {100};
  const KernelEntry* rs = find(Model::tile, "row_sum", DType::f32);
  ASSERT_EQ(launch_dims(*rs, std::vector<ArgShape>{t, ArgShape::tensor(DType::f32, rows)}, std::nullopt,
                        std::nullopt, d),
            "");
  EXPECT_EQ(d.grid.x, 2U);
  EXPECT_EQ(d.block.x, 256U);

  // matmul partitions by c
  const std::int64_t sa[] = {100, 7}, sb[] = {7, 200}, sc[] = {100, 200};
  const KernelEntry* mm = find(Model::tile, "matmul", DType::f32);
  ASSERT_EQ(
      launch_dims(*mm,
                  std::vector<ArgShape>{ArgShape::tensor(DType::f32, sa), ArgShape::tensor(DType::f32, sb),
                                        ArgShape::tensor(DType::f32, sc)},
                  std::nullopt, std::nullopt, d),
      "");
  EXPECT_EQ(d.grid.x, 2U * 4U);

  // empty tensors still get a (do-nothing) block
  const std::int64_t empty[] = {0, 5};
  const auto z = ArgShape::tensor(DType::f32, empty);
  ASSERT_EQ(launch_dims(*add, std::vector<ArgShape>{z, z, z}, std::nullopt, std::nullopt, d), "");
  EXPECT_EQ(d.grid.x, 1U);
}

TEST(Symbols, NamesFollowTheSchemeAndAreUnique) {
  EXPECT_EQ(find(Model::simt, "axpy", DType::f32)->entry_point(), "tandem_simt_axpy_f32");
  EXPECT_EQ(find(Model::simt, "checksum", DType::u8)->entry_point(), "tandem_simt_checksum_any");
  EXPECT_EQ(find(Model::tile, "add", DType::f32, nullptr, 2)->entry_point(), "tandem_tile_add_f32_64x64");
  EXPECT_EQ(find(Model::tile, "add", DType::bf16, nullptr, 1)->entry_point(), "tandem_tile_add_bf16_4096");
  std::set<std::string_view> names;
  for (const KernelEntry& e : catalog()) {
    EXPECT_TRUE(names.insert(e.entry_point()).second) << e.entry_point();
    std::string expect = std::string("tandem_") + std::string(model_name(e.model)) + "_" + e.name + "_";
    EXPECT_EQ(e.entry_point().substr(0, expect.size()), expect);
  }
}

TEST(Symbols, ParameterSlotsMatchTheParameterTypes) {
  for (const KernelEntry& e : catalog()) {
    SCOPED_TRACE(std::string(e.entry_point()));
    const driver::KernelSymbol& s = *e.symbol;
    ASSERT_NE(s.host, nullptr);
    ASSERT_NE(s.module, nullptr);
    ASSERT_EQ(s.param_count, e.params.size());
    for (std::size_t i = 0; i < e.params.size(); ++i) {
      const ParamSpec& p = e.params[i];
      if (p.kind == ArgKind::view) {
        EXPECT_EQ(s.params[i].kind, driver::ParamKind::pointer_led);
        const std::size_t size = p.rank == 0   ? sizeof(BufferParam<float>)
                                 : p.rank == 1 ? sizeof(TensorParam<float, 1>)
                                               : sizeof(TensorParam<float, 2>);
        EXPECT_EQ(s.params[i].size, size);
        if (e.model == Model::tile) {
          EXPECT_GE(p.rank, 1);
        }
      } else {
        EXPECT_EQ(s.params[i].kind, driver::ParamKind::scalar);
        EXPECT_EQ(s.params[i].size, dtype_size(p.scalar_dtype));
      }
    }
    if (e.model == Model::tile) {
      EXPECT_EQ(e.block_threads, static_cast<std::uint32_t>(tile::threads_for(
                                     e.tile.rank == 1 ? 1 : static_cast<int>(e.tile.dims[0]),
                                     static_cast<int>(e.tile.rank == 1 ? e.tile.dims[0] : e.tile.dims[1]))));
      EXPECT_GE(e.partition_param, 0);
    }
  }
}

TEST(Symbols, ScalarTypesFollowTheEntryDtype) {
  EXPECT_EQ(find(Model::simt, "fill", DType::f64)->params[1].scalar_dtype, DType::f64);
  EXPECT_EQ(find(Model::simt, "fill", DType::u8)->params[1].scalar_dtype, DType::u8);
  EXPECT_EQ(find(Model::simt, "fill", DType::f16)->params[1].scalar_dtype, DType::f32);
  EXPECT_EQ(find(Model::tile, "scale", DType::bf16)->params[1].scalar_dtype, DType::f32);
  EXPECT_EQ(find(Model::simt, "histogram", DType::i32)->params[2].scalar_dtype, DType::f64);
  EXPECT_EQ(find(Model::simt, "spin", DType::u8)->params[1].scalar_dtype, DType::u64);
}

TEST(Symbols, IntegerAndDataMovementKernelsAreBitExact) {
  for (const KernelEntry& e : catalog()) {
    const bool floating = e.dtype && (*e.dtype == DType::f32 || *e.dtype == DType::f64);
    const std::string_view n = e.name;
    const bool reduction = n == "atomic_sum" || n == "row_sum" || n == "matmul";
    EXPECT_EQ(e.tolerance.exact(), !(floating && reduction)) << e.entry_point();
  }
}

#if defined(TANDEM_KERNELS_EXPECT_DEVICE_CODE)
bool contains(const driver::ModuleImage& m, std::string_view needle) {
  const auto* begin = static_cast<const char*>(m.data);
  const auto* end = begin + m.size;
  return std::search(begin, end, needle.begin(), needle.end()) != end;
}

#endif

TEST(Modules, EveryEntryPointIsInItsEmbeddedModule) {
#if defined(TANDEM_KERNELS_EXPECT_DEVICE_CODE)
  ASSERT_TRUE(has_device_code());
  for (const driver::ModuleImage* m : modules()) {
    ASSERT_NE(m->data, nullptr) << m->name;
    EXPECT_GT(m->size, 1000U) << m->name;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m->data) % 8, 0U) << m->name;
  }
  for (const KernelEntry& e : catalog()) {
    // the sm_90 ELF has a .text.<entry> section; the PTX a ".entry <entry>("
    EXPECT_TRUE(contains(*e.symbol->module, ".text." + std::string(e.entry_point()) + '\0'))
        << e.entry_point() << " not in " << e.symbol->module->name;
  }
#else
  EXPECT_FALSE(has_device_code());
  for (const driver::ModuleImage* m : modules()) EXPECT_EQ(m->data, nullptr);
#endif
  for (const driver::ModuleImage* m : modules())
    EXPECT_NE(std::string_view(m->name).find(".cu"), std::string_view::npos);
}

// The kernel with no body (declared.hpp) is device code like the catalog's
// (a declared_launch runs on CUDA too) but no catalog entry: `tandem
// kernels` does not list it, and a recording writes its launches as
// declared_launch steps, never as catalog launches.
TEST(Modules, TheKernelWithNoBodyIsInItsModuleAndNotInTheCatalog) {
  const driver::KernelSymbol& k = declared_access_kernel();
  EXPECT_EQ(k.param_count, 0U);
  ASSERT_NE(k.host, nullptr);
  for (const KernelEntry& e : catalog()) EXPECT_NE(e.symbol, &k) << e.entry_point();
  EXPECT_EQ(tandem::kernel_name(&k), nullptr);  // after catalog(): its names are registered
#if defined(TANDEM_KERNELS_EXPECT_DEVICE_CODE)
  EXPECT_TRUE(contains(*k.module, ".text." + std::string(k.name) + '\0'))
      << k.name << " not in " << k.module->name;
#endif
}

}  // namespace
}  // namespace tandem::kernels::test
