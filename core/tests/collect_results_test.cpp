// collect_results: MMEngine's worked examples on worlds of 1-3 ranks for both devices, the argument
// checks (also when not distributed), and the cpu path's files: nothing left behind, nothing it did
// not create removed or overwritten, non-zero ranks returning only after rank 0 has cleaned up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/tests/helpers_util.hpp"
#include "dist/dist.hpp"
#include "dist/sim/run.hpp"

namespace {

namespace fs = std::filesystem;
using helpers_test::expect_failure;
using helpers_test::message_of;
using helpers_test::world;
using ::testing::HasSubstr;

// Each test runs in a fresh current directory, so `.dist_test` and leftovers can be checked.
class InTempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = (fs::temp_directory_path() / "dist_collect_XXXXXX").string();
    ASSERT_NE(::mkdtemp(name.data()), nullptr);
    dir_ = name;
    previous_ = fs::current_path();
    fs::current_path(dir_);
  }
  void TearDown() override {
    fs::current_path(previous_);
    fs::remove_all(dir_);
  }
  // Every path under the test directory, relative to it.
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      out.push_back(fs::relative(e.path(), dir_).string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_, previous_;
};

template <class T>
std::vector<std::optional<std::vector<T>>> collect(const std::vector<std::vector<T>>& parts,
                                                   long size, const std::string& device,
                                                   std::optional<std::string> tmpdir = {}) {
  return dist::sim::run(world(static_cast<int>(parts.size())), [&] {
    return dist::collect_results(parts[static_cast<std::size_t>(dist::get_rank())], size, device,
                                 tmpdir);
  });
}

// Rank 0 holds `expected`; every other rank nullopt.
template <class T>
void expect_on_rank0(const std::vector<std::optional<std::vector<T>>>& got,
                     const std::vector<T>& expected) {
  ASSERT_TRUE(got.at(0).has_value());
  EXPECT_EQ(*got[0], expected);
  for (std::size_t r = 1; r < got.size(); ++r) EXPECT_FALSE(got[r].has_value()) << "rank " << r;
}

// Python's mixed lists: 'foo', 24, {1: 2}, {'a': 'b'}.
using Value =
    std::variant<std::string, int, std::map<int, int>, std::map<std::string, std::string>>;
const Value foo = std::string("foo"), n24 = 24, one_two = std::map<int, int>{{1, 2}},
            a_b = std::map<std::string, std::string>{{"a", "b"}}, extra = std::string("extra");

class CollectExamples : public InTempDir, public ::testing::WithParamInterface<const char*> {};

TEST_P(CollectExamples, TwoRanks) {
  const std::vector<std::vector<Value>> parts{{foo, one_two}, {n24, a_b}};
  expect_on_rank0(collect(parts, 4, GetParam()), {foo, n24, one_two, a_b});
  expect_on_rank0(collect(parts, 3, GetParam()), {foo, n24, one_two});
  expect_on_rank0(collect<Value>({{foo, one_two}, {n24, a_b, extra}}, 10, GetParam()),
                  {foo, n24, one_two, a_b, extra});
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

TEST_P(CollectExamples, ThreeUnevenRanksKeepEveryElement) {
  const std::vector<std::vector<int>> parts{{1, 2}, {3, 4, 5, 6, 7}, {8, 9, 10}};
  expect_on_rank0(collect(parts, 100, GetParam()), {1, 3, 8, 2, 4, 9, 5, 10, 6, 7});
  expect_on_rank0(collect(parts, 7, GetParam()), {1, 3, 8, 2, 4, 9, 5});
  expect_on_rank0(collect(parts, 0, GetParam()), {});
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

TEST_P(CollectExamples, EmptyPartsAndNoneLikeValues) {
  expect_on_rank0(collect<int>({{}, {5, 6}}, 5, GetParam()), {5, 6});
  expect_on_rank0(collect<int>({{}, {}, {}}, 5, GetParam()), {});
  // MMEngine drops None items here; dist never drops an element for its value.
  using Opt = std::optional<int>;
  expect_on_rank0(collect<Opt>({{std::nullopt, 1}, {2, std::nullopt}}, 4, GetParam()),
                  {std::nullopt, 2, 1, std::nullopt});
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

TEST_P(CollectExamples, WorldOfOneCutsThePart) {
  expect_on_rank0(collect<int>({{1, 2, 3}}, 2, GetParam()), {1, 2});
  expect_on_rank0(collect<std::optional<int>>({{std::nullopt, 1}}, 5, GetParam()),
                  {std::nullopt, 1});
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Devices, CollectExamples, ::testing::Values("cpu", "gpu"));

TEST_F(InTempDir, NotDistributedCutsThePartAndCreatesNothing) {
  const std::vector<std::optional<int>> part{std::nullopt, 1, 2};
  for (const char* device : {"cpu", "gpu"}) {
    EXPECT_EQ(dist::collect_results(part, 2, device),
              (std::vector<std::optional<int>>{std::nullopt, 1}));
    EXPECT_EQ(dist::collect_results(part, 10, device), part);
    EXPECT_EQ(dist::collect_results(part, 0, device), (std::vector<std::optional<int>>{}));
  }
  EXPECT_EQ(dist::collect_results(part, 1, "cpu", "some/dir"),
            (std::vector<std::optional<int>>{std::nullopt}));
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

// The message of the InvalidArgument collect_results raises for these arguments.
std::string argument_error(const std::string& device, std::optional<std::string> tmpdir,
                           long size) {
  try {
    dist::collect_results(std::vector<int>{1}, size, device, std::move(tmpdir));
  } catch (const dist::InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

TEST(CollectArguments, CheckedFirstEvenWhenNotDistributed) {
  for (const char* bad : {"cuda", "xpu", "npu", "", "CPU"})
    EXPECT_THAT(argument_error(bad, std::nullopt, 1),
                HasSubstr("device must be 'cpu' or 'gpu', but got '" + std::string(bad) + "'"));
  EXPECT_THAT(argument_error("cuda", "dir", -1), HasSubstr("got 'cuda'"));  // device first
  EXPECT_THAT(argument_error("gpu", "dir", 1),
              HasSubstr("tmpdir must not be given when device is 'gpu'"));
  EXPECT_THAT(argument_error("cpu", std::nullopt, -1), HasSubstr("'size' = -1 must be >= 0"));
  EXPECT_THAT(argument_error("gpu", std::nullopt, -3), HasSubstr("'size' = -3"));
  const auto e =
      expect_failure(world(2), [] { dist::collect_results(std::vector<int>{1}, 1, "xpu"); });
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << message_of(e, r);
}

TEST_F(InTempDir, CpuTmpdirIsCreatedAndRemovedBeforeAnyRankReturns) {
  const std::string tmpdir = "results/nested/";
  const auto seen = dist::sim::run(world(3), [&] {
    // A large part on rank 0 makes its reading slow enough for an early return to be seen.
    std::vector<std::string> part{std::string(dist::get_rank() == 0 ? 8u << 20 : 1u, 'x')};
    const auto got = dist::collect_results(part, 3, "cpu", tmpdir);
    const bool clean = !fs::exists("results/nested") && !fs::exists("results");
    return std::make_pair(got ? got->size() : 0u, clean);
  });
  EXPECT_EQ(seen[0].first, 3u);
  for (const auto& [size, clean] : seen) EXPECT_TRUE(clean);
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

TEST_F(InTempDir, CpuWithoutTmpdirRemovesDistTestItCreated) {
  const auto seen = dist::sim::run(world(2), [] {
    const auto got = dist::collect_results(std::vector<int>{dist::get_rank()}, 2, "cpu");
    return !fs::exists(".dist_test");
  });
  EXPECT_EQ(seen, (std::vector<bool>{true, true}));
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(InTempDir, CpuKeepsForeignFilesAndTheirDirectories) {
  fs::create_directory("shared");
  write_file("shared/keep.txt", "mine");
  fs::create_directories(".dist_test/other");
  write_file(".dist_test/other/keep.txt", "theirs");
  expect_on_rank0(collect<int>({{1}, {2}, {3}}, 3, "cpu", "shared"), {1, 2, 3});
  expect_on_rank0(collect<int>({{1}, {2}}, 3, "cpu"), {1, 2});
  EXPECT_EQ(leftovers(),
            (std::vector<std::string>{".dist_test", ".dist_test/other", ".dist_test/other/keep.txt",
                                      "shared", "shared/keep.txt"}));
  EXPECT_EQ(text_of("shared/keep.txt"), "mine");
}

TEST_F(InTempDir, CpuLeavesAnExistingEmptyDistTestInPlace) {
  fs::create_directory(".dist_test");
  expect_on_rank0(collect<int>({{1}, {2}}, 3, "cpu"), {1, 2});
  EXPECT_EQ(leftovers(), (std::vector<std::string>{".dist_test"}));
}

TEST_F(InTempDir, CpuLeavesTheCallersExistingEmptyTmpdirInPlace) {
  fs::create_directories("mine/empty");
  expect_on_rank0(collect<int>({{1}, {2}, {3}}, 3, "cpu", "mine/empty"), {1, 2, 3});
  expect_on_rank0(collect<int>({{4}}, 1, "cpu", "mine/empty"), {4});  // a world of one
  EXPECT_EQ(leftovers(), (std::vector<std::string>{"mine", "mine/empty"}));
}

TEST_F(InTempDir, CpuNeverOverwritesAnExistingPartFile) {
  fs::create_directory("shared");
  write_file("shared/part_1.bin", "foreign");
  const auto e = expect_failure(world(3), [] {
    dist::collect_results(std::vector<int>{dist::get_rank()}, 3, "cpu", "shared");
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << message_of(e, r);
    EXPECT_THAT(message_of(e, r), HasSubstr("rank 1's part file '"));
    EXPECT_THAT(message_of(e, r), HasSubstr("shared/part_1.bin' already exists"));
  }
  EXPECT_EQ(leftovers(), (std::vector<std::string>{"shared", "shared/part_1.bin"}));
  EXPECT_EQ(text_of("shared/part_1.bin"), "foreign");
}

TEST_F(InTempDir, CpuUndecodablePartFailsEveryRankAndCleansUp) {
  const auto e = expect_failure(world(3), [] {
    if (dist::get_rank() == 2)
      dist::collect_results(std::vector<std::string>{"not an int"}, 3, "cpu", "shared");
    else
      dist::collect_results(std::vector<std::int64_t>{1}, 3, "cpu", "shared");
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(e.failed_with<dist::InvalidArgument>(r)) << message_of(e, r);
    EXPECT_THAT(message_of(e, r),
                HasSubstr("collect_results: cannot deserialize the object from rank 2"));
  }
  EXPECT_THAT(message_of(e, 1), HasSubstr("(raised on rank 0)"));
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

TEST_F(InTempDir, CpuDirectoryFailureOnRankZeroFailsEveryRank) {
  write_file("plain_file", "x");
  const auto e = expect_failure(
      world(2), [] { dist::collect_results(std::vector<int>{1}, 2, "cpu", "plain_file/sub"); });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(e.failed_with<dist::BackendError>(r)) << message_of(e, r);
    EXPECT_THAT(message_of(e, r),
                HasSubstr("cannot create directory 'plain_file/sub': Not a directory"));
  }
  EXPECT_EQ(leftovers(), (std::vector<std::string>{"plain_file"}));
}

// Records, while rank 0 decodes the parts (the files still exist), the permissions of every
// path under the current directory (mkdtemp's random suffix replaced by XXXXXX).
std::map<std::string, fs::perms> seen_perms;
struct Probe {
  int value = 0;
  template <class Archive> void serialize(Archive& ar) {
    ar(value);
    if constexpr (Archive::is_loading::value)
      for (const auto& e : fs::recursive_directory_iterator(".")) {
        std::string name = e.path().lexically_relative(".").string();
        const std::string prefix = ".dist_test/collect_";
        if (name.starts_with(prefix)) name.replace(prefix.size(), 6, "XXXXXX");
        seen_perms[name] = e.status().permissions() & fs::perms::all;
      }
  }
};

TEST_F(InTempDir, CpuCreatesPrivateDirectoriesAndFiles) {
  seen_perms.clear();
  dist::sim::run(world(2), [] { dist::collect_results(std::vector<Probe>{{1}}, 2, "cpu"); });
  const auto dir = fs::perms::owner_all, file = fs::perms::owner_read | fs::perms::owner_write;
  EXPECT_EQ(seen_perms,
            (std::map<std::string, fs::perms>{{".dist_test", dir},
                                              {".dist_test/collect_XXXXXX", dir},
                                              {".dist_test/collect_XXXXXX/part_0.bin", file},
                                              {".dist_test/collect_XXXXXX/part_1.bin", file}}));
  EXPECT_THAT(leftovers(), ::testing::IsEmpty());
}

}  // namespace
