// Hand-computed cases for every reference collective with 1, 2 and 3 ranks and with count 0.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "reference/collectives.hpp"

namespace {

namespace ref = dist::reference;
using ref::Op;
using ref::PerRank;
using I = PerRank<std::int32_t>;

TEST(AllReduce, OneTwoThreeRanks) {
  EXPECT_EQ(ref::all_reduce(I{{5, 6}}, Op::sum), (I{{5, 6}}));
  EXPECT_EQ(ref::all_reduce(I{{5, 6}}, Op::mean), (I{{5, 6}}));
  EXPECT_EQ(ref::all_reduce(I{{1, 2}, {3, 4}}, Op::sum), (I{{4, 6}, {4, 6}}));
  EXPECT_EQ(ref::all_reduce(I{{1, 9}, {3, 4}, {2, 8}}, Op::max), (I{{3, 9}, {3, 9}, {3, 9}}));
  EXPECT_EQ(ref::all_reduce(I{{1, 9}, {3, 4}, {2, 8}}, Op::product), (I{{6, 288}, {6, 288}, {6, 288}}));
}

TEST(AllReduce, CountZero) {
  EXPECT_EQ(ref::all_reduce(I{{}}, Op::sum), (I{{}}));
  EXPECT_EQ(ref::all_reduce(I{{}, {}, {}}, Op::mean), (I{{}, {}, {}}));
}

TEST(Reduce, OneTwoThreeRanks) {
  EXPECT_EQ(ref::reduce(I{{5, 6}}, Op::sum, 0), (I{{5, 6}}));
  EXPECT_EQ(ref::reduce(I{{1, 2}, {3, 4}}, Op::sum, 1), (I{{1, 2}, {4, 6}}));
  EXPECT_EQ(ref::reduce(I{{1, 2}, {3, 4}}, Op::sum, 0), (I{{4, 6}, {3, 4}}));
  EXPECT_EQ(ref::reduce(I{{7}, {3}, {5}}, Op::min, 2), (I{{7}, {3}, {3}}));
  EXPECT_EQ(ref::reduce(I{{7}, {3}, {5}}, Op::mean, 0), (I{{5}, {3}, {5}}));
}

TEST(Reduce, CountZero) {
  EXPECT_EQ(ref::reduce(I{{}, {}, {}}, Op::sum, 1), (I{{}, {}, {}}));
}

TEST(Broadcast, OneTwoThreeRanks) {
  EXPECT_EQ(ref::broadcast(I{{5, 6}}, 0), (I{{5, 6}}));
  EXPECT_EQ(ref::broadcast(I{{7, 8}, {8, 9}}, 1), (I{{8, 9}, {8, 9}}));  // MMEngine's example
  EXPECT_EQ(ref::broadcast(I{{1}, {2}, {3}}, 2), (I{{3}, {3}, {3}}));
  EXPECT_EQ(ref::broadcast(I{{1}, {2}, {3}}, 0), (I{{1}, {1}, {1}}));
}

TEST(Broadcast, CountZero) { EXPECT_EQ(ref::broadcast(I{{}, {}}, 1), (I{{}, {}})); }

TEST(AllGather, OneTwoThreeRanks) {
  EXPECT_EQ(ref::all_gather(I{{1, 2}}), (I{{1, 2}}));
  EXPECT_EQ(ref::all_gather(I{{1}, {2}}), (I{{1, 2}, {1, 2}}));
  EXPECT_EQ(ref::all_gather(I{{1, 2}, {3, 4}, {5, 6}}),
            (I{{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}}));
}

TEST(AllGather, CountZero) { EXPECT_EQ(ref::all_gather(I{{}, {}, {}}), (I{{}, {}, {}})); }

TEST(Gather, OneTwoThreeRanks) {
  EXPECT_EQ(ref::gather(I{{1, 2}}, 0), (I{{1, 2}}));
  EXPECT_EQ(ref::gather(I{{0}, {10}}, 1), (I{{}, {0, 10}}));  // MMEngine's example: non-dst gets []
  EXPECT_EQ(ref::gather(I{{1, 2}, {3, 4}, {5, 6}}, 0), (I{{1, 2, 3, 4, 5, 6}, {}, {}}));
  EXPECT_EQ(ref::gather(I{{1}, {2}, {3}}, 2), (I{{}, {}, {1, 2, 3}}));
}

TEST(Gather, CountZero) { EXPECT_EQ(ref::gather(I{{}, {}, {}}, 1), (I{{}, {}, {}})); }

TEST(Scatter, OneTwoThreeRanks) {
  EXPECT_EQ(ref::scatter(std::vector<std::int32_t>{7, 8}, 1, 0), (I{{7, 8}}));
  EXPECT_EQ(ref::scatter(std::vector<std::int32_t>{1, 2, 3, 4}, 2, 1), (I{{1, 2}, {3, 4}}));
  EXPECT_EQ(ref::scatter(std::vector<std::int32_t>{1, 2, 3}, 3, 2), (I{{1}, {2}, {3}}));
  EXPECT_EQ(ref::scatter(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}, 3, 0), (I{{1, 2}, {3, 4}, {5, 6}}));
}

TEST(Scatter, CountZero) {
  EXPECT_EQ(ref::scatter(std::vector<std::int32_t>{}, 3, 1), (I{{}, {}, {}}));
}

TEST(ReduceScatter, OneTwoThreeRanks) {
  EXPECT_EQ(ref::reduce_scatter(I{{1, 2}}, Op::sum), (I{{1, 2}}));
  EXPECT_EQ(ref::reduce_scatter(I{{1, 2, 3, 4}, {10, 20, 30, 40}}, Op::sum), (I{{11, 22}, {33, 44}}));
  EXPECT_EQ(ref::reduce_scatter(I{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, Op::sum), (I{{12}, {15}, {18}}));
  EXPECT_EQ(ref::reduce_scatter(I{{1, 8, 3}, {4, 5, 9}, {7, 2, 6}}, Op::max), (I{{7}, {8}, {9}}));
  EXPECT_EQ(ref::reduce_scatter(I{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, Op::mean), (I{{4}, {5}, {6}}));
}

TEST(ReduceScatter, CountZero) {
  EXPECT_EQ(ref::reduce_scatter(I{{}, {}, {}}, Op::sum), (I{{}, {}, {}}));
}

TEST(AllToAll, OneTwoThreeRanks) {
  EXPECT_EQ(ref::all_to_all(I{{1, 2}}), (I{{1, 2}}));
  EXPECT_EQ(ref::all_to_all(I{{1, 2}, {3, 4}}), (I{{1, 3}, {2, 4}}));
  EXPECT_EQ(ref::all_to_all(I{{0, 1, 2, 3, 4, 5}, {10, 11, 12, 13, 14, 15}, {20, 21, 22, 23, 24, 25}}),
            (I{{0, 1, 10, 11, 20, 21}, {2, 3, 12, 13, 22, 23}, {4, 5, 14, 15, 24, 25}}));
}

TEST(AllToAll, CountZero) { EXPECT_EQ(ref::all_to_all(I{{}, {}, {}}), (I{{}, {}, {}})); }

TEST(Barrier, ValidatesWorld) {
  EXPECT_NO_THROW(ref::barrier(1));
  EXPECT_NO_THROW(ref::barrier(3));
  EXPECT_THROW(ref::barrier(0), std::invalid_argument);
  EXPECT_THROW(ref::barrier(-1), std::invalid_argument);
}

TEST(Collectives, OtherElementTypes) {
  using ref::Half;
  EXPECT_EQ(ref::all_gather(PerRank<Half>{{Half{0x3C00}}, {Half{0x4000}}}),
            (PerRank<Half>{{Half{0x3C00}, Half{0x4000}}, {Half{0x3C00}, Half{0x4000}}}));
  EXPECT_EQ(ref::reduce_scatter(PerRank<double>{{0.5, 1.0}, {0.25, 2.0}}, Op::sum),
            (PerRank<double>{{0.75}, {3.0}}));
  EXPECT_EQ(ref::reduce(PerRank<std::uint64_t>{{6}, {5}}, Op::bxor, 0), (PerRank<std::uint64_t>{{3}, {5}}));
}

}  // namespace
