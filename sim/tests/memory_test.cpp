// Out of memory ends in a RunError that says what the run needed: a world that cannot fit under
// the process's RLIMIT_AS is refused before any rank starts, and ranks that run out of memory while
// running fail with the figures. Each case runs in a child with a lowered RLIMIT_AS.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim/run.hpp"
#include "sim/memory_budget.hpp"

namespace {

using dist::sim::Cluster;
using ::testing::HasSubstr;

// Runs `body` in a child whose address space may grow by `extra` bytes; returns what it wrote
// (the RunError's message, or what went wrong instead).
std::string in_child_with_headroom(std::size_t extra, const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const rlim_t limit = dist::sim::address_space_in_use() + extra;
    const rlimit lowered{limit, limit};
    std::string out = setrlimit(RLIMIT_AS, &lowered) == 0 ? body() : "setrlimit failed";
    if (write(fds[1], out.data(), out.size()) < 0) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, buffer + n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status))
    text += "\n(child ended by signal " + std::to_string(WTERMSIG(status)) + ")";
  return text;
}

std::string run_error_of(const Cluster& cluster, const std::function<void()>& fn) {
  try {
    dist::sim::run(cluster, fn);
  } catch (const dist::sim::RunError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a RunError: ") + e.what();
  }
  return "the run succeeded";
}

bool under_sanitizer() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

TEST(OutOfMemory, AWorldThatCannotFitIsRefusedBeforeItStarts) {
  if (under_sanitizer()) GTEST_SKIP() << "a sanitizer's shadow memory needs more than RLIMIT_AS";
  const Cluster huge{
      .nodes = 8192, .ranks_per_node = 8, .schedule = dist::sim::Schedule::deterministic};
  const std::string message = in_child_with_headroom(
      std::size_t{1} << 30, [&] { return run_error_of(huge, [] { dist::barrier(); }); });
  EXPECT_THAT(message, HasSubstr("refused before starting"));
  EXPECT_THAT(message, HasSubstr("65536 ranks as fibers need at least"));
  EXPECT_THAT(message, HasSubstr("RLIMIT_AS leaves this process"));
}

TEST(OutOfMemory, RanksThatRunOutWhileRunningFailWithTheFigures) {
  if (under_sanitizer()) GTEST_SKIP() << "a sanitizer's shadow memory needs more than RLIMIT_AS";
  for (const auto schedule :
       {dist::sim::Schedule::deterministic, dist::sim::Schedule::concurrent}) {
    Cluster c{.nodes = 1, .ranks_per_node = 8, .schedule = schedule, .stack_size = 256 * 1024};
    const std::string message = in_child_with_headroom(std::size_t{512} << 20, [&] {
      return run_error_of(c, [] {
        std::vector<char> big(std::size_t{256} << 20, 1);  // 8 ranks x 256 MiB > 512 MiB
        dist::barrier();
        std::vector<float> v{big[12345] * 1.0f};
        dist::all_reduce(v);
      });
    });
    EXPECT_THAT(message, HasSubstr("out of memory")) << dist::sim::to_string(c);
    EXPECT_THAT(message, HasSubstr("8 ranks as")) << message;
    EXPECT_THAT(message, HasSubstr("at its peak")) << message;
  }
}

}  // namespace
