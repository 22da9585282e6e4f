// batch_isend_irecv over whole worlds: a ring exchange in one batch whose receives are listed
// before its sends (it must not deadlock), with a large message on a second tag; the data against
// reference/'s p2p matching. A batch with messages to the caller itself.
#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

TEST_F(P2PTest, RingExchangeInOneBatchReceivesFirst) {
  constexpr std::size_t small = 7, large = 300000;
  for (int n : world_runner().world_sizes) {
    if (n < 2) continue;
    const auto got = run_world(n, [n] {
      const int rank = dist::get_rank(), next = (rank + 1) % n, prev = (rank + n - 1) % n;
      const auto a = input<float>(rank, small, 1), b = input<float>(rank, large, 2);
      PerRank<float> in{std::vector<float>(small), std::vector<float>(large)};
      auto works =
          dist::batch_isend_irecv({dist::P2POp::irecv(std::span<float>(in[0]), prev, 1),
                                   dist::P2POp::irecv(std::span<float>(in[1]), prev, 2),
                                   dist::P2POp::isend(std::span<const float>(a), next, 1),
                                   dist::P2POp::isend(std::span<const float>(b), next, 2)});
      require(works.size() == 4, "one Work per operation");
      for (auto& w : works) w.wait();
      return in;
    });
    std::vector<ref::Send<float>> sends;
    std::vector<ref::Recv> recvs;
    for (int r = 0; r < n; ++r) {
      sends.push_back({r, (r + 1) % n, 1, input<float>(r, small, 1)});
      sends.push_back({r, (r + 1) % n, 2, input<float>(r, large, 2)});
      recvs.push_back({r, (r + n - 1) % n, 1});
      recvs.push_back({r, (r + n - 1) % n, 2});
    }
    const auto expected = ref::p2p(sends, recvs, n);  // rank by rank, tag 1 then 2
    for (const auto& [rank, in] : got)
      for (std::size_t m = 0; m < 2; ++m)
        EXPECT_TRUE(bits_equal(in[m], expected[static_cast<std::size_t>(rank) * 2 + m]))
            << world_runner().name << ", world " << n << ", rank " << rank << ", tag " << m + 1;
  }
}

// A batch in which each rank also sends to and receives from itself (torch completes it): the
// self messages match in batch order per tag, whatever the backend; a self isend without its irecv
// is an InvalidArgument before anything is posted.
TEST_F(P2PTest, ABatchMayHoldMessagesToTheCallerItself) {
  for (int n : world_runner().world_sizes) {
    const auto got = run_world(n, [n] {
      const int rank = dist::get_rank(), next = (rank + 1) % n, prev = (rank + n - 1) % n;
      const auto mine = input<float>(rank, 5, 3), theirs = input<float>(rank, 3, 4);
      PerRank<float> in{std::vector<float>(5), std::vector<float>(3)};
      std::vector<dist::P2POp> ops{dist::P2POp::irecv(std::span<float>(in[0]), rank, 3),
                                   dist::P2POp::isend(std::span<const float>(mine), rank, 3)};
      if (n > 1) {
        ops.push_back(dist::P2POp::irecv(std::span<float>(in[1]), prev, 4));
        ops.push_back(dist::P2POp::isend(std::span<const float>(theirs), next, 4));
      }
      for (auto& w : dist::batch_isend_irecv(ops)) w.wait();
      std::vector<float> lone(2);
      bool refused = false;
      try {
        dist::batch_isend_irecv({dist::P2POp::isend(std::span<const float>(lone), rank, 9)});
      } catch (const dist::InvalidArgument&) {
        refused = true;
      }
      require(refused, "a self isend without its irecv was accepted");
      return in;
    });
    for (const auto& [rank, in] : got) {
      EXPECT_TRUE(bits_equal(in[0], input<float>(rank, 5, 3)))
          << world_runner().name << ", world " << n << ", rank " << rank << ": its own message";
      if (n > 1) {
        EXPECT_TRUE(bits_equal(in[1], input<float>((rank + n - 1) % n, 3, 4)))
            << world_runner().name << ", world " << n << ", rank " << rank << ": its neighbour's";
      }
    }
  }
}

}  // namespace
}  // namespace conformance
