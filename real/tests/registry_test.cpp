// The registry of real backends: one row per backend of the public enum (sim excepted), each
// with its three functions, and the errors init and the harnesses raise from it.
#include "real/registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dist/errors.hpp"
#include "dist/real/init.hpp"

namespace {

using dist::Backend;
using dist::real::backend_entry;
using dist::real::registered_backends;

TEST(Registry, EveryRealBackendHasOneRowWithItsFunctions) {
  std::set<Backend> kinds;
  for (const auto* entry : registered_backends()) {
    EXPECT_TRUE(kinds.insert(entry->kind).second) << to_string(entry->kind) << " is listed twice";
    EXPECT_NE(entry->kind, Backend::sim);
    EXPECT_NE(entry->unavailable, nullptr) << to_string(entry->kind);
    EXPECT_NE(entry->prepare, nullptr) << to_string(entry->kind);
    EXPECT_NE(entry->make_world, nullptr) << to_string(entry->kind);
    EXPECT_EQ(&backend_entry(entry->kind, "test"), entry);
  }
  EXPECT_EQ(kinds, (std::set<Backend>{Backend::gloo, Backend::nccl, Backend::mpi}));
}

// is_<name>_available follows what CMake found (with or without a GPU for nccl).
TEST(Registry, AvailabilityFollowsTheBuild) {
  EXPECT_EQ(dist::is_gloo_available(), DIST_TEST_HAVE_GLOO != 0);
  EXPECT_EQ(dist::is_mpi_available(), DIST_TEST_HAVE_MPI != 0);
  EXPECT_EQ(dist::is_nccl_available(), DIST_TEST_HAVE_NCCL != 0);
}

TEST(Registry, SimIsNotARealBackend) {
  try {
    backend_entry(Backend::sim, "init_process_group");
    FAIL() << "no error for sim";
  } catch (const dist::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("init_process_group: the sim backend runs in one process"),
              std::string::npos)
        << e.what();
  }
}

TEST(Registry, RequireAvailableNamesCallerBackendAndReason) {
  for (const auto* entry : registered_backends()) {
    const std::string why = entry->unavailable(1);
    if (why.empty()) {
      EXPECT_NO_THROW(dist::real::require_available(*entry, 1, "init_dist"));
      continue;
    }
    try {
      dist::real::require_available(*entry, 1, "init_dist");
      ADD_FAILURE() << to_string(entry->kind) << ": no error although " << why;
    } catch (const dist::BackendError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(
                    "init_dist(" + std::string(to_string(entry->kind)) + "): " + why, 0),
                0u)
          << e.what();
    }
  }
}

TEST(Registry, ProcessOnlyBackendsRefuseSeveralRanksInOneProcess) {
  for (const auto* entry : registered_backends()) {
    if (entry->threads || !entry->unavailable(1).empty()) continue;
    EXPECT_NE(entry->unavailable(2), "") << to_string(entry->kind);
  }
}

TEST(Registry, NcclSaysWhyItCannotRunWithoutAGpu) {
  const auto& nccl = backend_entry(Backend::nccl, "test");
  const std::string one = nccl.unavailable(1);
  if (one.empty()) GTEST_SKIP() << "nccl can run here (a GPU is present)";
  EXPECT_TRUE(one.find("no GPU present") != std::string::npos ||
              one.find("built without nccl") != std::string::npos)
      << one;
  EXPECT_NO_THROW(nccl.prepare(0));  // selecting a device without a GPU does nothing
}

}  // namespace
