// SPDX-License-Identifier: Apache-2.0
// heap_count.cpp — the counting operator new / delete of tandem_bench
// (heap_count.hpp says what is counted and why).
#include "heap_count.hpp"

#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "tandem/base/sanitizers.hpp"
#include "tandem/driver/forwarding_backend.hpp"

#if defined(TANDEM_ASAN) || defined(TANDEM_TSAN)
#define TANDEM_BENCH_HEAP_COUNT 0
#elif defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define TANDEM_BENCH_HEAP_COUNT 0
#endif
#endif
#if !defined(TANDEM_BENCH_HEAP_COUNT)
#if defined(__GLIBC__)
#define TANDEM_BENCH_HEAP_COUNT 1
#else
#define TANDEM_BENCH_HEAP_COUNT 0
#endif
#endif

#if TANDEM_BENCH_HEAP_COUNT
#include <malloc.h>
#endif

namespace tandem_bench::heap {

namespace {

// Static zero-initialised: usable by operator new before any constructor runs.
struct Totals {
  std::atomic<std::int64_t> bytes[kAccounts];
  std::atomic<std::int64_t> blocks[kAccounts];
  std::atomic<std::int64_t> requested[kAccounts];
  std::atomic<std::int64_t> untagged_bytes[kAccounts];
  std::atomic<std::int64_t> untagged_blocks[kAccounts];
  std::atomic<std::int64_t> by_size[Counts::kMaxSized + 2];
};
Totals g_totals;
std::atomic<bool> g_counting{false};
std::atomic<bool> g_window_open{false};
thread_local std::uint8_t t_kind = 0;  // Kind
thread_local bool t_measuring = false;

Counts snapshot() {
  Counts c;
  constexpr auto r = std::memory_order_relaxed;
  for (std::size_t a = 0; a < kAccounts; ++a) {
    c.bytes[a] = g_totals.bytes[a].load(r);
    c.blocks[a] = g_totals.blocks[a].load(r);
    c.requested[a] = g_totals.requested[a].load(r);
    c.untagged_bytes[a] = g_totals.untagged_bytes[a].load(r);
    c.untagged_blocks[a] = g_totals.untagged_blocks[a].load(r);
  }
  for (std::size_t i = 0; i < c.tandem_by_size.size(); ++i) c.tandem_by_size[i] = g_totals.by_size[i].load(r);
  return c;
}

#if TANDEM_BENCH_HEAP_COUNT

constexpr std::uint64_t kMagic = 0xC0FFEE7A11DE4B5DULL;  // never a glibc chunk size (< 2^48)
constexpr std::uint64_t kSizeMask = (std::uint64_t{1} << 48) - 1;

std::uint8_t current_account() noexcept {
  switch (static_cast<Kind>(t_kind)) {
    case Kind::driver:
      return driver;
    case Kind::bench:
      return bench;
    case Kind::tandem:
      break;
  }
  return t_measuring ? tandem_main : tandem_other;
}

void account(std::uint8_t a, std::size_t n, std::int64_t sign) noexcept {
  constexpr auto r = std::memory_order_relaxed;
  g_totals.bytes[a].fetch_add(sign * chunk_bytes(n), r);
  g_totals.blocks[a].fetch_add(sign, r);
  g_totals.requested[a].fetch_add(sign * static_cast<std::int64_t>(n), r);
  if (a == tandem_main || a == tandem_other) {
    g_totals.by_size[n <= Counts::kMaxSized ? n : Counts::kMaxSized + 1].fetch_add(sign, r);
  }
}

// A block with the 16-byte header in front: [size | account << 48 |
// log2(offset) << 56][kMagic], `offset` bytes after what malloc returned.
void* tagged(std::size_t n, std::size_t align) noexcept {
  if (n > kSizeMask - 4096) return nullptr;
  const std::size_t off = align <= 16 ? 16 : align;
  void* raw = nullptr;
  if (off == 16) {
    raw = std::malloc(n + off);
  } else if (posix_memalign(&raw, off, n + off) != 0) {
    raw = nullptr;
  }
  if (raw == nullptr) return nullptr;
  unsigned char* u = static_cast<unsigned char*>(raw) + off;
  auto* h = reinterpret_cast<std::uint64_t*>(u) - 2;
  const std::uint8_t a = current_account();
  h[0] = static_cast<std::uint64_t>(n) | (std::uint64_t{a} << 48) |
         (static_cast<std::uint64_t>(__builtin_ctzll(off)) << 56);
  h[1] = kMagic;
  account(a, n, 1);
  return u;
}

void* plain(std::size_t n, std::size_t align) noexcept {
  if (n == 0) n = 1;
  if (align <= 16) return std::malloc(n);
  void* p = nullptr;
  return posix_memalign(&p, align, n) == 0 ? p : nullptr;
}

void* allocate(std::size_t n, std::size_t align) {
  for (;;) {
    void* p = g_counting.load(std::memory_order_relaxed) ? tagged(n, align) : plain(n, align);
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* allocate_nothrow(std::size_t n, std::size_t align) noexcept {
  try {
    return allocate(n, align);
  } catch (...) {
    return nullptr;
  }
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  auto* h = static_cast<std::uint64_t*>(p) - 2;
  // For a block without a header this word is glibc's chunk size field.
  if (h[1] == kMagic) {
    const std::uint64_t w = h[0];
    const auto n = static_cast<std::size_t>(w & kSizeMask);
    const auto a = static_cast<std::uint8_t>((w >> 48) & 0xff);
    const std::size_t off = std::size_t{1} << ((w >> 56) & 0xff);
    h[1] = 0;
    account(a, n, -1);
    std::free(static_cast<unsigned char*>(p) - off);
    return;
  }
  if (g_counting.load(std::memory_order_relaxed)) {
    constexpr auto r = std::memory_order_relaxed;
    const auto bytes = static_cast<std::int64_t>(malloc_usable_size(p) + 8);
    const std::uint8_t a = current_account();
    g_totals.bytes[a].fetch_sub(bytes, r);
    g_totals.blocks[a].fetch_sub(1, r);
    g_totals.untagged_bytes[a].fetch_add(bytes, r);
    g_totals.untagged_blocks[a].fetch_add(1, r);
  }
  std::free(p);
}

#endif  // TANDEM_BENCH_HEAP_COUNT

namespace d = tandem::driver;

#define TANDEM_DRIVER_SCOPED(name, params, args) \
  d::Result name params noexcept override {      \
    const Scope scope(Kind::driver);             \
    return ForwardingBackend::name args;         \
  }

class DriverScopedBackend final : public d::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  [[nodiscard]] std::string driver_version() const override {
    const Scope scope(Kind::driver);
    return ForwardingBackend::driver_version();
  }
  [[nodiscard]] std::string describe(const d::Result& r) const override {
    const Scope scope(Kind::driver);
    return ForwardingBackend::describe(r);
  }
  TANDEM_DRIVER_SCOPED(device_count, (int& out), (out))
  TANDEM_DRIVER_SCOPED(device_info, (int ordinal, d::DeviceInfo& out), (ordinal, out))
  TANDEM_DRIVER_SCOPED(primary_context_retain, (int ordinal, d::ContextHandle& out), (ordinal, out))
  TANDEM_DRIVER_SCOPED(primary_context_release, (int ordinal), (ordinal))
  TANDEM_DRIVER_SCOPED(context_create, (int ordinal, d::ContextHandle& out), (ordinal, out))
  TANDEM_DRIVER_SCOPED(context_destroy, (d::ContextHandle ctx), (ctx))
  TANDEM_DRIVER_SCOPED(context_device, (d::ContextHandle ctx, int& ordinal), (ctx, ordinal))
  TANDEM_DRIVER_SCOPED(device_can_access_peer, (int ordinal, int peer, bool& out), (ordinal, peer, out))
  TANDEM_DRIVER_SCOPED(context_enable_peer_access, (d::ContextHandle ctx, d::ContextHandle peer), (ctx, peer))
  TANDEM_DRIVER_SCOPED(pool_grant_access, (d::ContextHandle ctx, d::PoolHandle p, int peer), (ctx, p, peer))
  TANDEM_DRIVER_SCOPED(stream_create, (d::ContextHandle ctx, d::StreamHandle& out), (ctx, out))
  TANDEM_DRIVER_SCOPED(stream_destroy, (d::ContextHandle ctx, d::StreamHandle s), (ctx, s))
  TANDEM_DRIVER_SCOPED(stream_synchronize, (d::ContextHandle ctx, d::StreamHandle s), (ctx, s))
  TANDEM_DRIVER_SCOPED(stream_query, (d::ContextHandle ctx, d::StreamHandle s), (ctx, s))
  TANDEM_DRIVER_SCOPED(event_create, (d::ContextHandle ctx, d::EventHandle& out), (ctx, out))
  TANDEM_DRIVER_SCOPED(event_destroy, (d::ContextHandle ctx, d::EventHandle e), (ctx, e))
  TANDEM_DRIVER_SCOPED(event_record, (d::ContextHandle ctx, d::EventHandle e, d::StreamHandle s), (ctx, e, s))
  TANDEM_DRIVER_SCOPED(event_query, (d::ContextHandle ctx, d::EventHandle e), (ctx, e))
  TANDEM_DRIVER_SCOPED(event_synchronize, (d::ContextHandle ctx, d::EventHandle e), (ctx, e))
  TANDEM_DRIVER_SCOPED(stream_wait_event, (d::ContextHandle ctx, d::StreamHandle s, d::EventHandle e),
                       (ctx, s, e))
  TANDEM_DRIVER_SCOPED(pool_create, (d::ContextHandle ctx, d::PoolHandle& out), (ctx, out))
  TANDEM_DRIVER_SCOPED(pool_destroy, (d::ContextHandle ctx, d::PoolHandle p), (ctx, p))
  TANDEM_DRIVER_SCOPED(pool_trim, (d::ContextHandle ctx, d::PoolHandle p, std::size_t keep), (ctx, p, keep))
  TANDEM_DRIVER_SCOPED(mem_alloc_async,
                       (d::ContextHandle ctx, d::PoolHandle p, std::size_t bytes, d::StreamHandle s,
                        d::DevicePtr& out),
                       (ctx, p, bytes, s, out))
  TANDEM_DRIVER_SCOPED(mem_free_async, (d::ContextHandle ctx, d::DevicePtr ptr, d::StreamHandle s),
                       (ctx, ptr, s))
  TANDEM_DRIVER_SCOPED(mem_reuse_async,
                       (d::ContextHandle ctx, d::PoolHandle p, d::DevicePtr ptr, std::size_t bytes,
                        d::StreamHandle s),
                       (ctx, p, ptr, bytes, s))
  TANDEM_DRIVER_SCOPED(mem_alloc, (d::ContextHandle ctx, std::size_t bytes, d::DevicePtr& out),
                       (ctx, bytes, out))
  TANDEM_DRIVER_SCOPED(mem_free, (d::ContextHandle ctx, d::DevicePtr ptr), (ctx, ptr))
  TANDEM_DRIVER_SCOPED(mem_info, (d::ContextHandle ctx, std::size_t& free_bytes, std::size_t& total_bytes),
                       (ctx, free_bytes, total_bytes))
  TANDEM_DRIVER_SCOPED(memcpy_async,
                       (d::ContextHandle ctx, d::DevicePtr dst, d::DevicePtr src, std::size_t bytes,
                        d::StreamHandle s),
                       (ctx, dst, src, bytes, s))
  TANDEM_DRIVER_SCOPED(upload_async,
                       (d::ContextHandle ctx, d::DevicePtr dst, const void* src, std::size_t bytes,
                        d::StreamHandle s),
                       (ctx, dst, src, bytes, s))
  TANDEM_DRIVER_SCOPED(download_async,
                       (d::ContextHandle ctx, void* dst, d::DevicePtr src, std::size_t bytes,
                        d::StreamHandle s),
                       (ctx, dst, src, bytes, s))
  TANDEM_DRIVER_SCOPED(memset8_async,
                       (d::ContextHandle ctx, d::DevicePtr dst, std::uint8_t value, std::size_t count,
                        d::StreamHandle s),
                       (ctx, dst, value, count, s))
  TANDEM_DRIVER_SCOPED(kernel_function,
                       (d::ContextHandle ctx, const d::KernelSymbol& symbol, d::FunctionHandle& out),
                       (ctx, symbol, out))
  TANDEM_DRIVER_SCOPED(launch, (const d::LaunchRequest& request), (request))
  TANDEM_DRIVER_SCOPED(capture_begin, (d::ContextHandle ctx, d::StreamHandle s), (ctx, s))
  TANDEM_DRIVER_SCOPED(capture_end, (d::ContextHandle ctx, d::StreamHandle s, d::GraphHandle& out),
                       (ctx, s, out))
  TANDEM_DRIVER_SCOPED(graph_launch, (d::ContextHandle ctx, d::GraphHandle g, d::StreamHandle s), (ctx, g, s))
  TANDEM_DRIVER_SCOPED(graph_destroy, (d::ContextHandle ctx, d::GraphHandle g), (ctx, g))
};

#undef TANDEM_DRIVER_SCOPED

}  // namespace

bool available(std::string& why) {
#if TANDEM_BENCH_HEAP_COUNT
  why.clear();
  return true;
#else
  why = "heap counting needs glibc and a build without Address/ThreadSanitizer (they replace operator new)";
  return false;
#endif
}

Scope::Scope(Kind k) noexcept : saved_(t_kind) { t_kind = static_cast<std::uint8_t>(k); }
Scope::~Scope() { t_kind = saved_; }

Counts Counts::since(const Counts& before) const {
  Counts c;
  for (std::size_t a = 0; a < kAccounts; ++a) {
    c.bytes[a] = bytes[a] - before.bytes[a];
    c.blocks[a] = blocks[a] - before.blocks[a];
    c.requested[a] = requested[a] - before.requested[a];
    c.untagged_bytes[a] = untagged_bytes[a] - before.untagged_bytes[a];
    c.untagged_blocks[a] = untagged_blocks[a] - before.untagged_blocks[a];
  }
  for (std::size_t i = 0; i < c.tandem_by_size.size(); ++i)
    c.tandem_by_size[i] = tandem_by_size[i] - before.tandem_by_size[i];
  return c;
}

Window::Window() {
  if (g_window_open.exchange(true)) throw std::logic_error("heap::Window: another window is open");
  t_measuring = true;
  start_ = snapshot();
  g_counting.store(true, std::memory_order_seq_cst);
}

Window::~Window() {
  if (open_) (void)close();
}

Counts Window::close() {
  g_counting.store(false, std::memory_order_seq_cst);
  const Counts end = snapshot();
  t_measuring = false;
  open_ = false;
  g_window_open.store(false);
  return end.since(start_);
}

std::unique_ptr<tandem::driver::Backend> make_driver_scoped_backend(
    std::unique_ptr<tandem::driver::Backend> inner) {
  return std::make_unique<DriverScopedBackend>(std::move(inner));
}

}  // namespace tandem_bench::heap

#if TANDEM_BENCH_HEAP_COUNT

// The replaceable global allocation functions ([new.delete]): every form.
namespace hc = tandem_bench::heap;

void* operator new(std::size_t n) { return hc::allocate(n, 0); }
void* operator new[](std::size_t n) { return hc::allocate(n, 0); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return hc::allocate_nothrow(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return hc::allocate_nothrow(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return hc::allocate(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) {
  return hc::allocate(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hc::allocate_nothrow(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hc::allocate_nothrow(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { hc::release(p); }
void operator delete[](void* p) noexcept { hc::release(p); }
void operator delete(void* p, std::size_t) noexcept { hc::release(p); }
void operator delete[](void* p, std::size_t) noexcept { hc::release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { hc::release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { hc::release(p); }
void operator delete(void* p, std::align_val_t) noexcept { hc::release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { hc::release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { hc::release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { hc::release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { hc::release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { hc::release(p); }

#endif  // TANDEM_BENCH_HEAP_COUNT
