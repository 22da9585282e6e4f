// init_process_group and init_dist with ranks as real processes (fork): tcp://, env:// and file://
// worlds of 2 to 4 processes, worlds through the program's own TCPStore, FileStore or PrefixStore,
// the launchers' local groups, and a process killed mid-run, which every other process reports as
// a RankFailure naming it, within the timeout.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "dist/store.hpp"
#include "testing/ports.hpp"
#include "testing/processes.hpp"

namespace {

using namespace std::chrono_literals;
using test_support::run_processes;

// The work each process does once its world is up; returns a text every rank must agree on.
std::string exercise_world(int rank, int n) {
  if (dist::get_rank() != rank || dist::get_world_size() != n || dist::get_backend() != dist::Backend::gloo)
    throw std::runtime_error("wrong world: rank " + std::to_string(dist::get_rank()));
  std::vector<std::int64_t> v{rank + 1, 10 * rank};
  dist::all_reduce(v);
  const auto names = dist::all_gather_object(std::string("rank") + std::to_string(rank));
  std::vector<std::int64_t> b{rank == n - 1 ? 77 : 0};
  dist::broadcast(b, n - 1);
  dist::barrier();
  std::string text = std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(b[0]);
  for (const auto& s : names) text += "," + s;
  return text;
}

std::string expected_text(int n) {
  std::string text = std::to_string(n * (n + 1) / 2) + "," + std::to_string(10 * n * (n - 1) / 2) + ",77";
  for (int r = 0; r < n; ++r) text += ",rank" + std::to_string(r);
  return text;
}

void expect_all_ok(const std::vector<test_support::ProcessResult>& results, const std::string& text) {
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) {
    EXPECT_FALSE(r.hung) << "rank " << r.rank << " hung";
    EXPECT_TRUE(r.exited && r.status == 0) << "rank " << r.rank << ": " << r.report;
    EXPECT_EQ(r.report, "ok: " + text) << "rank " << r.rank;
  }
}

TEST(GlooProcesses, TcpInitMethod) {
  for (const int n : {2, 3, 4}) {
    const std::string url = "tcp://127.0.0.1:" + std::to_string(test_support::free_port());
    expect_all_ok(run_processes(n, [&](int rank) {
      dist::init_process_group(dist::Backend::gloo, url, rank, n, 20s);
      auto text = exercise_world(rank, n);
      dist::destroy_dist();
      if (dist::is_distributed()) throw std::runtime_error("still distributed after destroy_dist");
      return text;
    }, 60s), expected_text(n));
  }
}

TEST(GlooProcesses, EnvInitMethod) {
  const int n = 3;
  const std::string port = std::to_string(test_support::free_port());
  expect_all_ok(run_processes(n, [&](int rank) {
    ::setenv("MASTER_ADDR", "127.0.0.1", 1);
    ::setenv("MASTER_PORT", port.c_str(), 1);
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
    dist::init_process_group(dist::Backend::gloo);  // env:// by default
    auto text = exercise_world(rank, n);
    dist::destroy_dist();
    return text;
  }, 60s), expected_text(n));
}

// The process-wide context's ledger: destroy_dist names a Work never waited, once the world is
// closed (the process is then no longer distributed).
TEST(GlooProcesses, DestroyDistNamesAWorkNeverWaited) {
  const std::string url = "tcp://127.0.0.1:" + std::to_string(test_support::free_port());
  const auto results = run_processes(
      2,
      [&](int rank) {
    dist::init_process_group(dist::Backend::gloo, url, rank, 2, 20s);
    std::vector<std::int64_t> v{rank};
    auto work = dist::all_reduce_async(std::span<std::int64_t>(v));
    // gloo runs the group's calls in order: once a later blocking one returns, this one has
    // completed, and only its wait is missing (a barrier() would wait it).
    std::vector<std::int64_t> after{1};
    dist::all_reduce(after);
    try {
      dist::destroy_dist();
    } catch (const dist::InvalidArgument& e) {
      return std::string(dist::is_distributed() ? "still distributed: " : "closed: ") + e.what();
    }
    return std::string("no error");
      },
      60s);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results)
    EXPECT_EQ(r.report,
              "ok: closed: destroy_dist() was called with 1 Work never waited: all_reduce(op=sum, "
              "int64 x 1) on world #1. Call wait() on every Work (or see is_completed() return "
              "true) first: until then the operation may still read or write its buffers, and its "
              "error is lost")
        << "rank " << r.rank;
}

TEST(GlooProcesses, FileInitMethodRemovesItsFile) {
  const int n = 2;
  char pattern[] = "/tmp/dist_file_init_XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string path = dir + "/store";
  expect_all_ok(run_processes(n, [&](int rank) {
    dist::init_process_group(dist::Backend::gloo, "file://" + path, rank, n, 20s);
    auto text = exercise_world(rank, n);
    dist::destroy_dist();
    return text;
  }, 60s), expected_text(n));
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

// init_process_group through a store every process opened itself (torch's store=): the world
// works, and the program keeps using the store for its own keys (a compare_set elects the same
// leader on every rank).
std::string exercise_world_and_store(int rank, int n, dist::Store& store) {
  auto text = exercise_world(rank, n);
  const std::string leader = store.compare_set("leader", "", std::to_string(rank));
  if (store.num_keys() < 1) throw std::runtime_error("the store lost its keys");
  // The last use of the store: the master's may go once every rank is past this collective.
  const auto leaders = dist::all_gather_object(leader);
  for (const auto& l : leaders)
    if (l != leaders[0])
      throw std::runtime_error("ranks saw different leaders: " + l + ", " + leaders[0]);
  dist::destroy_dist();
  return text;
}

TEST(GlooProcesses, InitThroughATCPStore) {
  for (const int n : {2, 3}) {
    const int port = test_support::free_port();
    expect_all_ok(run_processes(
                      n,
                      [&](int rank) {
      // The master (rank 0) waits in its constructor until all n stores have connected.
      auto store = std::make_shared<dist::TCPStore>("127.0.0.1", port, n, rank == 0, 20s);
      dist::init_process_group(dist::Backend::gloo, store, rank, n, 20s);
      return exercise_world_and_store(rank, n, *store);
                      },
                      60s),
                  expected_text(n));
  }
}

TEST(GlooProcesses, InitThroughAFileStoreRemovesItsFile) {
  const int n = 3;
  char pattern[] = "/tmp/dist_store_init_XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string path = dir + "/store";
  expect_all_ok(run_processes(
                    n,
                    [&](int rank) {
    auto store = std::make_shared<dist::FileStore>(path, n);
    dist::init_process_group(dist::Backend::gloo, store, rank, n, 20s);
    return exercise_world_and_store(rank, n, *store);
                    },
                    60s),
                expected_text(n));
  EXPECT_FALSE(std::filesystem::exists(path));  // the last of the n FileStores removed it
  std::filesystem::remove_all(dir);
}

// Two worlds in turn through one TCPStore, each under a PrefixStore of its own.
TEST(GlooProcesses, TwoWorldsThroughPrefixesOfOneStore) {
  const int n = 2;
  const int port = test_support::free_port();
  expect_all_ok(run_processes(
                    n,
                    [&](int rank) {
    auto store = std::make_shared<dist::TCPStore>("127.0.0.1", port, n, rank == 0, 20s);
    std::string text;
    for (const char* prefix : {"first", "second"}) {
      auto view = std::make_shared<dist::PrefixStore>(prefix, store);
      dist::init_process_group(dist::Backend::gloo, view, rank, n, 20s);
      text += std::string(prefix) + ":" + exercise_world_and_store(rank, n, *view) + ";";
    }
    return text;
                    },
                    60s),
                "first:" + expected_text(n) + ";second:" + expected_text(n) + ";");
}

// Each survivor reports what it caught; `victim` is killed with SIGKILL after the first all_reduce.
std::vector<test_support::ProcessResult> kill_one(int n, int victim) {
  const std::string url = "tcp://127.0.0.1:" + std::to_string(test_support::free_port());
  return run_processes(n, [&](int rank) -> std::string {
    dist::init_process_group(dist::Backend::gloo, url, rank, n, 10s);
    std::vector<std::int64_t> v{1};
    dist::all_reduce(v);
    if (rank == victim) ::raise(SIGKILL);
    try {
      for (int i = 0; i < 1000; ++i) {
        dist::all_reduce(v);
        dist::barrier();
      }
    } catch (const dist::RankFailure& e) {
      return "rank_failure " + std::to_string(e.failed_rank()) + " | " + e.what();
    } catch (const dist::TimeoutError& e) {
      return std::string("timeout | ") + e.what();
    }
    return "no error";
  }, 40s);
}

void expect_everyone_names(const std::vector<test_support::ProcessResult>& results, int victim) {
  for (const auto& r : results) {
    EXPECT_FALSE(r.hung) << "rank " << r.rank << " hung";
    if (r.rank == victim) {
      EXPECT_EQ(r.signal, SIGKILL);
      continue;
    }
    EXPECT_EQ(r.report.rfind("ok: rank_failure " + std::to_string(victim) + " |", 0), 0u)
        << "rank " << r.rank << ": " << r.report;
  }
}

TEST(GlooProcesses, AKilledProcessIsNamedByEveryOther) {
  const auto start = std::chrono::steady_clock::now();
  expect_everyone_names(kill_one(4, 2), 2);
  expect_everyone_names(kill_one(3, 2), 2);  // the highest rank: it connected to all others
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
}

TEST(GlooProcesses, KillingRankZeroWhichHostsTheStore) {
  expect_everyone_names(kill_one(3, 0), 0);
}

// init_dist with each launcher's environment, as the launcher would set it, in 4 processes laid
// out as 2 nodes of 2 ranks: the local groups follow the launcher's node and local ranks.
std::string local_layout_report() {
  std::vector<std::int64_t> v{dist::get_rank()};
  const auto local = dist::get_local_group();
  if (!local) throw std::runtime_error("no local group");
  dist::all_reduce(v, dist::ReduceOp::sum, *local);
  const std::string text = std::to_string(dist::get_local_rank()) + "/" +
                           std::to_string(dist::get_local_size()) + " sum " + std::to_string(v[0]);
  dist::destroy_dist();
  return text;
}

void expect_two_nodes_of_two(const std::vector<test_support::ProcessResult>& results) {
  const std::vector<std::string> expected{"ok: 0/2 sum 1", "ok: 1/2 sum 1", "ok: 0/2 sum 5",
                                          "ok: 1/2 sum 5"};
  ASSERT_EQ(results.size(), expected.size());
  for (const auto& r : results) {
    EXPECT_FALSE(r.hung) << "rank " << r.rank;
    EXPECT_EQ(r.report, expected[static_cast<std::size_t>(r.rank)]) << "rank " << r.rank;
  }
}

TEST(GlooProcesses, InitDistPytorchLauncherMakesNodeLocalGroups) {
  const std::string port = std::to_string(test_support::free_port());
  expect_two_nodes_of_two(run_processes(4, [&](int rank) {
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("WORLD_SIZE", "4", 1);
    ::setenv("LOCAL_RANK", std::to_string(rank % 2).c_str(), 1);
    ::setenv("LOCAL_WORLD_SIZE", "2", 1);
    ::setenv("GROUP_RANK", std::to_string(rank / 2).c_str(), 1);
    ::setenv("MASTER_ADDR", "127.0.0.1", 1);
    ::setenv("MASTER_PORT", port.c_str(), 1);
    if (dist::infer_launcher() != "pytorch") throw std::runtime_error("inferred " + dist::infer_launcher());
    dist::init_dist("pytorch", dist::Backend::gloo, {.timeout = 20s});
    return local_layout_report();
  }, 60s));
}

TEST(GlooProcesses, InitDistSlurmLauncherMakesNodeLocalGroups) {
  const int port = test_support::free_port();
  expect_two_nodes_of_two(run_processes(4, [&](int rank) {
    ::setenv("SLURM_PROCID", std::to_string(rank).c_str(), 1);
    ::setenv("SLURM_NTASKS", "4", 1);
    ::setenv("SLURM_NODELIST", "localhost", 1);
    ::setenv("SLURM_LOCALID", std::to_string(rank % 2).c_str(), 1);
    ::setenv("SLURM_NODEID", std::to_string(rank / 2).c_str(), 1);
    dist::init_dist("slurm", dist::Backend::gloo, {.timeout = 20s, .port = port});
    return local_layout_report();
  }, 60s));
}

// mpirun on one host: every rank on this node, local ranks as OpenMPI numbers them.
TEST(GlooProcesses, InitDistMpiLauncherOnOneHost) {
  const std::string port = std::to_string(test_support::free_port());
  const auto results = run_processes(3, [&](int rank) {
    ::setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3", 1);
    ::setenv("MASTER_ADDR", "127.0.0.1", 1);
    ::setenv("MASTER_PORT", port.c_str(), 1);
    dist::init_dist("mpi", dist::Backend::gloo, {.timeout = 20s});
    return local_layout_report();
  }, 60s);
  for (const auto& r : results)
    EXPECT_EQ(r.report, "ok: " + std::to_string(r.rank) + "/3 sum 3") << "rank " << r.rank;
}

}  // namespace
