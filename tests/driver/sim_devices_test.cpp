// SPDX-License-Identifier: Apache-2.0
// Unit tests of the simulated device (SimBackend): devices, contexts, and two devices (peer access,
// cross-device waits). Each test is named after the rule of sim_backend.hpp / backend.hpp it checks; the test
// kernels and the fixture are in sim_test_support.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "driver/sim_test_support.hpp"
#include "tandem/driver/sim_backend.hpp"

namespace tandem::driver {
namespace {

using namespace std::chrono_literals;
using namespace sim_test;

// --- devices and contexts -------------------------------------------------------------------

TEST_F(SimBackendTest, DevicesReportDistinctInfoAndOwnMemory) {
  SimConfig cfg;
  cfg.devices = 2;
  cfg.memory_bytes = 1 << 20;
  make_backend(cfg);
  int count = 0;
  ASSERT_TRUE(Ok(*sim_, sim_->device_count(count)));
  EXPECT_EQ(count, 2);
  EXPECT_EQ(sim_->name(), "sim");
  EXPECT_EQ(sim_->driver_version(), "tandem-sim 1");

  DeviceInfo d0;
  DeviceInfo d1;
  ASSERT_TRUE(Ok(*sim_, sim_->device_info(0, d0)));
  ASSERT_TRUE(Ok(*sim_, sim_->device_info(1, d1)));
  EXPECT_EQ(d0.name, "tandem sim device 0");
  EXPECT_EQ(d1.name, "tandem sim device 1");
  EXPECT_EQ(d0.pci_bus_id, "0000:00:00.0");
  EXPECT_EQ(d1.pci_bus_id, "0000:00:01.0");
  EXPECT_EQ(d1.ordinal, 1);
  EXPECT_EQ(d0.uuid.rfind("SIM-", 0), 0U) << d0.uuid;
  EXPECT_NE(d0.uuid, d1.uuid);
  EXPECT_EQ(d0.cc_major, 9);
  EXPECT_EQ(d0.cc_minor, 0);
  EXPECT_EQ(d0.total_bytes, std::size_t{1} << 20);
  EXPECT_EQ(d0.multiprocessors, 132);
  DeviceInfo bad;
  EXPECT_EQ(sim_->device_info(2, bad).status, Status::invalid_value);

  SimBackend other(cfg);  // another instance: other uuids
  DeviceInfo other0;
  ASSERT_TRUE(Ok(other, other.device_info(0, other0)));
  EXPECT_NE(other0.uuid, d0.uuid);

  // Each device has its own capacity.
  ContextHandle ctx1;
  ASSERT_TRUE(Ok(*sim_, sim_->primary_context_retain(1, ctx1)));
  int ordinal = -1;
  ASSERT_TRUE(Ok(*sim_, sim_->context_device(ctx1, ordinal)));
  EXPECT_EQ(ordinal, 1);
  DevicePtr all = 0;
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc(ctx_, std::size_t{1} << 20, all)));
  std::size_t free0 = 0;
  std::size_t free1 = 0;
  std::size_t total = 0;
  ASSERT_TRUE(Ok(*sim_, sim_->mem_info(ctx_, free0, total)));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_info(ctx1, free1, total)));
  EXPECT_EQ(free0, 0U);
  EXPECT_EQ(free1, std::size_t{1} << 20);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx1, all)));
}

TEST_F(SimBackendTest, PrimaryContextIsReferenceCounted) {
  ContextHandle again;
  ASSERT_TRUE(Ok(*sim_, sim_->primary_context_retain(0, again)));
  EXPECT_EQ(again, ctx_);
  ContextHandle separate;
  ASSERT_TRUE(Ok(*sim_, sim_->context_create(0, separate)));
  EXPECT_NE(separate, ctx_);
  int ordinal = -1;
  ASSERT_TRUE(Ok(*sim_, sim_->context_device(separate, ordinal)));
  EXPECT_EQ(ordinal, 0);
  EXPECT_EQ(sim_->context_destroy(ctx_).status, Status::invalid_value);  // primary: release it
  ASSERT_TRUE(Ok(*sim_, sim_->context_destroy(separate)));
  EXPECT_EQ(sim_->context_device(separate, ordinal).status, Status::invalid_handle);

  ASSERT_TRUE(Ok(*sim_, sim_->primary_context_release(0)));
  ASSERT_TRUE(Ok(*sim_, sim_->context_device(ctx_, ordinal)));  // still retained once
  ASSERT_TRUE(Ok(*sim_, sim_->primary_context_release(0)));
  EXPECT_EQ(sim_->context_device(ctx_, ordinal).status, Status::invalid_handle);
  EXPECT_EQ(sim_->primary_context_release(0).status, Status::invalid_value);
  EXPECT_EQ(sim_->primary_context_retain(5, again).status, Status::invalid_value);
}

}  // namespace
}  // namespace tandem::driver

// --- several devices (issue #6) ----------------------------------------------------

namespace tandem::driver {
namespace {

class SimTwoDevices : public SimBackendTest {
 protected:
  void SetUp() override {
    SimConfig cfg;
    cfg.devices = 2;
    cfg.memory_bytes = std::size_t{1} << 20;
    make_backend(cfg);
    ASSERT_TRUE(Ok(*sim_, sim_->primary_context_retain(1, ctx1_)));
  }
  ContextHandle ctx1_;
};

TEST_F(SimTwoDevices, EachDeviceHasItsOwnFreeMemory) {
  std::size_t free0 = 0, free1 = 0, total = 0;
  const DevicePtr p = alloc(4096);  // device 0
  ASSERT_TRUE(Ok(*sim_, sim_->mem_info(ctx_, free0, total)));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_info(ctx1_, free1, total)));
  EXPECT_EQ(free0 + 4096, total);
  EXPECT_EQ(free1, total);
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free(ctx_, p)));
}

TEST_F(SimTwoDevices, PeerAccessIsReportedAndNeverToItself) {
  bool can = true;
  ASSERT_TRUE(Ok(*sim_, sim_->device_can_access_peer(0, 0, can)));
  EXPECT_FALSE(can);
  ASSERT_TRUE(Ok(*sim_, sim_->device_can_access_peer(0, 1, can)));
  EXPECT_TRUE(can);
  EXPECT_EQ(sim_->device_can_access_peer(0, 2, can).status, Status::invalid_value);
  EXPECT_EQ(sim_->context_enable_peer_access(ctx_, ctx_).status, Status::invalid_value);
}

TEST_F(SimTwoDevices, CopyAcrossDevicesNeedsPeerAccessAndAPoolGrant) {
  StreamHandle s = stream();  // device 0
  PoolHandle pool1;
  ASSERT_TRUE(Ok(*sim_, sim_->pool_create(ctx1_, pool1)));
  StreamHandle s1;
  ASSERT_TRUE(Ok(*sim_, sim_->stream_create(ctx1_, s1)));
  DevicePtr remote = 0;  // pool memory of device 1
  ASSERT_TRUE(Ok(*sim_, sim_->mem_alloc_async(ctx1_, pool1, 64, s1, remote)));
  const DevicePtr local = upload_ints(s, std::vector<std::int32_t>(16, 4));

  EXPECT_EQ(sim_->memcpy_async(ctx_, remote, local, 64, s).status, Status::not_permitted);
  EXPECT_NE(sim_->describe(sim_->memcpy_async(ctx_, remote, local, 64, s)).find("peer access"),
            std::string::npos);
  ASSERT_TRUE(Ok(*sim_, sim_->context_enable_peer_access(ctx_, ctx1_)));
  ASSERT_TRUE(Ok(*sim_, sim_->context_enable_peer_access(ctx_, ctx1_)));  // already enabled: ok
  EXPECT_EQ(sim_->memcpy_async(ctx_, remote, local, 64, s).status, Status::not_permitted)
      << "pool memory of device 1 needs its pool's grant too";
  ASSERT_TRUE(Ok(*sim_, sim_->pool_grant_access(ctx1_, pool1, 0)));
  ASSERT_TRUE(Ok(*sim_, sim_->memcpy_async(ctx_, remote, local, 64, s)));
  sync(s);
  std::vector<std::int32_t> out(16);
  ASSERT_TRUE(Ok(*sim_, sim_->download_async(ctx1_, out.data(), remote, 64, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_synchronize(ctx1_, s1)));
  EXPECT_EQ(out, std::vector<std::int32_t>(16, 4));
  ASSERT_TRUE(Ok(*sim_, sim_->mem_free_async(ctx1_, remote, s1)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_synchronize(ctx1_, s1)));
}

TEST_F(SimTwoDevices, AStreamWaitsForAnEventOfAnotherDevice) {
  StreamHandle s0 = stream();
  StreamHandle s1;
  ASSERT_TRUE(Ok(*sim_, sim_->stream_create(ctx1_, s1)));
  EventHandle e = event();  // of device 0
  ASSERT_TRUE(Ok(*sim_, launch(kGate, s0, {&arg_})));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx_, e, s0)));
  ASSERT_TRUE(Ok(*sim_, sim_->stream_wait_event(ctx1_, s1, e)));
  EventHandle after;
  ASSERT_TRUE(Ok(*sim_, sim_->event_create(ctx1_, after)));
  ASSERT_TRUE(Ok(*sim_, sim_->event_record(ctx1_, after, s1)));
  ASSERT_TRUE(probe_.gate.wait_arrivals(1));
  EXPECT_EQ(sim_->event_query(ctx1_, after).status, Status::not_ready);
  probe_.gate.open();
  ASSERT_TRUE(Ok(*sim_, sim_->event_synchronize(ctx1_, after)));
}

}  // namespace
}  // namespace tandem::driver
