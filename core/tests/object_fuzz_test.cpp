// A fuzz target for the object decoder, run as a bounded test: a deterministic, seeded mutation
// loop (bit flips, interesting bytes, length and index overwrites, truncation, insertion, erasure,
// repetition, splicing) over a corpus of valid encodings, core/tests/fuzz_corpus/<type>-<k>.bin.
// Each mutant is decoded as the type it came from and as one other type (a peer that passed a
// different type), for DIST_FUZZ_SECONDS (default 10). It passes when every decode either succeeds
// (and the decoded value re-encodes and decodes again) or raises dist::InvalidArgument: any other
// exception fails it, and a crash or a sanitizer report ends the binary (ci/sanitize runs this
// binary under ASan+UBSan and TSan). It prints the executions and the time.
//
// Environment: DIST_FUZZ_SECONDS (time budget), DIST_FUZZ_SEED (default 1), DIST_FUZZ_ITERATION
// (replays one mutant and prints it), DIST_FUZZ_VERBOSE=1 (prints each iteration before decoding
// it, to find the one that crashes). The corpus is the encoder's output for the samples below:
//   DIST_FUZZ_WRITE_CORPUS=1 build/core/helpers_tests
//   --gtest_filter=ObjectFuzz.CorpusIsTheEncoderOutput
// rewrites it (after a change of the samples or of the format); the test checks it otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cereal/types/forward_list.hpp>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <forward_list>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "core/tests/fuzz_support.hpp"
#include "core/tests/object_test_types.hpp"
#include "dist/dist.hpp"

#ifndef DIST_FUZZ_CORPUS_DIR
#error "DIST_FUZZ_CORPUS_DIR (the corpus folder) is set by core/CMakeLists.txt"
#endif

namespace {

using fuzz_support::Bytes;
using fuzz_support::env_or;
using fuzz_support::hex;
using fuzz_support::peak_kib;
using fuzz_support::read_file;
using fuzz_support::write_file;
using object_test::Cell;
using object_test::Json;
using object_test::Node;

// MMEngine-style records: a struct with a string, a vector, an optional and a variant.
struct FuzzRecord {
  std::string name;
  std::vector<double> scores;
  std::optional<int> label;
  std::variant<int, std::string> tag;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, scores, label, tag);
  }
};
enum class Color : std::uint8_t { red, green };
using Item = std::variant<std::monostate, std::string, std::map<int, int>>;
using Mixed = std::tuple<int, std::optional<std::string>, std::pair<float, bool>, std::set<int>>;
using Timed = std::pair<std::chrono::milliseconds, std::complex<double>>;

// A type the fuzzer decodes as: its samples' encodings, and its decode.
struct FuzzType {
  std::string name;
  std::vector<Bytes> samples;
  bool stable_bytes = true;  // false for unordered containers (their order is the library's)
  // Decodes; false when the bytes raise InvalidArgument. A value that decodes must re-encode and
  // decode again (any exception there escapes as a failure).
  std::function<bool(std::span<const std::byte>)> decode;
};

template <class T>
FuzzType fuzz_type(std::string name, std::vector<T> values, bool stable = true) {
  FuzzType t{std::move(name), {}, stable, [](std::span<const std::byte> bytes) {
               T value{};
               try {
                 value = dist::detail::from_bytes<T>(bytes, "fuzz", 0);
               } catch (const dist::InvalidArgument&) {
                 return false;
               }
               const Bytes again = dist::detail::to_bytes(value);
               (void)dist::detail::from_bytes<T>(again, "fuzz re-decode", 0);
               return true;
             }};
  for (const auto& v : std::as_const(values)) t.samples.push_back(dist::detail::to_bytes(v));
  return t;
}

Cell cell_list(int n) {
  Cell head{0, nullptr};
  Cell* at = &head;
  for (int i = 1; i < n; ++i) {
    at->next = std::make_unique<Cell>(Cell{i, nullptr});
    at = at->next.get();
  }
  return head;
}

Json json_sample() {
  std::map<std::string, Json> obj;
  obj["pi"] = Json{3.14};
  obj["name"] = Json{std::string("dist")};
  obj["list"] = Json{std::vector<Json>{Json{1.0}, Json{}, Json{std::vector<Json>{Json{2.0}}}}};
  return Json{std::move(obj)};
}

std::vector<FuzzType> fuzz_types() {
  std::vector<FuzzType> types;
  types.push_back(fuzz_type<int>("int", {0, -7, std::numeric_limits<int>::max()}));
  types.push_back(fuzz_type<bool>("bool", {true}));
  types.push_back(fuzz_type<std::string>("string", {"", "hello", std::string(300, 'x')}));
  types.push_back(fuzz_type<std::vector<double>>("doubles", {{}, {1.5, -2.25, 1e300}}));
  types.push_back(fuzz_type<std::vector<std::string>>("strings", {{"a", "", "bcd"}}));
  types.push_back(fuzz_type<std::map<std::string, int>>("string_map", {{{"k", 1}, {"other", 2}}}));
  types.push_back(fuzz_type<FuzzRecord>("record", {FuzzRecord{"r0", {0.5, 1.5}, std::nullopt, 3},
                                                   FuzzRecord{"", {}, 7, std::string("t")}}));
  types.push_back(fuzz_type<std::vector<Item>>(
      "items", {{std::string("a"), std::map<int, int>{{1, 2}}, std::monostate{}}}));
  types.push_back(fuzz_type<std::vector<std::array<double, 16>>>("pages", {{{}, {}}}));
  types.push_back(fuzz_type<std::vector<std::array<double, 1024>>>("big_pages", {{{}}}));
  types.push_back(fuzz_type<std::vector<std::optional<std::array<double, 64>>>>(
      "optional_pages", {{std::nullopt, std::array<double, 64>{}, std::nullopt}}));
  types.push_back(fuzz_type<Node>(
      "tree", {object_test::node_chain(6), Node{1, {Node{2, {}}, Node{3, {Node{4, {}}}}}}}));
  std::vector<Cell> cells;
  cells.push_back(cell_list(5));
  types.push_back(fuzz_type<Cell>("list", std::move(cells)));
  types.push_back(fuzz_type<Json>("json", {json_sample()}));
  types.push_back(fuzz_type<std::unordered_map<std::string, std::vector<int>>>(
      "hash_map", {{{"a", {1, 2}}, {"bb", {}}}}, false));
  types.push_back(
      fuzz_type<std::unordered_set<std::int64_t>>("hash_set", {{5, -1, 1LL << 40}}, false));
  types.push_back(fuzz_type<std::deque<std::list<std::string>>>("deque_lists", {{{"x", "y"}, {}}}));
  types.push_back(fuzz_type<std::forward_list<std::pair<int, std::string>>>(
      "forward_list", {{{1, "one"}, {2, "two"}}}));
  types.push_back(fuzz_type<Mixed>("tuple", {Mixed{4, "s", {1.5f, true}, {3, 1, 2}}}));
  types.push_back(fuzz_type<std::vector<std::vector<std::monostate>>>("empties", {{{}, {{}, {}}}}));
  types.push_back(fuzz_type<std::vector<bool>>("bools", {{true, false, true}}));
  auto shared = std::make_shared<int>(9);
  types.push_back(
      fuzz_type<std::vector<std::shared_ptr<int>>>("shared", {{shared, nullptr, shared}}));
  types.push_back(fuzz_type<std::multimap<Color, Timed>>(
      "multimap", {{{Color::red, {std::chrono::milliseconds(5), {1.0, -1.0}}},
                    {Color::red, {std::chrono::milliseconds(6), {0.0, 2.0}}}}}));
  return types;
}

std::filesystem::path corpus_dir() { return DIST_FUZZ_CORPUS_DIR; }

TEST(ObjectFuzz, CorpusIsTheEncoderOutput) {
  const bool write = env_or("DIST_FUZZ_WRITE_CORPUS", 0) == 1;
  if (write) std::filesystem::create_directories(corpus_dir());
  for (const auto& type : fuzz_types()) {
    for (std::size_t k = 0; k < type.samples.size(); ++k) {
      const auto path = corpus_dir() / (type.name + "-" + std::to_string(k) + ".bin");
      const Bytes& sample = type.samples[k];
      if (write) {
        write_file(path, sample);
        continue;
      }
      ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing (see the file comment)";
      const Bytes file = read_file(path);
      EXPECT_TRUE(type.decode(file)) << path;
      if (type.stable_bytes)
        EXPECT_EQ(hex(file, 1 << 20), hex(sample, 1 << 20)) << path << " differs from the encoder";
      else EXPECT_EQ(file.size(), sample.size()) << path;
    }
  }
}

// A corpus entry: its bytes and the index of its type (by file name).
struct Seed {
  Bytes bytes;
  std::size_t type;
};

std::vector<Seed> load_corpus(const std::vector<FuzzType>& types) {
  std::vector<Seed> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(corpus_dir())) {
    const auto name = entry.path().filename().string();
    if (entry.path().extension() != ".bin") continue;
    for (std::size_t t = 0; t < types.size(); ++t)
      if (name.rfind(types[t].name + "-", 0) == 0) seeds.push_back({read_file(entry.path()), t});
  }
  std::sort(seeds.begin(), seeds.end(), [](const Seed& a, const Seed& b) {
    return std::tie(a.type, a.bytes) < std::tie(b.type, b.bytes);
  });
  return seeds;
}

TEST(ObjectFuzz, MutatedEncodingsDecodeOrRaiseInvalidArgument) {
  const auto types = fuzz_types();
  const auto corpus = load_corpus(types);
  std::vector<const Bytes*> others;
  for (const auto& s : corpus) others.push_back(&s.bytes);
  ASSERT_GE(corpus.size(), types.size()) << "no corpus in " << corpus_dir();
  const auto seconds = static_cast<double>(env_or("DIST_FUZZ_SECONDS", 10));
  const std::uint64_t seed = env_or("DIST_FUZZ_SEED", 1);
  const std::uint64_t only = env_or("DIST_FUZZ_ITERATION", ~0ull);
  const bool verbose = env_or("DIST_FUZZ_VERBOSE", 0) == 1;

  using Clock = std::chrono::steady_clock;
  const long peak_before = peak_kib(true);
  const auto start = Clock::now();
  std::uint64_t iterations = 0, executions = 0, decoded = 0, failures = 0;
  Clock::duration slowest{};
  for (std::uint64_t i = only == ~0ull ? 0 : only;; ++i) {
    if (only == ~0ull ? Clock::now() - start >= std::chrono::duration<double>(seconds) : i != only)
      break;
    // Each mutant comes from its own generator: iteration i of seed s is always the same bytes.
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + i);
    const Seed& from = corpus[rng() % corpus.size()];
    const Bytes mutant = fuzz_support::mutate(from.bytes, others, rng);
    const std::size_t as[] = {from.type, static_cast<std::size_t>(rng() % types.size())};
    if (verbose || only != ~0ull) {
      std::printf("iteration %llu: %s as %s, %zu bytes: %s\n", static_cast<unsigned long long>(i),
                  types[from.type].name.c_str(), types[as[1]].name.c_str(), mutant.size(),
                  hex(mutant).c_str());
      std::fflush(stdout);
    }
    for (const std::size_t t : as) {
      const auto t0 = Clock::now();
      try {
        decoded += types[t].decode(mutant) ? 1 : 0;
      } catch (const std::exception& e) {
        if (++failures <= 5)
          ADD_FAILURE() << "iteration " << i << " (DIST_FUZZ_SEED=" << seed
                        << " DIST_FUZZ_ITERATION=" << i << ") as " << types[t].name
                        << ": unexpected exception: " << e.what() << "\nbytes: " << hex(mutant);
      }
      slowest = std::max(slowest, Clock::now() - t0);
      ++executions;
    }
    ++iterations;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const long peak_growth = peak_kib(false) - peak_before;
  std::printf(
      "object fuzz: %llu executions (%llu decoded, %llu rejected) of %llu mutants in %.1f s "
      "(%.0f/s), seed %llu, %zu corpus files, slowest decode %.1f ms, peak memory +%ld "
      "KiB, %llu failures\n",
      static_cast<unsigned long long>(executions), static_cast<unsigned long long>(decoded),
      static_cast<unsigned long long>(executions - decoded - failures),
      static_cast<unsigned long long>(iterations), elapsed,
      static_cast<double>(executions) / std::max(elapsed, 1e-9),
      static_cast<unsigned long long>(seed), corpus.size(),
      std::chrono::duration<double, std::milli>(slowest).count(), peak_growth,
      static_cast<unsigned long long>(failures));
  RecordProperty("executions", std::to_string(executions));
  RecordProperty("seconds", std::to_string(elapsed));
  EXPECT_EQ(failures, 0u);
  if (only == ~0ull) {
    EXPECT_GE(executions, 1000u) << "the loop hardly ran";
  }
  EXPECT_LT(slowest, std::chrono::seconds(5)) << "a single decode took too long";
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Mutants are at most 64 KiB and the decoder's memory follows the bytes (the most a mutant can
  // honestly describe is 64 Ki empty optionals of 520 bytes, 33 MiB), where a length allowance
  // that ignored the element size let 8 bytes ask for 512 MiB of big_pages. (The sanitizers'
  // allocators keep freed memory, so only plain builds check.)
  EXPECT_LT(peak_growth, 256l << 10) << "KiB of peak memory growth";
#endif
}

}  // namespace
