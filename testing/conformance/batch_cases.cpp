// batch_isend_irecv over whole worlds: a ring exchange in one batch whose receives are listed
// before its sends (it must not deadlock), with a large message on a second tag; the data against
// reference/'s p2p matching.
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

}  // namespace
}  // namespace conformance
