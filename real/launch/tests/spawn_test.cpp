// dist::spawn: workers as forked processes of a gloo world; a failing worker is named with its
// exception and exit status; a worker killed by a signal; the deadline; bad arguments.
#include "dist/real/spawn.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "dist/dist.hpp"

namespace {

using namespace std::chrono_literals;

std::string temp_dir() {
  char pattern[] = "/tmp/dist_spawn_XXXXXX";
  return ::mkdtemp(pattern);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Spawn, EveryWorkerRunsAsOneRankOfTheWorld) {
  const std::string dir = temp_dir();
  dist::spawn(3, [&] {
    std::vector<std::int64_t> v{dist::get_rank() + 1};
    dist::all_reduce(v);
    const auto names = dist::all_gather_object(dist::get_rank() * 10);
    std::ofstream(dir + "/" + std::to_string(dist::get_rank()))
        << dist::get_rank() << "/" << dist::get_world_size() << " local " << dist::get_local_rank()
        << "/" << dist::get_local_size() << " sum " << v[0] << " names " << names[2];
  }, {.timeout = 20s, .deadline = 60s});
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(read_file(dir + "/" + std::to_string(r)),
              std::to_string(r) + "/3 local " + std::to_string(r) + "/3 sum 6 names 20");
  EXPECT_FALSE(dist::is_distributed()) << "the parent stays non-distributed";
}

TEST(Spawn, AThrowingWorkerIsNamedWithItsException) {
  try {
    dist::spawn(3, [] {
      if (dist::get_rank() == 1) throw std::invalid_argument("bad shard 7");
      dist::barrier();  // the others wait in a collective and then lose rank 1
    }, {.timeout = 10s, .deadline = 60s});
    FAIL() << "spawn returned";
  } catch (const dist::SpawnError& e) {
    EXPECT_EQ(e.failed_rank(), 1);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("dist::spawn: rank 1 of 3 failed: exit status 1: std::invalid_argument: "
                         "bad shard 7", 0), 0u) << what;
    ASSERT_EQ(e.outcomes().size(), 3u);
    EXPECT_EQ(e.outcomes()[1].error, "std::invalid_argument: bad shard 7");
    for (int r : {0, 2}) EXPECT_NE(e.outcomes()[static_cast<std::size_t>(r)].exit_status, 0) << what;
  }
}

TEST(Spawn, AWorkerKilledByASignalIsNamed) {
  const auto start = std::chrono::steady_clock::now();
  try {
    dist::spawn(2, [] {
      dist::barrier();  // both are past init_dist (a rank killed in the rendezvous fails it)
      if (dist::get_rank() == 0) std::this_thread::sleep_for(100ms), ::raise(SIGKILL);
      std::this_thread::sleep_for(30s);  // not in a collective: only spawn's stop can end it
    }, {.timeout = 10s, .grace = 200ms});
    FAIL() << "spawn returned";
  } catch (const dist::SpawnError& e) {
    EXPECT_EQ(e.failed_rank(), 0);
    EXPECT_NE(std::string(e.what()).find("rank 0 of 2 failed: killed by signal 9"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.outcomes()[1].signal, SIGTERM) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Spawn, TheDeadlineKillsWhatIsStillRunning) {
  try {
    dist::spawn(2, [] {
      if (dist::get_rank() == 1) std::this_thread::sleep_for(30s);
    }, {.timeout = 10s, .deadline = 1500ms});
    FAIL() << "spawn returned";
  } catch (const dist::TimeoutError& e) {
    EXPECT_EQ(e.missing_ranks(), std::vector<int>{1});
    EXPECT_NE(std::string(e.what()).find("rank(s) 1 still running"), std::string::npos) << e.what();
  }
}

TEST(Spawn, RejectsBadArguments) {
  EXPECT_THROW(dist::spawn(0, [] {}), dist::InvalidArgument);
}

}  // namespace
