// SPDX-License-Identifier: Apache-2.0
// files.hpp — the command's file checks shared by its subcommands.
#pragma once

#include <optional>
#include <string>

namespace tandem::cli {

// A scenario file's bytes, or nullopt with `why` ("PATH: is a directory...",
// "PATH: cannot open the file").
[[nodiscard]] std::optional<std::string> read_file(const std::string& path, std::string& why);

// An output file named by --out can be written (checked before anything runs:
// a long run must not end with nowhere to put its result); else `why` says why.
[[nodiscard]] bool out_file_writable(const std::string& path, std::string& why);

}  // namespace tandem::cli
