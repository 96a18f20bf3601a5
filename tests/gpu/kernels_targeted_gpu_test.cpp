// SPDX-License-Identifier: Apache-2.0
// Kernels checked against expectations computed here, not by the host
// references (kernels_gpu_test.cpp checks every entry against those):
// spin's duration, atomics across many blocks, checksums at byte offsets.
// Needs a CUDA device (or TANDEM_KERNELS_TEST_ON_SIM=1); skips without.
#include <gtest/gtest.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_device_test.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using tandem::DType;
using tandem::View;
using tandem::driver::Dim3;
namespace k = tandem::kernels;

using GpuKernels = KernelDeviceTest;

const k::KernelEntry& simt_entry(const char* name, DType t) {
  const k::KernelEntry* e = k::find(k::Model::simt, name, t);
  if (e == nullptr) throw std::runtime_error(std::string("no SIMT kernel ") + name);
  return *e;
}

template <class T>
std::vector<T> read_as(const tandem::Stream& s, const View& v) {
  const std::vector<std::byte> raw = tandem::read_back(s, v, 60s);
  std::vector<T> out(raw.size() / sizeof(T));
  std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
  return out;
}

template <class T>
View upload_new(const tandem::Stream& s, DType t, const std::vector<T>& values) {
  View v = tandem::allocate(s, t, values.size());
  if (!values.empty()) (void)tandem::upload(s, v, std::as_bytes(std::span<const T>(values)));
  return v;
}

// spin (scenario-format.md §2): busy-waits ns on the device and leaves x
// unchanged — measured with the host clock around a wait on its future.
TEST_F(GpuKernels, SpinLeavesItsBufferUnchangedAndTakesAtLeastItsDuration) {
  tandem::Stream s = tandem::Stream::create(ctx());
  std::mt19937_64 g(base_seed());
  std::vector<std::uint8_t> bytes(4099);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(g());
  View base = upload_new(s, DType::u8, bytes);
  View x = base.slice(1, 4097);  // misaligned
  ASSERT_TRUE(ctx().wait_for_retirement(10s));
  const k::KernelEntry& spin = simt_entry("spin", DType::u8);
  for (const std::uint64_t ns : {1'000'000ULL, 20'000'000ULL}) {
    const k::Arg args[] = {k::Arg::of(x), k::Arg::value(ns)};
    const auto t0 = Clock::now();
    tandem::LaunchFuture f = k::launch(s, spin, args);
    ASSERT_TRUE(f.wait(30s)) << "spin " << ns << " ns did not finish within 30 s";
    const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    std::printf("[measure] spin ns=%" PRIu64 ": host clock launch..wait = %lld ns\n", ns,
                static_cast<long long>(took));
    EXPECT_GE(static_cast<std::uint64_t>(took), ns)
        << "spin " << ns << " ns returned after " << took << " ns";
    EXPECT_EQ(f.status(), tandem::SubmissionStatus::retired);
  }
  // The same through a float view (any dtype; len counted in bytes).
  std::vector<float> fl(1001);
  for (auto& v : fl) v = std::uniform_real_distribution<float>(-4.0F, 4.0F)(g);
  View fbase = upload_new(s, DType::f32, fl);
  View fx = fbase.slice(1, 1000);
  const k::Arg fargs[] = {k::Arg::of(fx), k::Arg::value(std::uint64_t{1'000'000})};
  (void)k::launch(s, spin, fargs);
  EXPECT_EQ(read_as<std::uint8_t>(s, base), bytes) << "spin changed its u8 buffer";
  EXPECT_EQ(read_as<float>(s, fbase), fl) << "spin changed its f32 buffer";
}

// atomic_sum and histogram accumulate across many blocks (default grids of
// 256+ blocks, a caller 2-D grid, launched twice): exact totals computed here.
TEST_F(GpuKernels, AtomicSumAndHistogramAccumulateAcrossManyBlocks) {
  tandem::Stream s = tandem::Stream::create(ctx());
  constexpr std::uint64_t kN = (1ULL << 22) + 7;  // 4M + 7 elements
  // u32 atomic_sum of ones: acc0 + 2 * n (two launches).
  {
    const k::KernelEntry& e = simt_entry("atomic_sum", DType::u32);
    View x = upload_new(s, DType::u32, std::vector<std::uint32_t>(kN, 1U));
    View acc_base = upload_new(s, DType::u32, std::vector<std::uint32_t>{0xA5A5A5A5U, 5U, 0xA5A5A5A5U});
    View acc = acc_base.slice(1, 1);
    const k::Arg args[] = {k::Arg::of(x), k::Arg::of(acc)};
    tandem::driver::LaunchDims dims;
    const k::ArgShape shapes[] = {k::shape_of(x), k::shape_of(acc)};
    ASSERT_EQ(k::launch_dims(e, shapes, std::nullopt, std::nullopt, dims), "");
    EXPECT_GT(dims.grid.x, 1u) << "the default atomic_sum grid should have several blocks";
    (void)k::launch(s, e, args);
    (void)k::launch(s, e, args, Dim3{33, 7, 1}, Dim3{50, 3, 1});
    const auto got = read_as<std::uint32_t>(s, acc_base);
    EXPECT_EQ(got[1], static_cast<std::uint32_t>(5 + 2 * kN))
        << "atomic_sum u32 of " << kN << " ones, default grid " << dim3_text(dims.grid)
        << " then grid {33, 7, 1}";
    EXPECT_EQ(got[0], 0xA5A5A5A5U) << "atomic_sum wrote before acc";
    EXPECT_EQ(got[2], 0xA5A5A5A5U) << "atomic_sum wrote after acc";
  }
  // f64 atomic_sum of 0.5 (exact in every order): acc0 + n.
  {
    const k::KernelEntry& e = simt_entry("atomic_sum", DType::f64);
    View x = upload_new(s, DType::f64, std::vector<double>(kN, 0.5));
    View acc = upload_new(s, DType::f64, std::vector<double>{-3.0});
    const k::Arg args[] = {k::Arg::of(x), k::Arg::of(acc)};
    (void)k::launch(s, e, args);
    (void)k::launch(s, e, args, Dim3{1024, 1, 1}, Dim3{256, 1, 1});
    const std::vector<double> got = read_as<double>(s, acc);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.front(), -3.0 + static_cast<double>(kN)) << "atomic_sum f64 of " << kN << " halves, twice";
  }
  // histogram f32: x[i] = i % 1000 + 0.5 over [0, 1000) into 1000 bins (shared
  // path) and 4000 bins (global path); each launched twice.
  for (const std::uint64_t nb : {1000ULL, 4000ULL}) {
    const k::KernelEntry& e = simt_entry("histogram", DType::f32);
    std::vector<float> xs(kN);
    for (std::uint64_t i = 0; i < kN; ++i) xs[i] = static_cast<float>(i % 1000) + 0.5F;
    View x = upload_new(s, DType::f32, xs);
    View bins = upload_new(s, DType::u32, std::vector<std::uint32_t>(nb, 1U));
    const k::Arg args[] = {k::Arg::of(x), k::Arg::of(bins), k::Arg::value(0.0), k::Arg::value(1000.0)};
    (void)k::launch(s, e, args);
    (void)k::launch(s, e, args, Dim3{45, 2, 1}, Dim3{96, 2, 1});
    const auto got = read_as<std::uint32_t>(s, bins);
    std::uint64_t bad = 0, first = 0;
    std::uint32_t first_want = 0, first_got = 0;
    for (std::uint64_t b = 0; b < nb; ++b) {
      // value v = j + 0.5 lands in bin floor((j + 0.5) * nb / 1000)
      std::uint64_t count = 0;
      for (std::uint64_t j = 0; j < 1000; ++j) {
        if (static_cast<std::uint64_t>((static_cast<double>(j) + 0.5) / 1000.0 * static_cast<double>(nb)) ==
            b) {
          count += kN / 1000 + (j < kN % 1000 ? 1 : 0);
        }
      }
      const auto want = static_cast<std::uint32_t>(1 + 2 * count);
      if (got[b] != want && bad++ == 0) {
        first = b;
        first_want = want;
        first_got = got[b];
      }
    }
    EXPECT_EQ(bad, 0u) << "histogram f32, " << nb << " bins, n=" << kN << ": " << bad
                       << " bins wrong; first bin " << first << " expected " << first_want << " got "
                       << first_got;
  }
}

// checksum (scenario-format.md §2) of u8 slices at byte offsets 1..3 (the
// byte path), 0 and 4 (the 16- and 4-byte paths), against a sum computed here.
TEST_F(GpuKernels, ChecksumOfU8SlicesAtByteOffsetsMatchesTheWordSum) {
  tandem::Stream s = tandem::Stream::create(ctx());
  std::mt19937_64 g(mix(base_seed(), 17));
  const std::uint64_t total = (1ULL << 20) + 64;
  std::vector<std::uint8_t> bytes(total);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(g());
  View base = upload_new(s, DType::u8, bytes);
  View out_base = tandem::allocate(s, DType::u32, 3);
  View out = out_base.slice(1, 1);
  const k::KernelEntry& e = simt_entry("checksum", DType::u8);
  for (const std::uint64_t off : {1ULL, 2ULL, 3ULL, 0ULL, 4ULL}) {
    for (const std::uint64_t len : {0ULL, 1ULL, 2ULL, 3ULL, 4ULL, 7ULL, 4097ULL, (1ULL << 20) + 5}) {
      std::uint32_t want = 0;
      for (std::uint64_t w = 0; w * 4 < len; ++w) {
        std::uint32_t word = 0;
        for (std::uint64_t b = 0; b < 4 && w * 4 + b < len; ++b)
          word |= std::uint32_t{bytes[off + w * 4 + b]} << (8 * b);
        want += word;
      }
      View x = base.slice(off, len);
      (void)tandem::memset_bytes(s, out_base, 0xA5);
      const k::Arg args[] = {k::Arg::of(x), k::Arg::of(out)};
      (void)k::launch(s, e, args);
      const auto got = read_as<std::uint32_t>(s, out_base);
      EXPECT_EQ(got[1], want) << "checksum of " << len << " bytes at byte offset " << off;
      EXPECT_EQ(got[0], 0xA5A5A5A5U) << "checksum wrote before out (len " << len << ", offset " << off << ")";
      EXPECT_EQ(got[2], 0xA5A5A5A5U) << "checksum wrote after out (len " << len << ", offset " << off << ")";
    }
  }
}

}  // namespace
