// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the scenario loader tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tandem::scenario::test {

inline std::filesystem::path data_dir() { return TANDEM_SCENARIO_TEST_DIR; }

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::filesystem::path> files_in(const std::string& sub, const std::string& ext) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(data_dir() / sub))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tandem::scenario::test
