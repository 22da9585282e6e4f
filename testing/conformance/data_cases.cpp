// The data-moving collectives against the reference: broadcast, all_gather, gather, scatter,
// all_to_all and the variable-size all_gather for every dtype, world size, count, root and form.
#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

std::string label(std::size_t count, int root = -1) {
  return "count " + std::to_string(count) + (root < 0 ? "" : ", root " + std::to_string(root));
}

template <class T> class DataCollectives : public conformance::Test {};
TYPED_TEST_SUITE(DataCollectives, AllDTypes, DTypeName);

// The cases of a rooted collective: call(f, root, count) on the ranks, expect(n, root, count).
template <class T, class Call, class Expect>
void check_rooted(const std::string& name, Call call, Expect expect) {
  check_cases<T>(name, [&](int n) {
    PerRank<T> out;
    std::size_t k = 0;
    for (int root : roots_at(n))
      for (std::size_t count : counts_for_root(n, root))
        for (Form f : forms_at(count, k++)) out.push_back(call(f, root, count));
    return out;
  }, [&](int n) {
    std::vector<Expected<T>> out;
    std::size_t k = 0;
    for (int root : roots_at(n))
      for (std::size_t count : counts_for_root(n, root))
        add_per_form(out, {expect(n, root, count), label(count, root)}, count, k++);
    return out;
  });
}

TYPED_TEST(DataCollectives, Broadcast) {
  using T = TypeParam;
  check_rooted<T>("broadcast", [](Form f, int src, std::size_t count) {
    return broadcast_in(f, src, input<T>(dist::get_rank(), count));
  }, [](int n, int src, std::size_t count) {
    return from_ref<T>(ref::broadcast(to_ref(inputs<T>(n, count)), src));
  });
}

TYPED_TEST(DataCollectives, Gather) {
  using T = TypeParam;
  check_rooted<T>("gather", [](Form f, int dst, std::size_t count) {
    return gather_in(f, dst, input<T>(dist::get_rank(), count));
  }, [](int n, int dst, std::size_t count) {
    return from_ref<T>(ref::gather(to_ref(inputs<T>(n, count)), dst));
  });
}

TYPED_TEST(DataCollectives, Scatter) {
  using T = TypeParam;
  const auto root_input = [](int n, int src, std::size_t count) {
    return input<T>(src, count * static_cast<std::size_t>(n), 11);
  };
  check_rooted<T>("scatter", [&](Form f, int src, std::size_t count) {
    const int n = dist::get_world_size();
    return scatter_in(f, src, count, dist::get_rank() == src ? root_input(n, src, count) : std::vector<T>{});
  }, [&](int n, int src, std::size_t count) {
    return from_ref<T>(ref::scatter(to_ref(root_input(n, src, count)), n, src));
  });
}

TYPED_TEST(DataCollectives, AllGather) {
  using T = TypeParam;
  check_cases<T>("all_gather", [](int n) {
    PerRank<T> out;
    std::size_t k = 0;
    for (std::size_t count : counts_at(n))
      for (Form f : forms_at(count, k++)) out.push_back(all_gather_in(f, input<T>(dist::get_rank(), count)));
    return out;
  }, [](int n) {
    std::vector<Expected<T>> out;
    std::size_t k = 0;
    for (std::size_t count : counts_at(n))
      add_per_form(out, {from_ref<T>(ref::all_gather(to_ref(inputs<T>(n, count)))), label(count)}, count, k++);
    return out;
  });
}

TYPED_TEST(DataCollectives, AllToAll) {
  using T = TypeParam;
  check_cases<T>("all_to_all", [](int n) {
    PerRank<T> out;
    std::size_t k = 0;
    for (std::size_t chunk : chunks_at(n))
      for (Form f : forms_at(chunk, k++))
        out.push_back(all_to_all_in(f, input<T>(dist::get_rank(), chunk * static_cast<std::size_t>(n))));
    return out;
  }, [](int n) {
    std::vector<Expected<T>> out;
    std::size_t k = 0;
    for (std::size_t chunk : chunks_at(n)) {
      auto e = from_ref<T>(ref::all_to_all(to_ref(inputs<T>(n, chunk * static_cast<std::size_t>(n)))));
      add_per_form(out, {std::move(e), "chunk " + std::to_string(chunk)}, chunk, k++);
    }
    return out;
  });
}

// The variable-size all_gather the object helpers use: rank r contributes layout[r] elements.
TYPED_TEST(DataCollectives, AllGatherVariableSizes) {
  using T = TypeParam;
  const auto layouts = [](int n) {
    std::vector<std::vector<std::size_t>> out{std::vector<std::size_t>(static_cast<std::size_t>(n), 0),
                                              {3, 0, 1000, 2}, {0, 5, 1, 0}};
    for (auto& l : out) l.resize(static_cast<std::size_t>(n));
    return out;
  };
  check_cases<T>("all_gather_v", [&](int n) {
    PerRank<T> out;
    std::uint64_t salt = 300;
    for (const auto& layout : layouts(n)) {
      auto in = input<T>(dist::get_rank(), layout[static_cast<std::size_t>(dist::get_rank())], ++salt);
      std::size_t total = 0;
      for (auto c : layout) total += c;
      std::vector<T> all(total);
      dist::detail::all_gather_v(dist::detail::buffer_of(std::span<T>(all)),
                                 dist::detail::input_of(std::span<T>(in)), layout, {})
          .wait();
      out.push_back(all);
    }
    return out;
  }, [&](int n) {
    std::vector<Expected<T>> out;
    std::uint64_t salt = 300;
    for (const auto& layout : layouts(n)) {
      ++salt;
      std::vector<T> all;
      for (int r = 0; r < n; ++r) {
        const auto part = input<T>(r, layout[static_cast<std::size_t>(r)], salt);
        all.insert(all.end(), part.begin(), part.end());
      }
      out.push_back({PerRank<T>(static_cast<std::size_t>(n), all), "layout " + std::to_string(salt - 300)});
    }
    return out;
  });
}

// Messages of several megabytes (a backend may split them into segments).
class LargeMessages : public conformance::Test {};

TEST_F(LargeMessages, AllReduceAndBroadcast) {
  const std::size_t count = world_runner().huge_count;
  if (count == 0) GTEST_SKIP() << world_runner().name << " checks large counts in the typed cases";
  const auto n = world_runner().world_of_at_least(3);
  if (!n) GTEST_SKIP() << *lacks_world(3);
  const auto got = run_world(*n, [&] {
    auto v = input<double>(dist::get_rank(), count, 7);
    dist::all_reduce(v, dist::ReduceOp::sum);
    auto b = input<std::int32_t>(dist::get_rank(), count, 8);
    dist::broadcast(b, 2);
    return std::pair{v, b};
  });
  const auto sum = ref::all_reduce(inputs<double>(*n, count, 7), ref::Op::sum)[0];
  for (const auto& [rank, vb] : got) {
    EXPECT_TRUE(same_values(vb.first, sum)) << "all_reduce, rank " << rank;
    EXPECT_EQ(vb.second, input<std::int32_t>(2, count, 8)) << "broadcast, rank " << rank;
  }
}

}  // namespace
}  // namespace conformance
