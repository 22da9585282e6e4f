// The mpi backend's failure paths (run with a 3 s timeout, mpirun -n 3): a rank that arrives
// late is named in the TimeoutError of the others, who leave the group unusable rather than
// reuse it; the late rank's own collective never completes against their given-up calls (it
// learns from the store that they gave up), and nothing MPI completes later writes into the
// others' buffers, which they may have freed by then (a collective, and a recv from the late
// rank). A Work::wait with a timeout of its own raises at that timeout and leaves the call going
// on. Then the world is destroyed and joined again on the same MPI.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"
#include "dist/real/init.hpp"

namespace {

using namespace std::chrono_literals;

// A group of every rank of the world (its own communicator, retired alone on a timeout).
dist::Group group_of_everyone(int world) {
  std::vector<int> everyone(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) everyone[static_cast<std::size_t>(r)] = r;
  return dist::new_group(everyone);
}

TEST(MpiFailure, ALateRankIsNamedByTheOthersAndTheGroupIsRetired) {
  const int world = dist::get_world_size();
  if (world < 2) GTEST_SKIP() << "needs 2 ranks";
  const dist::Group group = group_of_everyone(world);
  const int late = world - 1;
  std::vector<std::int64_t> v{dist::get_rank()};
  if (dist::get_rank() == late) {
    std::this_thread::sleep_for(4500ms);  // past the others' 3 s timeout
    const auto start = std::chrono::steady_clock::now();
    try {
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      ADD_FAILURE() << "the late all_reduce completed against calls given up at their timeout";
    } catch (const dist::BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("gave up this collective at its timeout (before this "
                                           "rank arrived"),
                std::string::npos)
          << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "the late rank was not told at once";
    EXPECT_EQ(v[0], late) << "the late rank's buffer was written";
  } else {
    const auto start = std::chrono::steady_clock::now();
    try {
      dist::all_reduce(v, dist::ReduceOp::sum, group);
      ADD_FAILURE() << "all_reduce returned without rank " << late;
    } catch (const dist::TimeoutError& e) {
      EXPECT_EQ(e.missing_ranks(), std::vector<int>{late}) << e.what();
      EXPECT_NE(std::string(e.what()).find("all_reduce(op=sum, int64 x 1) on group {0, 1"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("} #1 timed out"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    try {
      dist::barrier(group);
      ADD_FAILURE() << "the group was reused after its timeout";
    } catch (const dist::BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("unusable"), std::string::npos) << e.what();
    }
  }
  dist::barrier();  // the world group is unaffected
}

// Four int64 ones on a page of their own, which guard() makes inaccessible: a late write by MPI
// into them then crashes the process.
class GuardablePage {
 public:
  GuardablePage() {
    if (memory_ == MAP_FAILED) throw std::runtime_error("mmap of one page failed");
    std::fill(values().begin(), values().end(), 1);
  }
  ~GuardablePage() { ::munmap(memory_, size_); }
  GuardablePage(const GuardablePage&) = delete;
  GuardablePage& operator=(const GuardablePage&) = delete;
  std::span<std::int64_t> values() const { return {static_cast<std::int64_t*>(memory_), 4}; }
  bool guard() { return ::mprotect(memory_, size_, PROT_NONE) == 0; }

 private:
  std::size_t size_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* memory_ =
      ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
};

// The late rank (the last) calls `late_call` on a guarded page's values 4.5 s late, past the
// others' 3 s timeout; the others' `timed_out_call` on their page must raise TimeoutError, after
// which they make the page inaccessible: when the late rank arrives and MPI completes the given-up
// operation, it must write into dist's memory, not the caller's (else this process segfaults).
// The two barriers poll MPI until the late call, and so the given-up ones, completed.
template <class Late, class TimedOut>
void late_rank_writes_no_freed_buffer(Late late_call, TimedOut timed_out_call) {
  const int world = dist::get_world_size();
  if (world < 2) GTEST_SKIP() << "needs 2 ranks";
  const dist::Group group = group_of_everyone(world);
  const int late = world - 1;
  GuardablePage page;
  const std::span<std::int64_t> v = page.values();
  if (dist::get_rank() == late) {
    std::this_thread::sleep_for(4500ms);
    late_call(v, group, late);
  } else {
    EXPECT_THROW(timed_out_call(v, group, late), dist::TimeoutError);
    ASSERT_TRUE(page.guard());  // a late write now crashes this rank
  }
  dist::barrier();
  std::this_thread::sleep_for(200ms);
  dist::barrier();
}

TEST(MpiFailure, AGivenUpCollectiveNeverWritesTheCallersBufferAfterTheTimeout) {
  const auto all_reduce = [](std::span<std::int64_t> v, const dist::Group& group, int) {
    dist::all_reduce(v, dist::ReduceOp::sum, group);
  };
  late_rank_writes_no_freed_buffer(
      [&](std::span<std::int64_t> v, const dist::Group& group, int late) {
    EXPECT_THROW(all_reduce(v, group, late), dist::BackendError);
    EXPECT_EQ(v[0], 1);
      },
      all_reduce);
}

// The same for a recv from the late rank: once it arrives, its send completes (the receivers
// acknowledged it when they posted their recv) and MPI completes the given-up recv into dist's
// scratch, not into the caller's buffer.
TEST(MpiFailure, AGivenUpRecvNeverWritesTheCallersBufferAfterTheTimeout) {
  late_rank_writes_no_freed_buffer(
      [](std::span<std::int64_t> v, const dist::Group& group, int late) {
    for (int r = 0; r < late; ++r) EXPECT_NO_THROW(dist::send(v, r, 3, group)) << "to rank " << r;
      },
      [](std::span<std::int64_t> v, const dist::Group& group, int late) {
    dist::recv(v, late, 3, group);
  });
}

// Work::wait(300 ms) on an all_reduce the last rank joins only after a second: a TimeoutError at
// about 300 ms (not after a roll call); as at the group's timeout, the call has then failed here,
// the group is retired, and the late rank learns at once that the others gave the call up.
TEST(MpiFailure, AWaitWithItsOwnTimeoutRaisesThenAndTheLateRankIsTold) {
  const int world = dist::get_world_size();
  if (world < 2) GTEST_SKIP() << "needs 2 ranks";
  const dist::Group group = group_of_everyone(world);
  std::vector<std::int64_t> v{1};
  if (dist::get_rank() == world - 1) {
    std::this_thread::sleep_for(1200ms);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(dist::all_reduce(v, dist::ReduceOp::sum, group), dist::BackendError);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_EQ(v[0], 1);
  } else {
    dist::Work work =
        dist::all_reduce_async(std::span<std::int64_t>(v), dist::ReduceOp::sum, group);
    const auto start = std::chrono::steady_clock::now();
    try {
      work.wait(300ms);
      ADD_FAILURE() << "the all_reduce completed without the last rank";
    } catch (const dist::TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("did not complete within 300 ms"), std::string::npos)
          << e.what();
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, 300ms);
    EXPECT_LT(waited, 800ms) << "the timed wait raised late";
    EXPECT_THROW(dist::barrier(group), dist::BackendError);  // retired
  }
  dist::barrier();
}

}  // namespace

namespace {

// After the timeout above, this process's MPI stays initialised and a new world joins on it: the
// retired group does not stand in the way of destroy_dist and init_dist.
TEST(MpiLifecycle, DestroyAndInitAgainJoinsANewWorld) {
  const int world = dist::get_world_size();
  dist::barrier();
  dist::destroy_dist();
  EXPECT_FALSE(dist::is_distributed());
  // The same port: a rank faster than rank 0 finds rank 0's old store still open, is told that
  // it serves the previous world, and waits for the new one.
  dist::InitOptions options;
  options.timeout = std::chrono::seconds(30);
  dist::init_dist("mpi", dist::Backend::mpi, options);
  ASSERT_EQ(dist::get_world_size(), world);
  std::vector<std::int32_t> v{1};
  dist::all_reduce(v);
  EXPECT_EQ(v[0], world);
}

}  // namespace
