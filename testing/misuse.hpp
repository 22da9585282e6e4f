// The misuse property, run on sim, gloo and mpi by each backend's tests (and under ASan in
// ci/sanitize): a careless user's calls, drawn from a seed. One rank (the victim) makes a call
// whose count, dtype, root or kind differs from the others', or gives an uneven all_to_all a
// split its peer does not expect, or leaves by an exception with an all_reduce in flight. What
// must hold whatever the backend: no crash and no sanitizer report; every rank ends within the
// timeout plus 5 s; the victim raises (a dist::Error, or its own exception when it threw); and a
// rank that returns holds its own call's right result, never garbage reported as success.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dist/dist.hpp"

namespace test_support::misuse {

using Clock = std::chrono::steady_clock;

enum class Kind { count, dtype, root, kind, splits, throw_in_flight };
inline constexpr int kinds = 6;

inline const char* name(Kind k) {
  switch (k) {
    case Kind::count: return "a count that differs";
    case Kind::dtype: return "a dtype that differs";
    case Kind::root: return "a root that differs";
    case Kind::kind: return "a barrier against an all_reduce";
    case Kind::splits: return "all_to_all splits that disagree";
    case Kind::throw_in_flight: return "an exception with an all_reduce in flight";
  }
  return "?";
}

struct Case {
  Kind kind = Kind::count;
  int victim = 0;
  std::size_t count = 1;  // the others' element count
  std::size_t other = 2;  // the victim's (Kind::count), or the split it sends its peer (splits)

  std::string text() const {
    return std::string(name(kind)) + " on rank " + std::to_string(victim) + " (count " +
           std::to_string(count) + ", the victim's " + std::to_string(other) + ")";
  }
};

// The property's seed: DIST_MISUSE_SEED when set (to replay a failure), else a fresh one. Every
// failure names it.
inline std::uint64_t seed() {
  if (const char* text = std::getenv("DIST_MISUSE_SEED")) return std::stoull(text);
  return (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
}

// Counts from one element to 300,000 (Open MPI corrupted the heap on 1,000 against 300,000).
inline Case draw(std::mt19937_64& rng, int world) {
  static constexpr std::size_t counts[] = {1, 3, 8, 1000, 300000};
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  Case c;
  c.kind = static_cast<Kind>(pick(kinds));
  c.victim = static_cast<int>(pick(static_cast<std::size_t>(world)));
  c.count = counts[pick(4)];
  c.other = counts[pick(5)];
  if (c.other == c.count) c.other = c.count + 1;
  if (c.kind == Kind::splits) c.other = 1 + pick(3) * 2;  // 1, 3 or 5 elements where 2 are expected
  return c;
}

// What one rank saw.
struct Outcome {
  bool returned = false;
  bool right = true;        // when returned: its buffer holds its call's result
  bool dist_error = false;  // raised a dist::Error
  std::string error;        // what it raised
  double seconds = 0;
};

// Runs fn, which leaves while `lingering` runs: a rank's stack being unwound slowly.
struct Linger {
  ~Linger() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }
};

// This rank's side of `c` in the current world (the dist:: context bound). Rank r's data are
// r + 1 everywhere, so every right result is known.
inline Outcome run(const Case& c) {
  const int rank = dist::get_rank();
  const int n = dist::get_world_size();
  const bool victim = rank == c.victim;
  const auto start = Clock::now();
  Outcome out;
  const float sum = static_cast<float>(n * (n + 1) / 2);  // of every rank's r + 1
  const auto holds = [&](const std::vector<float>& v, float value) {
    for (const float x : v) out.right = out.right && x == value;
  };
  try {
    switch (c.kind) {
      case Kind::count:
      case Kind::kind: {
        std::vector<float> v(victim && c.kind == Kind::count ? c.other : c.count,
                             static_cast<float>(rank + 1));
        if (victim && c.kind == Kind::kind) {
          dist::barrier();
          out.right = false;  // a barrier that passed all_reduces
        } else {
          dist::all_reduce(v);
          holds(v, sum);
        }
        break;
      }
      case Kind::dtype: {
        if (victim) {
          std::vector<std::int32_t> v(c.count, rank + 1);
          dist::all_reduce(v);
          out.right = false;
        } else {
          std::vector<float> v(c.count, static_cast<float>(rank + 1));
          dist::all_reduce(v);
          holds(v, sum);
        }
        break;
      }
      case Kind::root: {
        const int root = victim ? (c.victim + 1) % n : c.victim;  // the victim names its successor
        std::vector<float> v(c.count, static_cast<float>(rank + 1));
        dist::broadcast(v, root);
        holds(v, static_cast<float>(root + 1));
        break;
      }
      case Kind::splits: {
        // Every rank sends every rank 2 elements; the victim sends its successor `other`.
        const int peer = (c.victim + 1) % n;
        std::vector<std::int64_t> in_splits(static_cast<std::size_t>(n), 2);
        const std::vector<std::int64_t> out_splits(static_cast<std::size_t>(n), 2);
        if (victim) in_splits[static_cast<std::size_t>(peer)] = static_cast<std::int64_t>(c.other);
        std::int64_t sent = 0;
        for (const auto s : in_splits) sent += s;
        std::vector<float> input(static_cast<std::size_t>(sent), static_cast<float>(rank + 1));
        std::vector<float> output(static_cast<std::size_t>(2 * n), -1.0F);
        dist::all_to_all(std::span<float>(output), std::span<const float>(input), out_splits,
                         in_splits);
        for (std::size_t i = 0; i < output.size(); ++i)
          out.right = out.right && output[i] == static_cast<float>(i / 2 + 1);
        break;
      }
      case Kind::throw_in_flight: {
        if (victim) {
          const Linger linger;  // unwound last: the peers post while this rank is still leaving
          std::vector<float> v(c.count, static_cast<float>(rank + 1));
          const dist::Work work = dist::all_reduce_async(std::span<float>(v));
          throw std::runtime_error("the victim's own failure");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::vector<float> v(c.count, static_cast<float>(rank + 1));
        dist::all_reduce(v);
        holds(v, sum);
        break;
      }
    }
    out.returned = true;
  } catch (const dist::Error& e) {
    out.dist_error = true;
    out.error = std::string(dist::to_string(e.code())) + ": " + e.what();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

// An outcome as text and back, for ranks in separate processes to compare theirs.
inline std::string encode(const Outcome& o) {
  return std::to_string(o.returned) + std::to_string(o.right) + std::to_string(o.dist_error) + " " +
         std::to_string(o.seconds) + " " + o.error;
}
inline Outcome decode(const std::string& text) {
  Outcome o;
  o.returned = text.at(0) == '1';
  o.right = text.at(1) == '1';
  o.dist_error = text.at(2) == '1';
  const std::size_t space = text.find(' ', 4);
  o.seconds = std::stod(text.substr(4, space - 4));
  o.error = space == std::string::npos ? "" : text.substr(space + 1);
  return o;
}

// The property's verdict on every rank's outcome ("" when it holds).
inline std::string verdict(const Case& c, const std::vector<Outcome>& outcomes,
                           std::chrono::milliseconds timeout) {
  const double bound = std::chrono::duration<double>(timeout).count() + 5;
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    const Outcome& o = outcomes[r];
    const std::string who = c.text() + ": rank " + std::to_string(r);
    if (o.seconds > bound)
      return who + " took " + std::to_string(o.seconds) + " s, past the timeout plus 5 s";
    if (o.returned && !o.right) return who + " returned a wrong result as if it had succeeded";
    const bool is_victim = static_cast<int>(r) == c.victim;
    if (is_victim && o.returned) return who + " (the victim) returned";
    if (!o.returned && !o.dist_error && !(is_victim && c.kind == Kind::throw_in_flight))
      return who + " raised something other than a dist::Error: " + o.error;
  }
  return {};
}

// The property: `cases` cases drawn from `seed` (named on a failure) on worlds of `smallest` to
// `largest` ranks; `run_world(n, case, rng)` runs one on n ranks and returns every rank's outcome
// (it may draw from `rng` too, and report a failure of its own, which ends the property).
template <class RunWorld>
void check(std::uint64_t seed, int cases, int smallest, int largest,
           std::chrono::milliseconds timeout, RunWorld run_world) {
  SCOPED_TRACE("DIST_MISUSE_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < cases; ++i) {
    const auto span = static_cast<std::uint64_t>(largest - smallest + 1);
    const int n = smallest + static_cast<int>(rng() % span);
    const Case c = draw(rng, n);
    const std::vector<Outcome> outcomes = run_world(n, c, rng);
    if (::testing::Test::HasFailure()) return;
    ASSERT_EQ(verdict(c, outcomes, timeout), "") << "case " << i << " on " << n << " ranks";
  }
}

}  // namespace test_support::misuse
