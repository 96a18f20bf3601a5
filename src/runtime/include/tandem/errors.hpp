// SPDX-License-Identifier: Apache-2.0
// tandem/errors.hpp — what the runtime throws.
//
// One exception type with a stable code (spec/scenario-format.md §4); the
// message says what was asked, what was found and the ids involved. Every
// throwing call leaves the runtime consistent: nothing leaks, nothing is
// freed early, and a handle passed by rvalue is left intact when the call
// fails.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tandem/base/access_mode.hpp"  // access_mode_name, used in ConflictError's text
#include "tandem/driver/types.hpp"

namespace tandem {

enum class ErrorCode : std::uint8_t {
  aliased,          // ownership transfer or type change on a non-unique allocation
  non_contiguous,   // an operation that needs contiguous memory got a strided view
  conflict,         // reject policy: the access conflicts with a held lease
  out_of_range,     // slice/shape/index/length outside what the view holds
  device_mismatch,  // views of another device or context than the stream's
  invalid_dtype,    // element type not allowed here (or bool bytes not 0/1)
  out_of_memory,
  invalid_handle,  // a handle that is empty, moved-from or consumed
  driver,          // the driver reported an error
  timeout,
  unsupported,
};

[[nodiscard]] std::string_view error_code_name(ErrorCode c) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// The reject policy's error: the held lease and the requested access.
struct LeaseInfo {
  std::uint64_t offset = 0;  // bytes from the allocation's start
  std::uint64_t bytes = 0;
  driver::AccessMode mode = driver::AccessMode::read;
  std::uint64_t stream_id = 0;
  std::uint64_t submission_id = 0;  // 0 for the requested access
};

class ConflictError : public Error {
 public:
  ConflictError(std::uint64_t allocation_id, const LeaseInfo& held, const LeaseInfo& requested);
  std::uint64_t allocation_id;
  LeaseInfo held;
  LeaseInfo requested;
};

}  // namespace tandem
