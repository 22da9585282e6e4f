// init_process_group(nccl) on this machine: where nccl cannot run (built without it, or no GPU)
// it raises BackendError saying why and leaves the process not distributed; where it can, a
// one-rank world comes up on a GPU. Builds with and without CUDA.
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "core/context.hpp"
#include "dist/dist.hpp"
#include "dist/real/init.hpp"
#include "real/nccl/world.hpp"
#include "real/testing.hpp"

namespace {

using namespace std::chrono_literals;

std::string file_url() {
  return "file://" + testing::TempDir() + "nccl_init_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed());
}

TEST(NcclInit, SaysWhyItCannotRunOrComesUp) {
  const std::string why = dist::real::nccl_unavailable_reason();
  if (!why.empty()) {
    try {
      dist::init_process_group(dist::Backend::nccl, file_url(), 0, 1, 10s);
      ADD_FAILURE() << "init_process_group(nccl) succeeded although: " << why;
      dist::destroy_dist();
    } catch (const dist::BackendError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("init_process_group(nccl)"), std::string::npos) << message;
      EXPECT_NE(message.find(why), std::string::npos) << message;
      if (dist::real::nccl_built())
        EXPECT_NE(message.find("no GPU present"), std::string::npos) << message;
      else
        EXPECT_NE(message.find("dist was built without nccl: "), std::string::npos) << message;
    }
    EXPECT_FALSE(dist::is_distributed());
    return;
  }
  dist::init_process_group(dist::Backend::nccl, file_url(), 0, 1, 60s);
  EXPECT_TRUE(dist::is_distributed());
  EXPECT_EQ(dist::get_backend(), dist::Backend::nccl);
  EXPECT_TRUE(dist::get_comm_device().is_cuda());
  std::vector<int> v{1, 2, 3};
  dist::all_reduce(v);
  EXPECT_EQ(v, (std::vector<int>{1, 2, 3}));
  dist::barrier();
  // The front end answers a one-rank world itself; the backend called directly reaches NCCL.
  auto& backend = *dist::core::current_context()->world->backend;
  backend.all_reduce(dist::detail::buffer_of(std::span<int>(v)), dist::ReduceOp::max).wait();
  backend.barrier().wait();
  EXPECT_EQ(v, (std::vector<int>{1, 2, 3}));
  dist::destroy_dist();
  EXPECT_FALSE(dist::is_distributed());
}

TEST(NcclInit, ThreadRanksSayWhyTheyCannotConnect) {
  const std::string why = dist::real::nccl_unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is present: the device tests connect thread ranks";
  const auto errors = dist::real::run_thread_world(dist::Backend::nccl, 2, 5s, [](int rank) {
    ADD_FAILURE() << "rank " << rank << " connected although: " << dist::real::nccl_unavailable_reason();
  });
  ASSERT_EQ(errors.size(), 2u);
  for (const auto& error : errors) {
    ASSERT_TRUE(error);
    try {
      std::rethrow_exception(error);
    } catch (const dist::BackendError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(NcclInit, ReasonMatchesTheBuild) {
  const std::string why = dist::real::nccl_unavailable_reason();
  if (!dist::real::nccl_built()) {
    EXPECT_EQ(why.rfind("dist was built without nccl: ", 0), 0u) << why;
  } else if (!why.empty()) {
    EXPECT_EQ(why.rfind("no GPU present: ", 0), 0u) << why;
    EXPECT_NE(why.find("cudaGetDeviceCount"), std::string::npos) << why;
  }
}

TEST(NcclInit, SelectingADeviceNeverThrowsForAValidLocalRank) {
  // init_dist selects local_rank % devices; without a device it does nothing (init then says why).
  EXPECT_NO_THROW(dist::real::select_nccl_device(3));
  EXPECT_NO_THROW(dist::real::select_nccl_device(0));
}

}  // namespace
