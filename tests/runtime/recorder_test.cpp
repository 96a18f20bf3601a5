// SPDX-License-Identifier: Apache-2.0
// The recording hook (tandem/recorder.hpp, docs/runtime.md "Recording"):
// every public view, launch, transfer and wait call reaches the installed
// Recorder, failures come with their error code, none reaches it once it
// is uninstalled, and calls from many threads all arrive.
#include "tandem/recorder.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/runtime_test_support.hpp"

namespace tandem::test {
namespace {

class CountingRecorder final : public Recorder {
 public:
  void on_stream_created(const Stream&) override { bump("stream"); }
  void on_view_derived(ViewOrigin o, const ViewKey*, const View&, const DeriveArgs&,
                       const StreamRef*) override {
    bump("derive." + std::to_string(static_cast<int>(o)));
  }
  void on_derive_failed(ViewOrigin, const ViewKey&, const DeriveArgs&, ErrorCode code) override {
    bump("failed." + std::string(error_code_name(code)));
  }
  void on_view_dropped(const View&) override { bump("drop"); }
  void on_launch(StreamRef, const driver::KernelSymbol&, const driver::LaunchDims&, void**,
                 std::span<const ViewAccess> accesses, std::uint64_t submission) override {
    bump("launch");
    if (submission == 0 || accesses.empty()) bump("launch.malformed");
  }
  void on_launch_failed(StreamRef, const driver::KernelSymbol&, const driver::LaunchDims&, void**,
                        std::span<const ViewAccess>, ErrorCode code) override {
    bump("launch_failed." + std::string(error_code_name(code)));
  }
  void on_transfer(StreamRef, const View&, char kind, std::span<const std::byte>, std::uint64_t) override {
    bump(std::string("transfer.") + kind);
  }
  void on_copy(StreamRef, const View&, const View&, std::uint64_t) override { bump("copy"); }
  void on_wait_submission(std::uint64_t) override { bump("wait"); }
  void on_wait_stream(StreamRef) override { bump("wait_stream"); }
  void on_wait_retirement() override { bump("retire"); }
  void on_stream_dropped(std::uint64_t) override { bump("stream_dropped"); }
  void on_use_refused(std::string_view op, ErrorCode code) override {
    bump("refused." + std::string(op) + "." + std::string(error_code_name(code)));
  }
  void on_view_query(const View&, ViewQuery what, std::uint64_t answer) override {
    bump((what == ViewQuery::unique ? "unique." : "views.") + std::to_string(answer));
  }

  int count(const std::string& what) {
    const std::lock_guard lock(mu_);
    return counts_[what];
  }

 private:
  void bump(const std::string& what) {
    const std::lock_guard lock(mu_);
    ++counts_[what];
  }
  std::mutex mu_;
  std::map<std::string, int> counts_;
};

// Installs a recorder for one test and takes it away again, whatever happens.
class Recording : public RuntimeFixture {
 protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    previous_ = install_recorder(&rec_);
  }
  void TearDown() override {
    install_recorder(previous_);
    RuntimeFixture::TearDown();
  }
  CountingRecorder rec_;
  Recorder* previous_ = nullptr;
};

std::string derive(ViewOrigin o) { return "derive." + std::to_string(static_cast<int>(o)); }

TEST_F(Recording, EveryViewLaunchAndWaitCallReachesTheInstalledRecorder) {
  Env e = env();
  {
    View buf = allocate(e.a, DType::u32, 64);
    {
      View part = buf.slice(8, 8);
      EXPECT_EQ(rec_.count(derive(ViewOrigin::slice)), 1);
    }
    EXPECT_EQ(rec_.count("drop"), 1);
    LaunchFuture f = fill(e.a, buf, 3);
    EXPECT_TRUE(f.wait(kPatience));
    const std::int64_t shape[] = {8, 8};
    View t = std::move(buf).to_tensor(shape);
    View back = std::move(t).into_buffer();
    (void)read_back(e.a, back, kPatience);
  }
  EXPECT_EQ(rec_.count(derive(ViewOrigin::allocate)), 1);
  EXPECT_EQ(rec_.count(derive(ViewOrigin::to_tensor)), 1);
  EXPECT_EQ(rec_.count(derive(ViewOrigin::into_buffer)), 1);
  EXPECT_EQ(rec_.count("launch"), 1);
  EXPECT_EQ(rec_.count("launch.malformed"), 0);
  // The read-back, once, as what it read: not also as its download and wait.
  EXPECT_EQ(rec_.count("transfer.c"), 1);
  EXPECT_EQ(rec_.count("transfer.d"), 0);
  EXPECT_EQ(rec_.count("wait"), 1);
  // The slice, then the buffer the tensor became again: a moved-from view
  // is no drop.
  EXPECT_EQ(rec_.count("drop"), 2);
}

TEST_F(Recording, AFailedConversionReachesTheRecorderWithItsCode) {
  Env e = env();
  View buf = allocate(e.a, DType::f32, 16);
  View alias = buf.slice(0, 4);
  const std::int64_t shape[] = {16};
  EXPECT_THROW((void)std::move(buf).to_tensor(shape), Error);
  EXPECT_EQ(rec_.count("failed.aliased"), 1);
  EXPECT_EQ(rec_.count(derive(ViewOrigin::to_tensor)), 0);
}

TEST_F(Recording, AProgramsQueriesReachTheRecorderWithTheirAnswersButAConversionsCheckDoesNot) {
  Env e = env();
  View buf = allocate(e.a, DType::f32, 16);
  EXPECT_TRUE(buf.is_unique());
  {
    View alias = buf.slice(0, 4);
    EXPECT_FALSE(buf.is_unique());
    EXPECT_EQ(buf.view_count(), 2U);
  }
  const std::int64_t shape[] = {16};
  View t = std::move(buf).to_tensor(shape);  // checks uniqueness itself
  EXPECT_EQ(rec_.count("unique.1"), 1);
  EXPECT_EQ(rec_.count("unique.0"), 1);
  EXPECT_EQ(rec_.count("views.2"), 1);
  EXPECT_EQ(rec_.count(derive(ViewOrigin::to_tensor)), 1);
}

TEST_F(Recording, ADerivationFromAMovedFromViewReachesTheRecorderAsARefusedUse) {
  Env e = env();
  View buf = allocate(e.a, DType::f32, 16);
  View moved = std::move(buf);
  EXPECT_THROW((void)buf.slice(0, 4), Error);  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(rec_.count("refused.slice.invalid_handle"), 1);
  EXPECT_EQ(rec_.count(derive(ViewOrigin::slice)), 0);
}

TEST_F(Recording, AStreamsDropReachesTheRecorderWhenItsLastHandleGoesNotBefore) {
  Env e = env();
  std::optional<Stream> s = Stream::create(e.ctx);
  std::optional<Stream> copy = *s;
  View buf = allocate(*s, DType::u32, 64);
  LaunchFuture f = fill(*s, buf, 1);
  s.reset();
  EXPECT_EQ(rec_.count("stream_dropped"), 0);
  copy.reset();  // with work in flight: the drop is the handle's, not the work's
  EXPECT_EQ(rec_.count("stream_dropped"), 1);
  EXPECT_TRUE(f.wait(kPatience));
}

TEST_F(Recording, NothingReachesARecorderOnceItIsUninstalled) {
  Env e = env();
  EXPECT_EQ(install_recorder(nullptr), &rec_);
  {
    View buf = allocate(e.a, DType::u32, 16);
    EXPECT_TRUE(fill(e.a, buf, 1).wait(kPatience));
  }
  EXPECT_EQ(rec_.count(derive(ViewOrigin::allocate)), 0);
  EXPECT_EQ(rec_.count("launch"), 0);
  EXPECT_EQ(rec_.count("drop"), 0);
}

TEST_F(Recording, CallsFromManyThreadsAllReachTheRecorder) {
  Env e = env();
  constexpr int kThreads = 4, kEach = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&e] {
      for (int i = 0; i < kEach; ++i) {
        View v = allocate(e.a, DType::u32, 32);
        (void)fill(e.a, v, 2);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rec_.count(derive(ViewOrigin::allocate)), kThreads * kEach);
  EXPECT_EQ(rec_.count("launch"), kThreads * kEach);
  EXPECT_EQ(rec_.count("drop"), kThreads * kEach);
}

}  // namespace
}  // namespace tandem::test
