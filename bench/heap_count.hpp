// SPDX-License-Identifier: Apache-2.0
// heap_count.hpp — tandem's own host heap, measured through the allocator.
//
// tandem_bench replaces the global operator new and delete (heap_count.cpp)
// with wrappers that cost one relaxed load and a branch while nobody counts.
// While a Window is open, every block operator new hands out carries a
// 16-byte header in front of it: its requested size and whose it is,
// decided on the allocating thread when it is made:
//
//   driver   made inside a driver call: the Backend is wrapped
//            (make_driver_scoped_backend) so that every call runs under a
//            Scope(Kind::driver), whichever thread of tandem's makes it
//   bench    made under a Scope(Kind::bench): the benchmark's own
//   tandem   everything else, on any thread: tandem's calls on the
//            measuring thread, and its retirement thread (tandem_other)
//
// A tagged block is taken off its owner's count when it is freed, by any
// thread, whenever (the header says whose it was). A block made before the
// window and freed inside it carries no header: it is taken off the count
// of the freeing thread's kind (its size from malloc_usable_size) and shown
// apart (untagged_*), so that a figure that leans on such frees says so.
//
// Bytes are glibc's chunk of the requested size, what the block costs the
// heap: the size plus 8 bytes of malloc header, rounded up to 16, at least
// 32 (the wrapper's own header is not counted). Aligned blocks count the
// same (glibc splits the alignment's slack off as free chunks).
//
// Not available (available() false, with why) under AddressSanitizer or
// ThreadSanitizer, which replace operator new themselves, and off glibc.
// Under valgrind's memcheck the delete wrapper's check of the word before a
// block reads malloc's red zone: use the counting benchmarks with callgrind
// or without valgrind.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tandem/driver/backend.hpp"

namespace tandem_bench::heap {

enum class Kind : std::uint8_t { tandem = 0, driver = 1, bench = 2 };

// Where a block's bytes are counted: tandem's on the measuring thread and
// on other threads (retirement), the driver's, the benchmark's.
enum Account : std::uint8_t { tandem_main = 0, tandem_other = 1, driver = 2, bench = 3 };
inline constexpr std::size_t kAccounts = 4;

// False, with the reason, where counting cannot work (see above).
[[nodiscard]] bool available(std::string& why);

// Allocations made on this thread while a Scope lives are of kind `k`
// (nested scopes: the innermost).
class Scope {
 public:
  explicit Scope(Kind k) noexcept;
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  std::uint8_t saved_;
};

// Live heap per account: bytes and blocks still allocated, of blocks made
// while counting; untagged_*: frees of blocks made before (already taken
// off bytes/blocks).
struct Counts {
  std::array<std::int64_t, kAccounts> bytes{};
  std::array<std::int64_t, kAccounts> blocks{};
  std::array<std::int64_t, kAccounts> requested{};  // the sizes asked for
  std::array<std::int64_t, kAccounts> untagged_bytes{};
  std::array<std::int64_t, kAccounts> untagged_blocks{};
  // tandem's live tagged blocks (both of its accounts) by requested size:
  // [n] for n <= kMaxSized, [kMaxSized + 1] for anything larger.
  static constexpr std::size_t kMaxSized = 4096;
  std::array<std::int64_t, kMaxSized + 2> tandem_by_size{};

  [[nodiscard]] std::int64_t tandem_bytes() const { return bytes[tandem_main] + bytes[tandem_other]; }
  [[nodiscard]] std::int64_t tandem_blocks() const { return blocks[tandem_main] + blocks[tandem_other]; }
  [[nodiscard]] Counts since(const Counts& before) const;
};

// Counting, from construction to close(); one window at a time, opened and
// closed on the measuring thread (its tandem allocations: tandem_main).
// close() returns what the window added (and freed) per account.
class Window {
 public:
  Window();  // throws std::logic_error when another window is open
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  Counts close();

 private:
  Counts start_;
  bool open_ = true;
};

// Every call of `inner` made under Scope(Kind::driver).
std::unique_ptr<tandem::driver::Backend> make_driver_scoped_backend(
    std::unique_ptr<tandem::driver::Backend> inner);

// glibc's chunk for a block of `n` requested bytes (see above).
[[nodiscard]] constexpr std::int64_t chunk_bytes(std::size_t n) noexcept {
  const std::size_t c = (n + 8 + 15) & ~std::size_t{15};
  return static_cast<std::int64_t>(c < 32 ? 32 : c);
}

}  // namespace tandem_bench::heap
