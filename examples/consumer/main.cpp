// SPDX-License-Identifier: Apache-2.0
// tandem_consumer — the smallest user of an installed tandem: on the
// simulated device, a SIMT kernel fills a buffer, the same memory becomes a
// tensor that a Tile kernel scales, every handle is dropped while the work
// is in flight, and the downloaded values are checked. Exit 0 when they are
// right, 1 when not, 2 when tandem throws.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace k = tandem::kernels;

namespace {

constexpr std::int64_t kRows = 48;
constexpr std::int64_t kCols = 80;  // not a multiple of the 64x64 tile
constexpr double kFill = 1.5;
constexpr double kScale = 4.0;

const k::KernelEntry& kernel(k::Model model, const char* name, int rank) {
  const k::KernelEntry* e = k::find(model, name, tandem::DType::f32, nullptr, rank);
  if (e == nullptr) throw std::runtime_error(std::string("the catalog has no f32 kernel ") + name);
  return *e;
}

// Runs fill -> scale and returns the downloaded bytes; every view, the
// stream and the futures are gone before the download is waited for.
std::vector<std::byte> fill_then_scale(const tandem::Context& ctx) {
  std::optional<tandem::Download> result;
  {
    const tandem::Stream s = tandem::Stream::create(ctx);
    tandem::View buf = tandem::allocate(s, tandem::DType::f32, kRows * kCols);
    const k::Arg fill[] = {k::Arg::of(buf), k::Arg::value(kFill)};
    (void)k::launch(s, kernel(k::Model::simt, "fill", 0), fill);
    const std::int64_t shape[] = {kRows, kCols};
    tandem::View t = std::move(buf).to_tensor(shape);  // the same memory, no copy
    const k::Arg scale[] = {k::Arg::of(t), k::Arg::value(kScale)};
    (void)k::launch(s, kernel(k::Model::tile, "scale", 2), scale);
    result.emplace(tandem::download(s, t));
  }
  return result->get(std::chrono::seconds(60));
}

}  // namespace

int main() {
  try {
    const tandem::Platform platform = tandem::Platform::sim();
    const tandem::Context ctx = tandem::Context::create(platform.device(0));
    const std::vector<std::byte> raw = fill_then_scale(ctx);
    if (!ctx.wait_for_retirement(std::chrono::seconds(60))) {
      std::fprintf(stderr, "tandem_consumer: work still pending after 60 s\n");
      return 1;
    }
    const std::size_t want_n = static_cast<std::size_t>(kRows * kCols);
    if (raw.size() != want_n * sizeof(float)) {
      std::fprintf(stderr, "tandem_consumer: downloaded %zu bytes, expected %zu\n", raw.size(),
                   want_n * sizeof(float));
      return 1;
    }
    std::vector<float> v(want_n);
    std::memcpy(v.data(), raw.data(), raw.size());
    const auto want = static_cast<float>(kFill * kScale);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] != want) {
        std::fprintf(stderr, "tandem_consumer: element %zu is %g, expected %g (fill %g, then scale by %g)\n",
                     i, static_cast<double>(v[i]), static_cast<double>(want), kFill, kScale);
        return 1;
      }
    }
    std::printf(
        "tandem_consumer: %zu elements = %g on the %s backend: SIMT fill, then Tile scale, all handles "
        "dropped\n",
        v.size(), static_cast<double>(want), std::string(platform.backend_name()).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem_consumer: %s\n", e.what());
    return 2;
  }
}
