// The data-moving collectives on sim against the reference, bit for bit: broadcast, all_gather,
// gather, scatter and all_to_all for every dtype, world sizes 1, 2, 3, 8, every data form and
// the roots of roots_at(); plus broadcast, all_gather and barrier at 64 and 256 ranks.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "sim/tests/conformance.hpp"

namespace {

using namespace conformance;

template <class T> std::vector<T> broadcast_in(Form f, int src, std::vector<T> v) {
  switch (f) {
    case Form::vector: dist::broadcast(v, src); return v;
    case Form::span: dist::broadcast(std::span<T>(v), src); return v;
    case Form::tensor: {
      const auto shape = shape_for(v.size());
      dist::Tensor t = dist::Tensor::from(std::move(v), shape);
      dist::broadcast(t, src);
      require(t.shape() == shape, "broadcast changed the tensor's shape");
      return values_of<T>(t);
    }
  }
  return {};
}

// Concatenates gathered parts after checking there are `parts` of `count` elements each.
template <class T>
std::vector<T> joined(const std::vector<std::vector<T>>& got, std::size_t parts, std::size_t count) {
  require(got.size() == parts, "gathered " + std::to_string(got.size()) + " parts, expected " +
                                   std::to_string(parts));
  for (const auto& p : got) require(p.size() == count, "a gathered part has the wrong size");
  return concat(got);
}

template <class T>
std::vector<T> joined(const std::vector<dist::Tensor>& got, std::size_t parts,
                      const std::vector<std::int64_t>& shape) {
  std::vector<std::vector<T>> values;
  for (const auto& t : got) {
    require(t.shape() == shape && t.dtype() == dist::dtype_v<T>,
            "a gathered tensor has the wrong shape or dtype");
    values.push_back(values_of<T>(t));
  }
  return joined(values, parts, values.empty() ? 0 : values.front().size());
}

template <class T> std::vector<T> all_gather_in(Form f, std::vector<T> v) {
  const auto n = static_cast<std::size_t>(dist::get_world_size());
  const std::size_t count = v.size();
  switch (f) {
    case Form::vector: return joined(dist::all_gather(v), n, count);
    case Form::span: return joined(dist::all_gather(std::span<T>(v)), n, count);
    case Form::tensor: {
      const auto shape = shape_for(count);
      return joined<T>(dist::all_gather(dist::Tensor::from(std::move(v), shape)), n, shape);
    }
  }
  return {};
}

template <class T> std::vector<T> gather_in(Form f, int dst, std::vector<T> v) {
  const bool on_dst = dist::get_rank() == dst;
  const auto parts = on_dst ? static_cast<std::size_t>(dist::get_world_size()) : 0;
  const std::size_t count = v.size();
  switch (f) {
    case Form::vector: return joined(dist::gather(v, dst), parts, count);
    case Form::span: return joined(dist::gather(std::span<const T>(v), dst), parts, count);
    case Form::tensor: {
      const auto shape = shape_for(count);
      return joined<T>(dist::gather(dist::Tensor::from(std::move(v), shape), dst), parts, shape);
    }
  }
  return {};
}

// src's input is root_input (empty elsewhere); the other ranks pass nothing (an empty input or
// chunk list).
template <class T>
std::vector<T> scatter_in(Form f, int src, std::size_t count, const std::vector<T>& root_input) {
  const bool on_src = dist::get_rank() == src;
  const int n = dist::get_world_size();
  std::vector<T> out(count, T{});
  const std::vector<T> none;
  switch (f) {
    case Form::vector: {
      const auto chunks = on_src ? dist::detail::split_chunks(root_input, n)
                                 : std::vector<std::vector<T>>{};
      dist::scatter(out, chunks, src);
      return out;
    }
    case Form::span:
      dist::scatter(std::span<T>(out), std::span<const T>(on_src ? root_input : none), src);
      return out;
    case Form::tensor: {
      const auto shape = shape_for(count);
      std::vector<dist::Tensor> chunks;
      if (on_src)
        for (const auto& c : dist::detail::split_chunks(root_input, n))
          chunks.push_back(dist::Tensor::from(c, shape));
      dist::Tensor t = dist::Tensor::zeros(shape, dist::dtype_v<T>);
      dist::scatter(t, chunks, src);
      require(t.shape() == shape, "scatter changed the output tensor's shape");
      return values_of<T>(t);
    }
  }
  return {};
}

template <class T> std::vector<T> all_to_all_in(Form f, std::vector<T> in) {
  switch (f) {
    case Form::vector: return dist::all_to_all(in);
    case Form::span: {
      std::vector<T> out(in.size());
      dist::all_to_all(std::span<T>(out), std::span<T>(in));
      return out;
    }
    case Form::tensor: {
      const auto n = static_cast<std::int64_t>(dist::get_world_size());
      const std::vector<std::int64_t> shape{n, static_cast<std::int64_t>(in.size()) / n};
      const dist::Tensor out = dist::all_to_all(dist::Tensor::from(std::move(in), shape));
      require(out.shape() == shape, "all_to_all: the result has the wrong shape");
      return values_of<T>(out);
    }
  }
  return {};
}

template <class T> class DataCollectives : public conformance::Test {};
TYPED_TEST_SUITE(DataCollectives, AllDTypes, DTypeName);

// Runs `per_rank(n)` (every case of one collective, in order) on each world size and compares
// case c of rank r with expected(n)[c][r].
template <class T, class PerRank, class Expected>
void check_collective(const char* name, PerRank per_rank, Expected expected_of) {
  for (int n : world_sizes) {
    const auto got = dist::sim::run(world(n), [&] { return per_rank(n); });
    const std::vector<std::vector<std::vector<T>>> expected = expected_of(n);
    ASSERT_EQ(got.front().size(), expected.size()) << name << ", world " << n;
    for (std::size_t c = 0; c < expected.size(); ++c)
      for (std::size_t r = 0; r < got.size(); ++r)
        EXPECT_TRUE(bits_equal(got[r][c], expected[c][r]))
            << name << ", world " << n << ", case " << c << ", rank " << r;
  }
}

TYPED_TEST(DataCollectives, Broadcast) {
  using T = TypeParam;
  check_collective<T>("broadcast", [](int n) {
    std::vector<std::vector<T>> out;
    std::size_t k = 0;
    for (int src : roots_at(n))
      for (std::size_t count : counts_for_root(n, src))
        for (Form f : forms_at(count, k++))
          out.push_back(broadcast_in(f, src, input<T>(dist::get_rank(), count)));
    return out;
  }, [](int n) {
    std::vector<std::vector<std::vector<T>>> out;
    std::size_t k = 0;
    for (int src : roots_at(n))
      for (std::size_t count : counts_for_root(n, src))
        for ([[maybe_unused]] Form f : forms_at(count, k++))
          out.push_back(from_ref<T>(ref::broadcast(to_ref(inputs<T>(n, count)), src)));
    return out;
  });
}

TYPED_TEST(DataCollectives, AllGather) {
  using T = TypeParam;
  check_collective<T>("all_gather", [](int n) {
    std::vector<std::vector<T>> out;
    std::size_t k = 0;
    for (std::size_t count : counts_at(n))
      for (Form f : forms_at(count, k++))
        out.push_back(all_gather_in(f, input<T>(dist::get_rank(), count)));
    return out;
  }, [](int n) {
    std::vector<std::vector<std::vector<T>>> out;
    std::size_t k = 0;
    for (std::size_t count : counts_at(n))
      for ([[maybe_unused]] Form f : forms_at(count, k++))
        out.push_back(from_ref<T>(ref::all_gather(to_ref(inputs<T>(n, count)))));
    return out;
  });
}

TYPED_TEST(DataCollectives, Gather) {
  using T = TypeParam;
  check_collective<T>("gather", [](int n) {
    std::vector<std::vector<T>> out;
    std::size_t k = 0;
    for (int dst : roots_at(n))
      for (std::size_t count : counts_for_root(n, dst))
        for (Form f : forms_at(count, k++))
          out.push_back(gather_in(f, dst, input<T>(dist::get_rank(), count)));
    return out;
  }, [](int n) {
    std::vector<std::vector<std::vector<T>>> out;
    std::size_t k = 0;
    for (int dst : roots_at(n))
      for (std::size_t count : counts_for_root(n, dst))
        for ([[maybe_unused]] Form f : forms_at(count, k++))
          out.push_back(from_ref<T>(ref::gather(to_ref(inputs<T>(n, count)), dst)));
    return out;
  });
}

TYPED_TEST(DataCollectives, Scatter) {
  using T = TypeParam;
  const auto root_input = [](int n, int src, std::size_t count) {
    return input<T>(src, count * static_cast<std::size_t>(n), 11);
  };
  check_collective<T>("scatter", [&](int n) {
    std::vector<std::vector<T>> out;
    std::size_t k = 0;
    for (int src : roots_at(n))
      for (std::size_t count : counts_for_root(n, src))
        for (Form f : forms_at(count, k++))
          out.push_back(scatter_in(f, src, count,
                                   dist::get_rank() == src ? root_input(n, src, count)
                                                           : std::vector<T>{}));
    return out;
  }, [&](int n) {
    std::vector<std::vector<std::vector<T>>> out;
    std::size_t k = 0;
    for (int src : roots_at(n))
      for (std::size_t count : counts_for_root(n, src))
        for ([[maybe_unused]] Form f : forms_at(count, k++))
          out.push_back(
              from_ref<T>(ref::scatter(to_ref(root_input(n, src, count)), n, src)));
    return out;
  });
}

TYPED_TEST(DataCollectives, AllToAll) {
  using T = TypeParam;
  check_collective<T>("all_to_all", [](int n) {
    std::vector<std::vector<T>> out;
    std::size_t k = 0;
    for (std::size_t chunk : chunks_at(n))
      for (Form f : forms_at(chunk, k++))
        out.push_back(
            all_to_all_in(f, input<T>(dist::get_rank(), chunk * static_cast<std::size_t>(n))));
    return out;
  }, [](int n) {
    std::vector<std::vector<std::vector<T>>> out;
    std::size_t k = 0;
    for (std::size_t chunk : chunks_at(n))
      for ([[maybe_unused]] Form f : forms_at(chunk, k++))
        out.push_back(from_ref<T>(
            ref::all_to_all(to_ref(inputs<T>(n, chunk * static_cast<std::size_t>(n))))));
    return out;
  });
}

// More ranks than cores: broadcast, all_gather and barrier at 64 and 256 ranks.
TEST(LargeWorld, BroadcastAllGatherBarrier) {
  for (int n : {64, 256}) {
    const int src = n - 3;
    const auto got = dist::sim::run(world(n), [src] {
      const int rank = dist::get_rank();
      auto b = input<double>(rank, 5);
      dist::broadcast(b, src);
      dist::barrier();
      const auto gathered = concat(dist::all_gather(input<std::int32_t>(rank, 3)));
      dist::barrier();
      return std::pair{b, gathered};
    });
    const auto b_expected = ref::broadcast(inputs<double>(n, 5), src);
    const auto g_expected = ref::all_gather(inputs<std::int32_t>(n, 3));
    for (std::size_t r = 0; r < got.size(); ++r) {
      EXPECT_TRUE(bits_equal(got[r].first, b_expected[r])) << "world " << n << ", rank " << r;
      EXPECT_TRUE(bits_equal(got[r].second, g_expected[r])) << "world " << n << ", rank " << r;
    }
  }
}

}  // namespace
