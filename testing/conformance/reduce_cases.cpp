// The reductions against the reference: all_reduce, reduce and reduce_scatter for every dtype,
// every op it allows, the runner's world sizes and counts, every root and every data form.
#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

std::uint64_t salt_of(dist::ReduceOp op) { return static_cast<std::uint64_t>(op); }
std::string label(dist::ReduceOp op, std::size_t count) {
  return "op " + std::string(dist::to_string(op)) + ", count " + std::to_string(count);
}

template <class T> class Reductions : public conformance::Test {};
TYPED_TEST_SUITE(Reductions, AllDTypes, DTypeName);

TYPED_TEST(Reductions, AllReduceEveryOpCountAndForm) {
  using T = TypeParam;
  check_cases<T>("all_reduce", [](int n) {
    PerRank<T> out;
    std::size_t k = 0;
    for (auto op : ops_for<T>())
      for (std::size_t count : counts_at(n))
        for (Form f : forms_at(count, k++))
          out.push_back(all_reduce_in(f, op, input<T>(dist::get_rank(), count, salt_of(op))));
    return out;
  }, [](int n) {
    std::vector<Expected<T>> out;
    std::size_t k = 0;
    for (auto op : ops_for<T>())
      for (std::size_t count : counts_at(n)) {
        auto e = from_ref<T>(ref::all_reduce(to_ref(inputs<T>(n, count, salt_of(op))), to_ref(op)));
        add_per_form(out, {std::move(e), label(op, count), tolerance<T>(op)}, count, k++);
      }
    return out;
  });
}

TYPED_TEST(Reductions, ReduceEveryOpRootCountAndForm) {
  using T = TypeParam;
  check_cases<T>("reduce", [](int n) {
    PerRank<T> out;
    std::size_t k = 0;
    for (int root : roots_at(n))
      for (auto op : ops_for<T>())
        for (std::size_t count : counts_for_root(n, root))
          for (Form f : forms_at(count, k++))
            out.push_back(reduce_in(f, op, root, input<T>(dist::get_rank(), count, salt_of(op))));
    return out;
  }, [](int n) {
    std::vector<Expected<T>> out;
    std::size_t k = 0;
    for (int root : roots_at(n))
      for (auto op : ops_for<T>())
        for (std::size_t count : counts_for_root(n, root)) {
          auto e = from_ref<T>(ref::reduce(to_ref(inputs<T>(n, count, salt_of(op))), to_ref(op), root));
          add_per_form(out, {std::move(e), label(op, count) + ", root " + std::to_string(root),
                             tolerance<T>(op)}, count, k++);
        }
    return out;
  });
}

TYPED_TEST(Reductions, ReduceScatterEveryOpChunkAndForm) {
  using T = TypeParam;
  check_cases<T>("reduce_scatter", [](int n) {
    PerRank<T> out;
    std::size_t k = 0;
    const auto w = static_cast<std::size_t>(n);
    for (auto op : ops_for<T>())
      for (std::size_t chunk : chunks_at(n))
        for (Form f : forms_at(chunk, k++))
          out.push_back(reduce_scatter_in(f, op, n, input<T>(dist::get_rank(), w * chunk, salt_of(op))));
    return out;
  }, [](int n) {
    std::vector<Expected<T>> out;
    std::size_t k = 0;
    const auto w = static_cast<std::size_t>(n);
    for (auto op : ops_for<T>())
      for (std::size_t chunk : chunks_at(n)) {
        auto e = from_ref<T>(ref::reduce_scatter(to_ref(inputs<T>(n, w * chunk, salt_of(op))), to_ref(op)));
        add_per_form(out, {std::move(e), label(op, chunk) + " per chunk", tolerance<T>(op)}, chunk, k++);
      }
    return out;
  });
}

// Several outstanding all_reduces complete whatever order they are waited in.
class AsyncReductions : public conformance::Test {};

TEST_F(AsyncReductions, SeveralOutstandingCompleteInAnyWaitOrder) {
  for (int n : world_runner().world_sizes) {
    const auto got = run_world(n, [] {
      PerRank<std::int64_t> data;
      for (int i = 0; i < 4; ++i) data.push_back(std::vector<std::int64_t>(1000, dist::get_rank() + i));
      std::vector<dist::Work> works;
      for (auto& d : data) works.push_back(dist::all_reduce_async(std::span(d)));
      for (int i = 3; i >= 0; --i) works[static_cast<std::size_t>(i)].wait();
      return data;
    });
    const std::int64_t ranks_sum = n * (n - 1) / 2;
    for (const auto& [rank, data] : got)
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(data[static_cast<std::size_t>(i)], std::vector<std::int64_t>(1000, ranks_sum + n * i))
            << world_runner().name << ", world " << n << ", rank " << rank << ", work " << i;
  }
}

// premul_sum: each rank's input halved, then summed (exact: integral values times 0.5), in the
// blocking, async and reduce_scatter forms.
class PremulSum : public conformance::Test {};

TEST_F(PremulSum, ScalesEveryInputThenSums) {
  for (int n : world_runner().world_sizes) {
    const auto got = run_world(n, [n] {
      const auto r = static_cast<double>(dist::get_rank());
      std::vector<double> all(6, r + 1), reduced(6, 2 * r), in(static_cast<std::size_t>(n) * 2, r);
      dist::all_reduce(all, dist::premul_sum(0.5));
      dist::reduce_async(std::span<double>(reduced), 0, dist::premul_sum(0.5)).wait();
      return std::vector<std::vector<double>>{all, reduced,
                                              dist::reduce_scatter(in, dist::premul_sum(0.5))};
    });
    const double ranks = n * (n - 1) / 2.0;
    for (const auto& [rank, out] : got) {
      const std::string where =
          world_runner().name + ", world " + std::to_string(n) + ", rank " + std::to_string(rank);
      EXPECT_EQ(out[0], std::vector<double>(6, (ranks + n) * 0.5)) << where;
      EXPECT_EQ(out[1], std::vector<double>(6, rank == 0 ? ranks : 2.0 * rank)) << where;
      EXPECT_EQ(out[2], std::vector<double>(2, ranks * 0.5)) << where;
    }
  }
}

}  // namespace
}  // namespace conformance
