// SPDX-License-Identifier: Apache-2.0
#include "reference_run.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace tandem::cli {

namespace fs = std::filesystem;

extern "C" char** environ;  // NOLINT: POSIX's own declaration

ReferenceRun::ReferenceRun(std::vector<std::pair<std::string, std::string>> env, std::string backend)
    : env_(std::move(env)), backend_(std::move(backend)) {
  std::string templ = (fs::temp_directory_path() / "tandem-shrink-ref-XXXXXX").string();
  if (::mkdtemp(templ.data()) != nullptr) dir_ = templ;
}

ReferenceRun::~ReferenceRun() {
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

bool ReferenceRun::passes(const std::string& text) {
  if (dir_.empty()) return false;
  const std::string file = dir_ + "/candidate.json";
  if (!(std::ofstream(file, std::ios::binary) << text).flush()) return false;
  const std::string out = dir_ + "/";
  // The child's environment: ours with the reference's names replaced. The
  // runtime has threads of its own by now, so posix_spawn, not fork + setenv.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    const std::string name(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
    bool replaced = false;
    for (const auto& kv : env_) replaced = replaced || kv.first == name;
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto& [name, value] : env_) env.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  // "file": the file's own backend, as `tandem run` without --backend.
  std::vector<std::string> args{"tandem", "run", "--quiet", "--out", out, file};
  if (backend_ != "file") args.insert(args.begin() + 2, {"--backend", backend_});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()) != 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool parse_env_assignment(const std::string& s, std::pair<std::string, std::string>& out) {
  const std::size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  out = {s.substr(0, eq), s.substr(eq + 1)};
  return true;
}

}  // namespace tandem::cli
