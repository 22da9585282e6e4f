// Argument errors of the reference collectives: empty world, count mismatch, root out of range,
// non-divisible counts. Each must be std::invalid_argument naming the argument and its values.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/collectives.hpp"

namespace {

namespace ref = dist::reference;
using ref::Op;
using I = ref::PerRank<std::int32_t>;

// Runs f, expects std::invalid_argument, and checks that its message contains every fragment.
void expect_invalid(const std::function<void()>& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no std::invalid_argument thrown";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const auto& s : fragments) EXPECT_NE(msg.find(s), std::string::npos) << "'" << s << "' not in: " << msg;
  }
}

TEST(Validation, EmptyWorld) {
  const std::vector<std::string> msg = {"world size must be >= 1, got 0"};
  expect_invalid([] { (void)ref::all_reduce(I{}, Op::sum); }, msg);
  expect_invalid([] { (void)ref::reduce(I{}, Op::sum, 0); }, msg);
  expect_invalid([] { (void)ref::broadcast(I{}, 0); }, msg);
  expect_invalid([] { (void)ref::all_gather(I{}); }, msg);
  expect_invalid([] { (void)ref::gather(I{}, 0); }, msg);
  expect_invalid([] { (void)ref::scatter(std::vector<std::int32_t>{}, 0, 0); }, msg);
  expect_invalid([] { (void)ref::reduce_scatter(I{}, Op::sum); }, msg);
  expect_invalid([] { (void)ref::all_to_all(I{}); }, msg);
  expect_invalid([] { ref::barrier(0); }, msg);
  expect_invalid([] { (void)ref::scatter(std::vector<std::int32_t>{1}, -2, 0); }, {"got -2"});
}

TEST(Validation, CountMismatch) {
  const std::vector<std::string> msg = {"rank 2", "count 3", "rank 0 has count 2"};
  const I in = {{1, 2}, {3, 4}, {5, 6, 7}};
  expect_invalid([&] { (void)ref::all_reduce(in, Op::sum); }, msg);
  expect_invalid([&] { (void)ref::reduce(in, Op::sum, 0); }, msg);
  expect_invalid([&] { (void)ref::broadcast(in, 1); }, msg);
  expect_invalid([&] { (void)ref::all_gather(in); }, msg);
  expect_invalid([&] { (void)ref::gather(in, 0); }, msg);
  expect_invalid([&] { (void)ref::reduce_scatter(in, Op::sum); }, msg);
  expect_invalid([&] { (void)ref::all_to_all(in); }, msg);
  expect_invalid([] { (void)ref::all_gather(I{{1}, {}}); }, {"rank 1 has count 0", "rank 0 has count 1"});
}

TEST(Validation, RootOutOfRange) {
  const I in = {{1}, {2}, {3}};
  expect_invalid([&] { (void)ref::reduce(in, Op::sum, 3); }, {"reduce", "root 3", "[0, 3)"});
  expect_invalid([&] { (void)ref::reduce(in, Op::sum, -1); }, {"root -1", "[0, 3)"});
  expect_invalid([&] { (void)ref::broadcast(in, 5); }, {"broadcast", "root 5", "[0, 3)"});
  expect_invalid([&] { (void)ref::gather(in, -1); }, {"gather", "root -1"});
  expect_invalid([] { (void)ref::scatter(std::vector<std::int32_t>{1, 2}, 2, 2); }, {"scatter", "root 2", "[0, 2)"});
}

TEST(Validation, NotDivisible) {
  expect_invalid([] { (void)ref::reduce_scatter(I{{1, 2, 3}, {4, 5, 6}}, Op::sum); },
                 {"reduce_scatter", "count 3", "world size 2"});
  expect_invalid([] { (void)ref::all_to_all(I{{1, 2}, {3, 4}, {5, 6}}); },
                 {"all_to_all", "count 2", "world size 3"});
  expect_invalid([] { (void)ref::scatter(std::vector<std::int32_t>{1, 2, 3, 4, 5}, 2, 0); },
                 {"scatter", "count 5", "world size 2"});
}

TEST(Validation, IllegalOpNamesOpAndType) {
  expect_invalid([] { (void)ref::all_reduce(ref::PerRank<float>{{1.0f}}, Op::band); },
                 {"all_reduce", "band", "float32"});
  expect_invalid([] { (void)ref::reduce_scatter(ref::PerRank<ref::Half>{{}}, Op::bxor); },
                 {"reduce_scatter", "bxor", "float16"});
}

}  // namespace
