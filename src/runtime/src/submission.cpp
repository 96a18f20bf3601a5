// SPDX-License-Identifier: Apache-2.0
#include "submission.hpp"

namespace tandem::detail {

const char* submission_kind_name(SubmissionKind k) noexcept {
  switch (k) {
    case SubmissionKind::kernel:
      return "kernel";
    case SubmissionKind::copy:
      return "copy";
    case SubmissionKind::upload:
      return "upload";
    case SubmissionKind::download:
      return "download";
    case SubmissionKind::memset:
      return "memset";
    case SubmissionKind::graph_replay:
      return "graph replay";
    case SubmissionKind::marker:
      return "ordering marker";
  }
  return "?";
}

}  // namespace tandem::detail
