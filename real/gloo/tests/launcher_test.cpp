// init_dist's launchers in this process (a one-rank world): the variables each reads, the
// errors naming a missing one, the variables each sets (MMEngine's rules), SLURM node lists, and
// infer_launcher. The environment is cleared of launcher variables for each test.
#include "core/init/launcher.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <list>

#include "core/init/rendezvous.hpp"
#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "testing/ports.hpp"
#include "testing/processes.hpp"

namespace {

using namespace std::chrono_literals;
using test_support::ScopedEnv;

class Launcher : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"RANK",
                             "WORLD_SIZE",
                             "LOCAL_RANK",
                             "LOCAL_WORLD_SIZE",
                             "GROUP_RANK",
                             "MASTER_ADDR",
                             "MASTER_PORT",
                             "SLURM_PROCID",
                             "SLURM_NTASKS",
                             "SLURM_NODELIST",
                             "SLURM_LOCALID",
                             "SLURM_NODEID",
                             "OMPI_COMM_WORLD_LOCAL_RANK",
                             "OMPI_COMM_WORLD_LOCAL_SIZE",
                             "OMPI_COMM_WORLD_SIZE",
                             "OMPI_COMM_WORLD_RANK",
                             "PMI_RANK",
                             "PMI_SIZE",
                             "MPI_LOCALRANKID",
                             "MPI_LOCALNRANKS",
                             "GLOO_SOCKET_IFNAME",
                             "TORCHELASTIC_USE_AGENT_STORE",
                             "DIST_STORE_PORT"})
      env_.emplace_back(name, std::nullopt);
  }
  void TearDown() override {
    while (!env_.empty()) env_.pop_back();  // newest first, so each variable gets its old value
  }
  void set(const char* name, const std::string& value) { env_.emplace_back(name, value); }
  static std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "<unset>";
  }
  static std::string port() { return std::to_string(test_support::free_port()); }

  // init_dist must fail with InvalidArgument containing `needle`.
  static void expect_error(std::string_view launcher, const std::string& needle,
                           dist::InitOptions o = {}) {
    try {
      dist::init_dist(launcher, dist::Backend::gloo, o);
      ADD_FAILURE() << "init_dist succeeded; expected: " << needle;
      dist::destroy_dist();
    } catch (const dist::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  // After a successful init_dist: one rank, its own local group; then destroy.
  static void expect_one_rank_world() {
    EXPECT_EQ(dist::get_dist_info(), std::make_pair(0, 1));
    EXPECT_EQ(dist::get_local_rank(), 0);
    EXPECT_EQ(dist::get_local_size(), 1);
    EXPECT_TRUE(dist::get_local_group().has_value());
    dist::destroy_dist();
  }

  std::list<ScopedEnv> env_;
};

TEST_F(Launcher, UnknownLauncherIsInvalid) {
  expect_error("torchrun", "Invalid launcher type: torchrun");
}

TEST_F(Launcher, PytorchNamesMissingVariablesThenInitialises) {
  expect_error("pytorch", "RANK is not set");
  set("RANK", "0");
  expect_error("pytorch", "LOCAL_RANK is not set");
  set("LOCAL_RANK", "0");
  expect_error("pytorch", "MASTER_ADDR is not set");  // from env:// (MMEngine sets no default)
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", port());
  expect_error("pytorch", "WORLD_SIZE is not set");
  set("WORLD_SIZE", "1");
  dist::init_dist("pytorch", dist::Backend::gloo, {.timeout = 10s});
  expect_one_rank_world();
}

// Under torchrun its agent holds MASTER_PORT with a store of torch's protocol: dist's store moves
// to MASTER_PORT + 1, or DIST_STORE_PORT (before, rank 0 failed: "port ... is already in use").
TEST_F(Launcher, UnderTorchrunTheStoreLeavesMasterPortToTheAgent) {
  EXPECT_EQ(dist::core::store_port(29500, "c"), 29500);
  set("TORCHELASTIC_USE_AGENT_STORE", "True");
  EXPECT_EQ(dist::core::store_port(29500, "c"), 29501);
  EXPECT_THROW(dist::core::store_port(65535, "c"), dist::InvalidArgument);
  set("DIST_STORE_PORT", "70000");
  EXPECT_THROW(dist::core::store_port(29500, "c"), dist::InvalidArgument);
  set("DIST_STORE_PORT", port());
  const int agent_port = test_support::free_port();
  const int agent = ::socket(AF_INET, SOCK_STREAM, 0);  // the agent's store, listening
  const int reuse = 1;  // as torch's TCPStore binds (and as the reserved port needs)
  ASSERT_EQ(::setsockopt(agent, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse), 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(agent_port));
  ASSERT_EQ(::bind(agent, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(agent, 4), 0);
  for (const auto& [name, value] : {std::pair{"RANK", "0"},
                                    {"LOCAL_RANK", "0"},
                                    {"WORLD_SIZE", "1"},
                                    {"MASTER_ADDR", "127.0.0.1"}})
    set(name, value);
  set("MASTER_PORT", std::to_string(agent_port));
  dist::init_dist("pytorch", dist::Backend::gloo, {.timeout = 10s});
  expect_one_rank_world();
  ::close(agent);
}

// A local rank outside the world or the node, an empty node and an empty address are refused
// before anything is opened (a 2 s timeout bounds the wait of a check that is missing).
TEST_F(Launcher, ImpossibleLayoutsAndAnEmptyAddressNameTheVariable) {
  const dist::InitOptions quick{.timeout = 2s};
  set("RANK", "0");
  set("WORLD_SIZE", "1");
  set("LOCAL_RANK", "1");
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", port());
  expect_error("pytorch", "LOCAL_RANK=1 is not below WORLD_SIZE=1", quick);
  set("LOCAL_RANK", "0");
  set("LOCAL_WORLD_SIZE", "0");
  expect_error("pytorch", "LOCAL_WORLD_SIZE='0' is not an integer in [1, ", quick);
  set("LOCAL_WORLD_SIZE", "2");
  expect_error("pytorch", "LOCAL_WORLD_SIZE=2 is larger than WORLD_SIZE=1", quick);
  set("WORLD_SIZE", "2");
  set("LOCAL_RANK", "1");
  set("LOCAL_WORLD_SIZE", "1");
  expect_error("pytorch", "LOCAL_RANK=1 is not below LOCAL_WORLD_SIZE=1", quick);
  set("WORLD_SIZE", "1");
  set("LOCAL_RANK", "0");
  set("MASTER_ADDR", "");
  expect_error("pytorch", "MASTER_ADDR is set but empty", quick);
  set("OMPI_COMM_WORLD_LOCAL_RANK", "3");
  set("OMPI_COMM_WORLD_SIZE", "1");
  set("OMPI_COMM_WORLD_RANK", "0");
  set("MASTER_ADDR", "127.0.0.1");
  expect_error("mpi", "OMPI_COMM_WORLD_LOCAL_RANK=3 is not below OMPI_COMM_WORLD_SIZE=1", quick);
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "1");
  set("SLURM_NODELIST", "localhost");
  set("SLURM_LOCALID", "1");
  expect_error("slurm", "SLURM_LOCALID=1 is not below SLURM_NTASKS=1", quick);
}

TEST_F(Launcher, MpiDefaultsThePortRequiresTheAddressAndSetsRankAndWorldSize) {
  set("OMPI_COMM_WORLD_LOCAL_RANK", "0");
  set("OMPI_COMM_WORLD_SIZE", "1");
  set("OMPI_COMM_WORLD_RANK", "0");
  expect_error("mpi", "MASTER_ADDR is not set");
  EXPECT_EQ(env("MASTER_PORT"), "29500");  // set before the address check, as MMEngine does
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", port());
  dist::init_dist("mpi", dist::Backend::gloo, {.timeout = 10s});
  EXPECT_EQ(env("WORLD_SIZE"), "1");
  EXPECT_EQ(env("RANK"), "0");
  EXPECT_EQ(env("LOCAL_RANK"), "<unset>");  // mpi does not set it
  expect_one_rank_world();
}

TEST_F(Launcher, MpiUnderMpichReadsPmiVariables) {
  expect_error("mpi", "OMPI_COMM_WORLD_LOCAL_RANK is not set");
  set("PMI_RANK", "0");
  set("PMI_SIZE", "1");
  expect_error("mpi", "MPI_LOCALRANKID is not set");
  set("MPI_LOCALRANKID", "0");
  set("MASTER_ADDR", "127.0.0.1");
  set("MASTER_PORT", port());
  dist::init_dist("mpi", dist::Backend::gloo, {.timeout = 10s});
  EXPECT_EQ(env("RANK"), "0");
  expect_one_rank_world();
}

TEST_F(Launcher, SlurmReadsItsVariablesAndAppliesThePortPrecedence) {
  expect_error("slurm", "SLURM_PROCID is not set");
  set("SLURM_PROCID", "0");
  expect_error("slurm", "SLURM_NTASKS is not set");
  set("SLURM_NTASKS", "1");
  expect_error("slurm", "SLURM_NODELIST is not set");
  set("SLURM_NODELIST", "localhost");
  set("SLURM_LOCALID", "0");
  set("MASTER_PORT", "1");  // overridden by the port option
  const std::string p = port();
  dist::init_dist("slurm", dist::Backend::gloo, {.timeout = 10s, .port = std::stoi(p)});
  EXPECT_EQ(env("MASTER_PORT"), p);
  EXPECT_EQ(env("MASTER_ADDR"), "localhost");  // the first host of SLURM_NODELIST
  EXPECT_EQ(env("WORLD_SIZE"), "1");
  EXPECT_EQ(env("RANK"), "0");
  EXPECT_EQ(env("LOCAL_RANK"), "0");
  expect_one_rank_world();
}

TEST_F(Launcher, SlurmKeepsAnExistingMasterAddrAndPort) {
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "1");
  set("SLURM_NODELIST", "unresolvable-node[01-04]");
  set("MASTER_ADDR", "127.0.0.1");
  const std::string p = port();
  set("MASTER_PORT", p);
  dist::init_dist("slurm", dist::Backend::gloo, {.timeout = 10s});
  EXPECT_EQ(env("MASTER_ADDR"), "127.0.0.1");
  EXPECT_EQ(env("MASTER_PORT"), p);
  expect_one_rank_world();
}

TEST(SlurmNodeList, FirstHostAsScontrolExpandsIt) {
  using dist::core::first_slurm_host;
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("gpu[03-05,9],cpu1"), "gpu03");
  EXPECT_EQ(first_slurm_host("gpu[7,3-5]"), "gpu7");
  EXPECT_EQ(first_slurm_host("a,b"), "a");
  EXPECT_EQ(first_slurm_host("rack[10-11]-n[2-3],x"), "rack10-n2");
  EXPECT_THROW(first_slurm_host("n[1"), dist::InvalidArgument);
  EXPECT_THROW(first_slurm_host(""), dist::InvalidArgument);
}

TEST_F(Launcher, InferLauncherChecksPresenceInMMEngineOrder) {
  EXPECT_EQ(dist::infer_launcher(), "none");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "");
  EXPECT_EQ(dist::infer_launcher(), "mpi");
  set("SLURM_NTASKS", "");
  EXPECT_EQ(dist::infer_launcher(), "slurm");
  set("WORLD_SIZE", "");
  EXPECT_EQ(dist::infer_launcher(), "pytorch");
}

}  // namespace
