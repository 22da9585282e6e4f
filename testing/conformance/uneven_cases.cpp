// Uneven all_to_all over whole worlds: split sizes that differ per pair and include zeros, in the
// span form, its _async form and the list form, against reference/'s all_to_all_v bit for bit.
#include "testing/conformance/cases.hpp"

namespace conformance {
namespace {

class UnevenAllToAll : public conformance::Test {};

// Rank r sends split(r, j) elements to rank j (0 for some pairs), and a large block at world 3.
std::size_t split(int r, int j, int n) {
  if (n == 3 && r == 1 && j == 2) return 70001;
  return static_cast<std::size_t>((r * 3 + j * 5 + 1) % 4);
}

std::vector<std::int64_t> splits_from(int r, int n) {  // what rank r sends to each rank
  std::vector<std::int64_t> out;
  for (int j = 0; j < n; ++j) out.push_back(static_cast<std::int64_t>(split(r, j, n)));
  return out;
}
std::vector<std::int64_t> splits_to(int r, int n) {  // what each rank sends to rank r
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::int64_t>(split(i, r, n)));
  return out;
}
std::size_t total(const std::vector<std::int64_t>& splits) {
  std::size_t sum = 0;
  for (const auto s : splits) sum += static_cast<std::size_t>(s);
  return sum;
}

TEST_F(UnevenAllToAll, SpanAsyncAndListFormsMatchTheReference) {
  for (int n : world_runner().world_sizes) {
    const auto got = run_world(n, [n] {
      const int r = dist::get_rank();
      const auto in_splits = splits_from(r, n), out_splits = splits_to(r, n);
      const auto in = input<double>(r, total(in_splits), 3);
      PerRank<double> outs(2, std::vector<double>(total(out_splits)));
      dist::all_to_all(std::span<double>(outs[0]), std::span<const double>(in), out_splits,
                       in_splits);
      dist::all_to_all_async(std::span<double>(outs[1]), std::span<const double>(in), out_splits,
                             in_splits)
          .wait();
      std::vector<std::vector<double>> lists;  // the same blocks as lists
      std::size_t offset = 0;
      for (const auto s : in_splits) {
        lists.emplace_back(in.begin() + static_cast<std::ptrdiff_t>(offset),
                           in.begin() + static_cast<std::ptrdiff_t>(offset + s));
        offset += static_cast<std::size_t>(s);
      }
      std::vector<double> joined;
      for (const auto& block : dist::all_to_all(lists))
        joined.insert(joined.end(), block.begin(), block.end());
      outs.push_back(joined);
      return outs;
    });
    PerRank<double> inputs;
    std::vector<std::vector<std::size_t>> splits;
    for (int r = 0; r < n; ++r) {
      const auto s = splits_from(r, n);
      inputs.push_back(input<double>(r, total(s), 3));
      splits.emplace_back(s.begin(), s.end());
    }
    const auto want = ref::all_to_all_v(inputs, splits);
    for (const auto& [rank, outs] : got)
      for (std::size_t form = 0; form < outs.size(); ++form)
        EXPECT_TRUE(bits_equal(outs[form], want[static_cast<std::size_t>(rank)]))
            << world_runner().name << ", world " << n << ", rank " << rank << ", form " << form;
  }
}

// Rank 0 sends nothing and the last rank receives nothing, the others exchange blocks larger than
// a shared-memory eager message (an empty input must not read as MPI_IN_PLACE on mpi).
TEST_F(UnevenAllToAll, ARankThatSendsNothingAndOneThatReceivesNothing) {
  for (int n : world_runner().world_sizes) {
    if (n < 2) continue;
    const auto split_of = [n](int r, int j) -> std::size_t {
      return r == 0 || j == n - 1 ? 0 : 3000 + static_cast<std::size_t>(r * n + j);
    };
    const auto got = run_world(n, [&] {
      const int r = dist::get_rank();
      std::vector<std::int64_t> in_splits, out_splits;
      for (int j = 0; j < n; ++j) {
        in_splits.push_back(static_cast<std::int64_t>(split_of(r, j)));
        out_splits.push_back(static_cast<std::int64_t>(split_of(j, r)));
      }
      const auto in = input<double>(r, total(in_splits), 5);
      std::vector<double> out(total(out_splits));
      dist::all_to_all_async(std::span<double>(out), std::span<const double>(in), out_splits,
                             in_splits)
          .wait();
      return out;
    });
    PerRank<double> inputs;
    std::vector<std::vector<std::size_t>> splits(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < n; ++j) splits[static_cast<std::size_t>(r)].push_back(split_of(r, j));
      std::size_t sum = 0;
      for (const auto s : splits[static_cast<std::size_t>(r)]) sum += s;
      inputs.push_back(input<double>(r, sum, 5));
    }
    const auto want = ref::all_to_all_v(inputs, splits);
    for (const auto& [rank, out] : got)
      EXPECT_TRUE(bits_equal(out, want[static_cast<std::size_t>(rank)]))
          << world_runner().name << ", world " << n << ", rank " << rank;
  }
}

}  // namespace
}  // namespace conformance
