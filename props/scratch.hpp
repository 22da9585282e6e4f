// Scratch paths that the ranks of one run share (a property's tmpdir): every rank, whether a
// thread of this process or one of the processes of a gloo_procs run, names the same path, and
// no other run on this machine does. Also a guard that runs a block in a scratch directory.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace props {

// The process whose id names the run's paths: 0 for this process, or the first process of a
// multi-process run (its suite sets it while its tests run).
inline long& run_leader_pid() {
  static long pid = 0;
  return pid;
}

// A new path in the temporary directory (not created). Every process of a run asks for the same
// paths in the same order (they run the same cases), so the n-th call names the same path on all.
inline std::filesystem::path scratch_path(std::string_view what) {
  static unsigned long serial = 0;
  const long pid = run_leader_pid() != 0 ? run_leader_pid() : static_cast<long>(::getpid());
  return std::filesystem::temp_directory_path() /
         ("dist_props_" + std::string(what) + "_" + std::to_string(pid) + "_" +
          std::to_string(serial++));
}

// Creates `dir` and makes it this process's working directory until destroyed; then restores
// the previous one and removes `dir` if it is empty (whatever a run left in it stays).
// Processes of a *_procs run do not meet in a case that is discarded before it runs (more
// ranks than processes), so a faster process may already be removing that case's directory
// while a slower one creates or enters it. Either step can then fail (creating sees EEXIST from
// a directory that is gone by the time it checks; entering sees ENOENT), and only this process
// would fail the property, leaving the processes out of step: it creates and enters again.
class InScratchDirectory {
 public:
  explicit InScratchDirectory(std::filesystem::path dir)
      : dir_(std::move(dir)), previous_(std::filesystem::current_path()) {
    for (int attempt = 0;; ++attempt) {
      std::error_code failed;
      std::filesystem::create_directories(dir_, failed);
      if (!failed) std::filesystem::current_path(dir_, failed);
      if (!failed) return;
      if (attempt == 100)
        throw std::filesystem::filesystem_error("cannot enter the scratch directory", dir_, failed);
    }
  }
  ~InScratchDirectory() {
    std::error_code ignored;  // not empty, or another process of the run removed it already
    std::filesystem::current_path(previous_, ignored);
    std::filesystem::remove(dir_, ignored);
  }
  InScratchDirectory(const InScratchDirectory&) = delete;
  InScratchDirectory& operator=(const InScratchDirectory&) = delete;

 private:
  std::filesystem::path dir_;
  std::filesystem::path previous_;
};

}  // namespace props
