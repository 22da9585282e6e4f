// Every collective of the mpi backend on this run's world (mpirun -n 2 and -n 3), compared
// exactly with the reference on exact-sum inputs for every dtype and op. Every rank can make
// every rank's input (they are seeded by rank), so each checks its own part of the reference.
#include <gtest/gtest.h>

#include <vector>

#include "dist/dist.hpp"
#include "real/tests/reference_util.hpp"

namespace {

using namespace real_test;

constexpr std::size_t counts[] = {0, 1, 7, 1000};

template <class T> class MpiCollectives : public ::testing::Test {};
TYPED_TEST_SUITE(MpiCollectives, AllDTypes, DTypeName);

int world() { return dist::get_world_size(); }
std::size_t me() { return static_cast<std::size_t>(dist::get_rank()); }

template <class T> std::vector<std::vector<T>> inputs(std::size_t count, std::uint64_t salt) {
  std::vector<std::vector<T>> in;
  for (int r = 0; r < world(); ++r) in.push_back(input<T>(r, count, salt));
  return in;
}

template <class T> std::vector<T> mine(const ref::PerRank<ref_t<T>>& expected) {
  std::vector<T> out;
  for (const auto& x : expected[me()]) out.push_back(from_ref<T>(x));
  return out;
}

template <class T> std::vector<std::uint64_t> bits_of_all(const std::vector<T>& v) {
  std::vector<std::uint64_t> out;
  for (const T& x : v) out.push_back(bits_of(x));
  return out;
}

TYPED_TEST(MpiCollectives, AllReduceEveryOpAndCount) {
  using T = TypeParam;
  std::uint64_t salt = 0;
  for (const auto op : ops_for<T>())
    for (const std::size_t count : counts) {
      auto v = input<T>(dist::get_rank(), count, ++salt);
      dist::all_reduce(v, op);
      const auto expected = mine<T>(ref::all_reduce(to_ref(inputs<T>(count, salt)), to_ref(op)));
      EXPECT_EQ(bits_of_all(v), bits_of_all(expected)) << to_string(op) << ", count " << count;
    }
}

TYPED_TEST(MpiCollectives, ReduceEveryOpAndRoot) {
  using T = TypeParam;
  std::uint64_t salt = 100;
  for (const auto op : ops_for<T>())
    for (int root = 0; root < world(); ++root) {
      auto v = input<T>(dist::get_rank(), 7, ++salt);
      const auto before = v;
      dist::reduce(v, root, op);
      const auto expected = mine<T>(ref::reduce(to_ref(inputs<T>(7, salt)), to_ref(op), root));
      // The reference leaves non-roots' buffers as they were.
      EXPECT_EQ(bits_of_all(v), bits_of_all(me() == static_cast<std::size_t>(root) ? expected : before))
          << to_string(op) << ", root " << root;
    }
}

TYPED_TEST(MpiCollectives, BroadcastGatherScatterFromEveryRoot) {
  using T = TypeParam;
  std::uint64_t salt = 200;
  for (int root = 0; root < world(); ++root)
    for (const std::size_t count : counts) {
      auto b = input<T>(dist::get_rank(), count, ++salt);
      dist::broadcast(b, root);
      EXPECT_EQ(bits_of_all(b), bits_of_all(mine<T>(ref::broadcast(to_ref(inputs<T>(count, salt)), root))));

      const auto g = dist::gather(input<T>(dist::get_rank(), count, salt), root);
      const auto all = inputs<T>(count, salt);
      if (me() == static_cast<std::size_t>(root)) EXPECT_EQ(g, all) << "gather to " << root;
      else EXPECT_TRUE(g.empty());

      std::vector<T> part(count);
      dist::scatter(part, me() == static_cast<std::size_t>(root) ? all : std::vector<std::vector<T>>{}, root);
      // Root's chunk r is rank r's input of this case.
      EXPECT_EQ(bits_of_all(part), bits_of_all(input<T>(dist::get_rank(), count, salt)))
          << "scatter from " << root;
    }
}

TYPED_TEST(MpiCollectives, AllGatherReduceScatterAllToAll) {
  using T = TypeParam;
  std::uint64_t salt = 300;
  const auto n = static_cast<std::size_t>(world());
  for (const std::size_t count : counts) {
    const auto gathered = dist::all_gather(input<T>(dist::get_rank(), count, ++salt));
    EXPECT_EQ(gathered, inputs<T>(count, salt));

    const auto exchanged = dist::all_to_all(input<T>(dist::get_rank(), count * n, salt));
    EXPECT_EQ(bits_of_all(exchanged), bits_of_all(mine<T>(ref::all_to_all(to_ref(inputs<T>(count * n, salt))))));

    for (const auto op : ops_for<T>()) {
      const auto reduced = dist::reduce_scatter(input<T>(dist::get_rank(), count * n, ++salt), op);
      const auto expected = mine<T>(ref::reduce_scatter(to_ref(inputs<T>(count * n, salt)), to_ref(op)));
      EXPECT_EQ(bits_of_all(reduced), bits_of_all(expected)) << to_string(op) << ", count " << count;
    }
  }
}

TEST(MpiCollectivesAsync, SeveralOutstandingCollectivesCompleteInAnyWaitOrder) {
  std::vector<std::vector<std::int64_t>> data;
  for (int i = 0; i < 4; ++i) data.push_back(std::vector<std::int64_t>(1000, dist::get_rank() + i));
  std::vector<dist::Work> works;
  for (auto& d : data) works.push_back(dist::all_reduce_async(std::span(d)));
  for (int i = 3; i >= 0; --i) works[static_cast<std::size_t>(i)].wait();
  const std::int64_t ranks_sum = world() * (world() - 1) / 2;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(data[static_cast<std::size_t>(i)], std::vector<std::int64_t>(1000, ranks_sum + world() * i));
}

}  // namespace
