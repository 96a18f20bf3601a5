// SPDX-License-Identifier: Apache-2.0
#include "files.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace tandem::cli {

namespace fs = std::filesystem;

std::optional<std::string> read_file(const std::string& path, std::string& why) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    why = path + ": is a directory, expected a scenario file";
    return std::nullopt;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    why = path + ": cannot open the file";
    return std::nullopt;
  }
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return text;
}

bool out_file_writable(const std::string& path, std::string& why) {
  std::error_code ec;
  const fs::path p(path);
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    why = "--out " + path + ": the folder '" + folder.string() + "' does not exist";
    return false;
  }
  const bool exists = fs::exists(p, ec);
  if (access(exists ? p.c_str() : folder.c_str(), W_OK) != 0) {
    why = "--out " + path + ": " + (exists ? "the file" : "the folder '" + folder.string() + "'") +
          " is not writable";
    return false;
  }
  return true;
}

}  // namespace tandem::cli
