// Argument errors on sim: each raises dist::InvalidArgument on every rank (no hang), with a
// message naming the argument, and dist::sim::run reports them as one RunError.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "sim/tests/sim_test_util.hpp"

namespace {

using namespace sim_test;
using ::testing::HasSubstr;

// Runs `body` on every rank of `n`, expects each rank to fail with InvalidArgument, and checks
// that every rank's message contains each of `words`.
void expect_invalid_everywhere(int n, const std::function<void()>& body,
                               const std::vector<std::string>& words) {
  const auto err = run_error(world(n), body);
  ASSERT_TRUE(err.has_value()) << "the run did not fail";
  EXPECT_EQ(err->code(), dist::ErrorCode::invalid_argument);
  ASSERT_EQ(err->outcomes().size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(err->failed_with<dist::InvalidArgument>(r))
        << "rank " << r << ": " << err->outcomes()[static_cast<std::size_t>(r)].message;
    for (const auto& w : words)
      EXPECT_THAT(err->outcomes()[static_cast<std::size_t>(r)].message, HasSubstr(w))
          << "rank " << r;
  }
}

TEST(ArgumentErrors, BitwiseOpOnFloatDtypes) {
  for (const char* op : {"band", "bor", "bxor"}) {
    expect_invalid_everywhere(2, [op] {
      std::vector<float> v{1.f, 2.f};
      dist::all_reduce(v, op);
    }, {op, "float32"});
    expect_invalid_everywhere(3, [op] {
      std::vector<dist::float16> v(2);
      dist::reduce(v, 1, op);
    }, {op, "float16"});
    expect_invalid_everywhere(2, [op] {
      dist::reduce_scatter(std::vector<double>(4), op);
    }, {op, "float64"});
    expect_invalid_everywhere(2, [op] {
      dist::Tensor t = dist::Tensor::zeros({3}, dist::DType::bfloat16);
      dist::all_reduce(t, op);
    }, {op, "bfloat16"});
  }
}

TEST(ArgumentErrors, RootOutOfRange) {
  expect_invalid_everywhere(2, [] {
    std::vector<int> v(2);
    dist::broadcast(v, 2);
  }, {"'src'"});
  expect_invalid_everywhere(3, [] {
    std::vector<int> v(2);
    dist::reduce(v, -1);
  }, {"'dst'"});
  expect_invalid_everywhere(2, [] { dist::gather(std::vector<int>(2), 5); }, {"'dst'"});
  expect_invalid_everywhere(2, [] {
    dist::Tensor t = dist::Tensor::zeros({2}, dist::DType::int8);
    dist::gather(t, -3);
  }, {"'dst'"});
  expect_invalid_everywhere(3, [] {
    std::vector<int> out(1);
    dist::scatter(std::span<int>(out), std::span<const int>(), 3);
  }, {"'src'"});
  expect_invalid_everywhere(2, [] {
    std::vector<int> v(2);
    dist::broadcast_async(std::span<int>(v), -1).wait();
  }, {"'src'"});
}

TEST(ArgumentErrors, AllGatherAsyncOutputOfTheWrongSize) {
  expect_invalid_everywhere(3, [] {
    std::vector<float> in(4), out(4 * 3 - 1);
    dist::all_gather_async(std::span<float>(out), std::span<const float>(in)).wait();
  }, {"'output'"});
}

TEST(ArgumentErrors, CountNotDivisibleByTheGroupSize) {
  expect_invalid_everywhere(2, [] { dist::reduce_scatter(std::vector<std::int32_t>(7)); },
                            {"reduce_scatter", "'input'", "divisible"});
  expect_invalid_everywhere(3, [] { dist::all_to_all(std::vector<std::uint8_t>(7)); },
                            {"all_to_all", "'input'", "divisible"});
  expect_invalid_everywhere(3, [] {
    std::vector<double> in(8), out(2);
    dist::reduce_scatter_async(std::span<double>(out), std::span<const double>(in)).wait();
  }, {"'input'", "divisible"});
}

TEST(ArgumentErrors, SendOrRecvWithSelf) {
  expect_invalid_everywhere(2, [] { dist::send(std::vector<int>(2), dist::get_rank()); },
                            {"'dst'"});
  expect_invalid_everywhere(2, [] {
    std::vector<int> v(2);
    dist::recv(v, dist::get_rank());
  }, {"'src'"});
}

TEST(ArgumentErrors, NegativeTag) {
  expect_invalid_everywhere(2, [] {
    std::vector<int> v(2);
    if (dist::get_rank() == 0) dist::send(v, 1, -1);
    else dist::recv(v, 0, -1);
  }, {"'tag'"});
}

TEST(ArgumentErrors, PeerOutOfRange) {
  expect_invalid_everywhere(2, [] { dist::send(std::vector<int>(2), 2); }, {"'dst'"});
  // any_source (-1) is a recv's only negative src; a send has no such destination.
  expect_invalid_everywhere(2, [] { dist::send(std::vector<int>(2), dist::any_source); },
                            {"'dst'"});
  expect_invalid_everywhere(2, [] {
    std::vector<int> v(2);
    dist::recv(v, -2);
  }, {"'src'"});
}

// An error on every rank surfaces as one RunError whose message carries the error.
TEST(ArgumentErrors, RunErrorCarriesTheError) {
  const auto err = run_error(world(3), [] {
    std::vector<float> v(1);
    dist::all_reduce(v, "bxor");
  });
  ASSERT_TRUE(err.has_value());
  EXPECT_THAT(err->what(), HasSubstr("'bxor'"));
  EXPECT_THAT(err->what(), HasSubstr("float32"));
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(err->failed_with<dist::InvalidArgument>(r));
    EXPECT_FALSE(err->failed_with<dist::DesyncError>(r));
  }
}

// After a rank catches an argument error, the ranks are still in step: nothing was posted.
TEST(ArgumentErrors, CaughtErrorsLeaveTheRanksInStep) {
  const auto got = dist::sim::run(world(3), [] {
    std::vector<std::int64_t> v{dist::get_rank()};
    try {
      dist::broadcast(v, 7);
    } catch (const dist::InvalidArgument&) {
    }
    dist::all_reduce(v, dist::ReduceOp::sum);
    return v.front();
  });
  EXPECT_EQ(got, (std::vector<std::int64_t>{3, 3, 3}));
}

}  // namespace
