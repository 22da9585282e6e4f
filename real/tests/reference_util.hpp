// The real backends' tests' view of testing/: the reference bridge, and exact-sum inputs as
// their `input` (results equal the reference's whatever order a backend reduces in).
#pragma once

#include <cstdint>
#include <vector>

#include "testing/inputs.hpp"
#include "testing/typed_tests.hpp"

namespace real_test {

using namespace test_support;

template <class T> std::vector<T> input(int rank, std::size_t count, std::uint64_t salt) {
  return exact_sum_input<T>(rank, count, salt);
}

// Every element's storage bits, part by part (exact comparison; NaN compares by its bits).
template <class T> std::vector<std::vector<std::uint64_t>> bits(const PerRank<T>& in) {
  std::vector<std::vector<std::uint64_t>> out;
  for (const auto& v : in) out.push_back(bits_of(v));
  return out;
}

}  // namespace real_test
