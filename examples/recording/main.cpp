// SPDX-License-Identifier: Apache-2.0
// tandem_recording_example FILE [sim|cuda] — a program that records itself
// (docs/runtime.md "Recording"): its context is created with
// ContextOptions::record_to = FILE, so its runtime calls are written there as
// a tandem.scenario/1 scenario that `tandem run` replays.
//
// What it does, on the simulated device (default) or the GPU (`cuda`):
// allocates a buffer, fills it with a SIMT kernel, converts it into a tensor
// (the same memory, no copy) that a Tile kernel scales, converts it back,
// reads it back, and — on the sim only — runs a kernel of its own that is
// not in the catalog, declaring the buffer read-write. A replay has no body
// for that kernel: it takes the same leases (a `declared_launch` step), and
// the read-back after it becomes a download without a contents check. A
// second thread then does some work of its own. Every handle is dropped,
// the work waited for, and the context destroyed, which writes FILE.
//
// Prints `submissions: N` (the runtime's submissions, reads included) and
// `read_backs: K`; scripts/record-replay --program compares them with the
// replay. Exit 0 when the read-backs held what they should, 1 when not, 2
// when tandem throws or the arguments are wrong.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tandem/context.hpp"
#include "tandem/device.hpp"
#include "tandem/driver/kernel_symbol.hpp"
#include "tandem/kernel_params.hpp"
#include "tandem/kernels/catalog.hpp"
#include "tandem/kernels/launch.hpp"
#include "tandem/launch.hpp"
#include "tandem/stream.hpp"
#include "tandem/view.hpp"

namespace k = tandem::kernels;

namespace {

constexpr std::int64_t kRows = 16;
constexpr std::int64_t kCols = 96;
constexpr double kFill = 1.5;
constexpr double kScale = 4.0;
constexpr std::chrono::seconds kPatience{60};

// --- a kernel of the program's own, outside the catalog ------------------------------
// x[i] = -x[i]. Only a host reference (the simulated device runs it): device
// code would need a module of its own, which this example does not build, so
// on the GPU the launch is left out.
void negate_host(void* const* params, const tandem::driver::LaunchDims& /*dims*/) {
  const auto* x = static_cast<const tandem::BufferParam<float>*>(params[0]);
  for (std::uint64_t i = 0; i < x->len; ++i) x->data[i] = -x->data[i];
}
constexpr tandem::driver::ParamSlot kNegateSlots[] = {
    {tandem::driver::ParamKind::pointer_led, sizeof(tandem::BufferParam<float>)}};
const tandem::driver::ModuleImage kNoDeviceCode{nullptr, 0, "examples/recording/main.cpp"};
const tandem::driver::KernelSymbol kNegate{"example_negate_f32", &kNoDeviceCode, &negate_host, kNegateSlots,
                                           1};

const k::KernelEntry& kernel(k::Model model, const char* name, tandem::DType t, int rank) {
  const k::KernelEntry* e = k::find(model, name, t, nullptr, rank);
  if (e == nullptr) throw std::runtime_error(std::string("the catalog has no kernel ") + name);
  return *e;
}

bool all_equal(const std::vector<std::byte>& raw, float want) {
  std::vector<float> v(raw.size() / sizeof(float));
  std::memcpy(v.data(), raw.data(), v.size() * sizeof(float));
  for (const float x : v)
    if (x != want) return false;
  return !v.empty();
}

struct Tally {
  int read_backs = 0;
  int wrong = 0;
};

// fill (SIMT) -> to_tensor -> scale (Tile) -> into_buffer -> read back, then
// the program's own kernel on the sim. Every handle is gone at the end.
void main_work(const tandem::Context& ctx, bool sim, Tally& t) {
  const tandem::Stream s = tandem::Stream::create(ctx);
  tandem::View buf = tandem::allocate(s, tandem::DType::f32, kRows * kCols);
  const k::Arg fill[] = {k::Arg::of(buf), k::Arg::value(kFill)};
  (void)k::launch(s, kernel(k::Model::simt, "fill", tandem::DType::f32, 0), fill);
  const std::int64_t shape[] = {kRows, kCols};
  tandem::View tensor = std::move(buf).to_tensor(shape);  // the same memory, no copy
  const k::Arg scale[] = {k::Arg::of(tensor), k::Arg::value(kScale)};
  const tandem::LaunchFuture scaled =
      k::launch(s, kernel(k::Model::tile, "scale", tandem::DType::f32, 2), scale);
  if (!scaled.wait(kPatience)) throw std::runtime_error("the Tile kernel did not finish in 60 s");
  tandem::View back = std::move(tensor).into_buffer();
  ++t.read_backs;
  if (!all_equal(tandem::read_back(s, back, kPatience), static_cast<float>(kFill * kScale))) ++t.wrong;
  if (sim) {
    tandem::BufferParam<float> p = back.buffer_param<float>();
    void* params[] = {&p};
    const tandem::ViewAccess access[] = {{&back, tandem::Access::read_write}};
    (void)tandem::launch(s, kNegate, {{1, 1, 1}, {1, 1, 1}, 0}, params, access);
    ++t.read_backs;
    if (!all_equal(tandem::read_back(s, back, kPatience), static_cast<float>(-kFill * kScale))) ++t.wrong;
  }
}

// A second host thread's own work: a stream, a buffer, a SIMT iota, a read-back.
void thread_work(const tandem::Context& ctx, Tally& t) {
  const tandem::Stream s = tandem::Stream::create(ctx);
  tandem::View v = tandem::allocate(s, tandem::DType::u32, 256);
  const k::Arg iota[] = {k::Arg::of(v), k::Arg::value(7.0), k::Arg::value(2.0)};
  (void)k::launch(s, kernel(k::Model::simt, "iota", tandem::DType::u32, 0), iota);
  const std::vector<std::byte> raw = tandem::read_back(s, v, kPatience);
  ++t.read_backs;
  std::vector<std::uint32_t> got(raw.size() / sizeof(std::uint32_t));
  std::memcpy(got.data(), raw.data(), got.size() * sizeof(std::uint32_t));
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != 7 + 2 * i) {
      ++t.wrong;
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string backend = argc > 2 ? argv[2] : "sim";
  if (argc < 2 || argc > 3 || (backend != "sim" && backend != "cuda")) {
    std::fprintf(stderr, "usage: tandem_recording_example FILE [sim|cuda]\n");
    return 2;
  }
  const std::filesystem::path file = argv[1];
  try {
    const bool sim = backend == "sim";
    const tandem::Platform platform = sim ? tandem::Platform::sim() : tandem::Platform::cuda();
    tandem::ContextOptions options;
    options.record_to = file.string();
    Tally main_tally, thread_tally;
    std::uint64_t submissions = 0;
    {
      const tandem::Context ctx = tandem::Context::create(platform.device(0), options);
      main_work(ctx, sim, main_tally);
      // The recording runs this thread's calls after the main thread's
      // (`threads` after `steps`): the main thread only waits from here on.
      std::thread worker(thread_work, std::cref(ctx), std::ref(thread_tally));
      worker.join();
      if (!ctx.wait_for_retirement(kPatience)) {
        std::fprintf(stderr, "tandem_recording_example: work still pending after 60 s\n");
        return 1;
      }
      submissions = ctx.stats().submissions_total;
    }  // the context that asked for the recording is gone: FILE is written
    std::printf("submissions: %llu\nread_backs: %d\n", static_cast<unsigned long long>(submissions),
                main_tally.read_backs + thread_tally.read_backs);
    if (!std::filesystem::exists(file)) {
      std::fprintf(stderr, "tandem_recording_example: no recording at %s\n", file.c_str());
      return 1;
    }
    if (main_tally.wrong + thread_tally.wrong != 0) {
      std::fprintf(stderr, "tandem_recording_example: %d read-back(s) held wrong values\n",
                   main_tally.wrong + thread_tally.wrong);
      return 1;
    }
    std::printf("recorded %s (%s)\n", file.c_str(), backend.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem_recording_example: %s\n", e.what());
    return 2;
  }
}
