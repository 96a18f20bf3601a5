// SPDX-License-Identifier: Apache-2.0
// Several devices (issue #6): peer access between contexts of two devices,
// copies between them (leases on both sides, released when the copy
// retires), and device_mismatch before any lease for everything else that
// mixes devices. All on a simulated platform presenting several devices.
#include <thread>

#include "runtime_test_support.hpp"
#include "tandem/allocation_watch.hpp"
#include "tandem/graph.hpp"

namespace tandem::test {
namespace {

class MultiDevice : public RuntimeFixture {
 protected:
  driver::SimConfig config() const override {
    driver::SimConfig c;
    c.devices = devices_;
    c.peer_capable = peer_capable_;
    c.memory_bytes = std::size_t{64} << 20;
    return c;
  }
  Context ctx(int ordinal, ConflictPolicy p = ConflictPolicy::order) {
    return Context::create(platform().device(ordinal), ContextOptions{p});
  }

  int devices_ = 2;
  bool peer_capable_ = true;
};

class ThreeDevices : public MultiDevice {
 protected:
  ThreeDevices() { devices_ = 3; }
};

class NoPeerPath : public MultiDevice {
 protected:
  NoPeerPath() { peer_capable_ = false; }
};

TEST_F(MultiDevice, AllocationsRememberTheirDevice) {
  Context c0 = ctx(0), c1 = ctx(1);
  Stream s0 = Stream::create(c0), s1 = Stream::create(c1);
  View x0 = allocate(s0, DType::u32, 16);
  View x1 = allocate(s1, DType::u32, 16);
  EXPECT_EQ(x0.device_ordinal(), 0);
  EXPECT_EQ(x1.device_ordinal(), 1);
  EXPECT_EQ(x1.slice(0, 4).device_ordinal(), 1);
  View moved = std::move(x1);
  EXPECT_TANDEM_ERROR(ErrorCode::invalid_handle, x1.device_ordinal());  // NOLINT(bugprone-use-after-move)
}

TEST_F(MultiDevice, DeviceMemoryIsAccountedPerDevice) {
  Context c0 = ctx(0), c1 = ctx(1);
  Stream s1 = Stream::create(c1);
  const MemoryInfo before0 = c0.memory_info(), before1 = c1.memory_info();
  {
    View x1 = allocate(s1, DType::u32, 1 << 20);
    EXPECT_EQ(c0.memory_info().free_bytes, before0.free_bytes);
    EXPECT_EQ(c1.memory_info().free_bytes + (std::size_t{4} << 20), before1.free_bytes);
  }
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  c1.trim();
  EXPECT_EQ(c1.memory_info().free_bytes, before1.free_bytes);
}

TEST_F(MultiDevice, PeerAccessIsEnabledInBothDirectionsAndIsIdempotent) {
  Context c0 = ctx(0), c1 = ctx(1);
  EXPECT_FALSE(c0.peer_access_enabled(c1));
  c0.enable_peer_access(c1);
  EXPECT_TRUE(c0.peer_access_enabled(c1));
  EXPECT_TRUE(c1.peer_access_enabled(c0));
  EXPECT_NO_THROW(c1.enable_peer_access(c0));
  EXPECT_NO_THROW(c0.enable_peer_access(c1));
  // Peer access belongs to these two contexts, not to every context of the devices.
  Context other1 = ctx(1);
  EXPECT_FALSE(c0.peer_access_enabled(other1));
}

TEST_F(MultiDevice, PeerAccessWithinOneDeviceIsDeviceMismatchNamingBothContexts) {
  Context a = ctx(0), b = ctx(0);
  const std::string msg = error_message_of([&] { a.enable_peer_access(b); });
  EXPECT_NE(msg.find("device_mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("context " + std::to_string(a.id())), std::string::npos) << msg;
  EXPECT_NE(msg.find("context " + std::to_string(b.id())), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 0"), std::string::npos) << msg;
  Platform other = Platform::sim();
  Context foreign = Context::create(other.device(0));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, ctx(1).enable_peer_access(foreign));
}

TEST_F(NoPeerPath, PeerAccessBetweenDevicesThatCannotReachEachOtherIsUnsupported) {
  Context c0 = ctx(0), c1 = ctx(1);
  const std::string msg = error_message_of([&] { c0.enable_peer_access(c1); });
  EXPECT_NE(msg.find("unsupported"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 1"), std::string::npos) << msg;
  EXPECT_FALSE(c0.peer_access_enabled(c1));
}

TEST_F(MultiDevice, CrossDeviceCopyWithoutPeerAccessIsDeviceMismatchAndTakesNoLease) {
  Context c0 = ctx(0, ConflictPolicy::reject), c1 = ctx(1, ConflictPolicy::reject);
  Stream s0 = Stream::create(c0), s1 = Stream::create(c1), s1b = Stream::create(c1);
  View x0 = allocate(s0, DType::u32, 16);
  View x1 = allocate(s1, DType::u32, 16);
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  const RuntimeStats b0 = c0.stats(), b1 = c1.stats();
  const std::string msg = error_message_of([&] { (void)copy(s0, x0, x1); });
  EXPECT_NE(msg.find("device_mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allocation " + std::to_string(x0.allocation_id())), std::string::npos) << msg;
  EXPECT_NE(msg.find("allocation " + std::to_string(x1.allocation_id())), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 1"), std::string::npos) << msg;
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, copy(s1, x0, x1));
  for (const auto& [before, c] : {std::pair{b0, c0}, std::pair{b1, c1}}) {
    EXPECT_EQ(c.stats().active_leases, before.active_leases);
    EXPECT_EQ(c.stats().submissions_total, before.submissions_total);
  }
  // Nothing leased x1: a write on another stream is admitted under reject.
  EXPECT_NO_THROW((void)fill(s1b, x1, 1));
}

TEST_F(ThreeDevices, CrossDeviceCopyOnAStreamOfNeitherDeviceIsDeviceMismatch) {
  Context c0 = ctx(0), c1 = ctx(1), c2 = ctx(2);
  c0.enable_peer_access(c1);
  c2.enable_peer_access(c0);
  c2.enable_peer_access(c1);
  Stream s0 = Stream::create(c0), s1 = Stream::create(c1), s2 = Stream::create(c2);
  View x0 = allocate(s0, DType::u32, 8);
  View x1 = allocate(s1, DType::u32, 8);
  const std::string msg = error_message_of([&] { (void)copy(s2, x0, x1); });
  EXPECT_NE(msg.find("device_mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("neither"), std::string::npos) << msg;
}

TEST_F(MultiDevice, CrossDeviceCopyMovesTheBytesOnAStreamOfEitherDevice) {
  Context c0 = ctx(0), c1 = ctx(1);
  c0.enable_peer_access(c1);
  Stream s0 = Stream::create(c0), s1 = Stream::create(c1);
  View x0 = allocate(s0, DType::u32, 64);
  View x1 = allocate(s1, DType::u32, 64);
  View y0 = allocate(s0, DType::u32, 64);
  (void)upload_u32(s0, x0, iota_u32(64, 5));
  EXPECT_TRUE(copy(s0, x0, x1).wait(kPatience));  // pushed from device 0's stream
  EXPECT_EQ(read_u32(s1, x1), iota_u32(64, 5));
  (void)fill(s1, x1, 9);
  EXPECT_TRUE(copy(s1, x1, y0).wait(kPatience));  // pushed from device 1's stream
  EXPECT_EQ(read_u32(s0, y0), std::vector<std::uint32_t>(64, 9));
}

TEST_F(MultiDevice, CrossDeviceCopyLeasesBothSidesUntilItRetires) {
  Context c0 = ctx(0, ConflictPolicy::reject), c1 = ctx(1, ConflictPolicy::reject);
  c0.enable_peer_access(c1);
  Stream s0 = Stream::create(c0), s0b = Stream::create(c0), s1 = Stream::create(c1);
  View x0 = allocate(s0, DType::u32, 16);
  View x1 = allocate(s1, DType::u32, 16);
  View blocker = allocate(s0, DType::u32, 1);
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  Gate& g = gate();
  LaunchFuture held = hold(s0, blocker, Access::write, &g);
  LaunchFuture c = copy(s0, x0, x1);  // behind the held kernel on s0
  // Its write lease on the peer device's buffer rejects a writer there ...
  EXPECT_TANDEM_ERROR(ErrorCode::conflict, fill(s1, x1, 1));
  // ... and its read lease on the source rejects a writer on another stream.
  EXPECT_TANDEM_ERROR(ErrorCode::conflict, fill(s0b, x0, 1));
  // A reader of the source on another stream is fine (read/read).
  EXPECT_NO_THROW((void)hold(s0b, x0, Access::read, nullptr));
  g.open();
  EXPECT_TRUE(c.wait(kPatience));
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  EXPECT_EQ(c0.stats().active_leases, 0U);
  EXPECT_EQ(c1.stats().active_leases, 0U);
  EXPECT_NO_THROW((void)fill(s1, x1, 2));
  EXPECT_NO_THROW((void)fill(s0b, x0, 2));
}

TEST_F(MultiDevice, CrossDeviceCopyIsOrderedAfterConflictingWorkOnThePeerDevice) {
  Context c0 = ctx(0), c1 = ctx(1);
  c1.enable_peer_access(c0);
  Stream s0 = Stream::create(c0), s1 = Stream::create(c1);
  View x0 = allocate(s0, DType::u32, 32);
  View x1 = allocate(s1, DType::u32, 32);
  (void)fill(s0, x0, 3);
  Gate& g = gate();
  (void)fill(s1, x1, 7, FillOpts{&g});  // a writer of the destination, held on device 1
  LaunchFuture c = copy(s0, x0, x1);    // must wait for it on the device
  ASSERT_TRUE(g.wait_arrivals(1));
  EXPECT_FALSE(c.done()) << "the copy ran before the conflicting write on the peer device";
  g.open();
  EXPECT_TRUE(c.wait(kPatience));
  EXPECT_EQ(read_u32(s1, x1), std::vector<std::uint32_t>(32, 3));
}

TEST_F(MultiDevice, BuffersDroppedBeforeACrossDeviceCopyCompletesAreFreedWhenItRetires) {
  Context c0 = ctx(0), c1 = ctx(1);
  c0.enable_peer_access(c1);
  Stream s0 = Stream::create(c0), s1 = Stream::create(c1);
  View blocker = allocate(s0, DType::u32, 1);
  std::optional<View> x0 = allocate(s0, DType::u32, 1024);
  std::optional<View> x1 = allocate(s1, DType::u32, 1024);
  const AllocationWatch w0(*x0), w1(*x1);
  Gate& g = gate();
  (void)hold(s0, blocker, Access::write, &g);
  (void)copy(s0, *x0, *x1);
  x0.reset();
  x1.reset();
  ASSERT_TRUE(g.wait_arrivals(1));
  EXPECT_FALSE(w0.freed());
  EXPECT_FALSE(w1.freed()) << "the peer device's buffer was freed while a copy into it was pending";
  g.open();
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  EXPECT_TRUE(eventually([&] { return w0.freed() && w1.freed(); }));
  EXPECT_EQ(c0.stats().live_allocations, 1U);  // the blocker
  EXPECT_EQ(c1.stats().live_allocations, 0U);
}

TEST_F(MultiDevice, KernelLaunchMixingDevicesFailsBeforeAnyLeaseEvenWithPeerAccess) {
  Context c0 = ctx(0, ConflictPolicy::reject), c1 = ctx(1, ConflictPolicy::reject);
  c0.enable_peer_access(c1);
  Stream s0 = Stream::create(c0), s1 = Stream::create(c1);
  View x0 = allocate(s0, DType::u32, 16);
  View x1 = allocate(s1, DType::u32, 16);
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  const RuntimeStats b0 = c0.stats(), b1 = c1.stats();
  // x0 (device 0) is listed first, so a late check would have leased it.
  const std::string msg = error_message_of([&] {
    (void)hold_many(s0, {{&x0, Access::write}, {&x1, Access::write}}, nullptr);
  });
  EXPECT_NE(msg.find("device_mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allocation " + std::to_string(x1.allocation_id())), std::string::npos) << msg;
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, fill(s0, x1, 1));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, upload_u32(s0, x1, iota_u32(16)));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, download(s1, x0));
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, memset_bytes(s0, x1, 0));
  Graph graph = Graph::capture(s0, [&] { (void)fill(s0, x0, 1); });
  EXPECT_TANDEM_ERROR(ErrorCode::device_mismatch, graph.replay(s1));
  for (const auto& [before, c] : {std::pair{b0, c0}, std::pair{b1, c1}}) {
    EXPECT_EQ(c.stats().active_leases, before.active_leases);
    EXPECT_EQ(c.stats().submissions_total, before.submissions_total);
  }
  // No lease is left on either: writers on their own devices are admitted.
  EXPECT_NO_THROW((void)fill(s1, x1, 2));
  EXPECT_NO_THROW((void)fill(s0, x0, 2));
}

TEST_F(MultiDevice, TwoHostThreadsEachDrivingOneDeviceWithPeerCopiesStayConsistent) {
  Context c0 = ctx(0), c1 = ctx(1);
  c0.enable_peer_access(c1);
  constexpr int kRounds = 200;
  View shared0 = allocate(Stream::create(c0), DType::u32, 256);
  std::atomic<int> failures{0};
  auto drive = [&](Context own, int value) {
    try {
      Stream s = Stream::create(own);
      for (int i = 0; i < kRounds; ++i) {
        View mine = allocate(s, DType::u32, 256);
        (void)fill(s, mine, static_cast<std::uint32_t>(value));
        // Both threads copy into device 0's buffer: the leases order them.
        (void)copy(s, mine, shared0);
      }
      if (!platform().wait_for_retirement(kPatience)) ++failures;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      ++failures;
    }
  };
  std::thread t0(drive, c0, 10), t1(drive, c1, 11);
  t0.join();
  t1.join();
  EXPECT_EQ(failures.load(), 0);
  const std::vector<std::uint32_t> got = read_u32(Stream::create(c0), shared0);
  EXPECT_TRUE(got == std::vector<std::uint32_t>(256, 10) || got == std::vector<std::uint32_t>(256, 11));
  ASSERT_TRUE(platform().wait_for_retirement(kPatience));
  EXPECT_EQ(c1.stats().live_allocations, 0U);
  EXPECT_EQ(c0.stats().live_allocations, 1U);
}

}  // namespace
}  // namespace tandem::test
