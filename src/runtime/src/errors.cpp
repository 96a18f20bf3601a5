// SPDX-License-Identifier: Apache-2.0
#include "tandem/errors.hpp"

#include <sstream>

namespace tandem {

std::string_view error_code_name(ErrorCode c) noexcept {
  switch (c) {
    case ErrorCode::aliased:
      return "aliased";
    case ErrorCode::non_contiguous:
      return "non_contiguous";
    case ErrorCode::conflict:
      return "conflict";
    case ErrorCode::out_of_range:
      return "out_of_range";
    case ErrorCode::device_mismatch:
      return "device_mismatch";
    case ErrorCode::invalid_dtype:
      return "invalid_dtype";
    case ErrorCode::out_of_memory:
      return "out_of_memory";
    case ErrorCode::invalid_handle:
      return "invalid_handle";
    case ErrorCode::driver:
      return "driver";
    case ErrorCode::timeout:
      return "timeout";
    case ErrorCode::unsupported:
      return "unsupported";
  }
  return "unknown";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string(error_code_name(code)) + ": " + message), code_(code) {}

namespace {
std::string describe_conflict(std::uint64_t id, const LeaseInfo& held, const LeaseInfo& req) {
  std::ostringstream m;
  m << "access to allocation " << id << " bytes [" << req.offset << ", " << req.offset + req.bytes << ") as "
    << access_mode_name(req.mode) << " on stream " << req.stream_id
    << " conflicts with the lease of submission " << held.submission_id << " on stream " << held.stream_id
    << " holding bytes [" << held.offset << ", " << held.offset + held.bytes << ") as "
    << access_mode_name(held.mode) << " (conflict policy: reject; nothing was submitted)";
  return m.str();
}
}  // namespace

ConflictError::ConflictError(std::uint64_t allocation_id_, const LeaseInfo& held_,
                             const LeaseInfo& requested_)
    : Error(ErrorCode::conflict, describe_conflict(allocation_id_, held_, requested_)),
      allocation_id(allocation_id_),
      held(held_),
      requested(requested_) {}

}  // namespace tandem
