// Program properties: random programs of collectives on the world and on subgroups give the
// reference's outputs on every rank; the same programs with one rank's call changed or missing
// end, within a deadline, with DesyncError/DeadlockError on the ranks that depend on it, while
// no rank returns wrong data and every unaffected rank finishes with the right data.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "props/backends.hpp"
#include "props/program.hpp"
#include "props/property.hpp"

namespace props {
namespace {

using Clock = std::chrono::steady_clock;

// What a rank's recorded outputs must look like: every step before `completed_before` done
// and equal to the reference; later steps absent (`strict`), or else free to be absent but, when
// present, equal to the reference except on group `exempt_group` (a missing call shifts the
// matching on that group's communicator).
struct RowRule {
  std::size_t completed_before = 0;
  bool strict = true;
  std::optional<int> exempt_group;
};

void check_row(const Program& p, int r, const Log& got, const Log& want, const RowRule& rule) {
  const auto& row = got[static_cast<std::size_t>(r)];
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const auto& expected = want[static_cast<std::size_t>(r)][s];
    const auto& actual = row[s];
    const std::string where = "rank " + std::to_string(r) + ", step " + std::to_string(s);
    if (!expected) {
      if (actual) RC_FAIL(where + ": recorded an output but is not a member");
      continue;
    }
    if (s < rule.completed_before) {
      if (!actual) RC_FAIL(where + ": the step did not complete but should have");
    } else if (rule.strict) {
      if (actual) RC_FAIL(where + ": the step completed but should have failed");
      continue;
    } else if (!actual || rule.exempt_group == p.steps[s].group) {
      continue;
    }
    if (const auto m = differences(*actual, *expected)) RC_FAIL(where + ": wrong data: " + *m);
  }
}

template <BackendUnderTest B>
void programs_match_reference() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  const auto program = *gen::program(n, *gen::values_for(B::capabilities));
  RC_CLASSIFY(!program.groups.empty(), "subgroups");
  RC_CLASSIFY(program.steps.size() >= 8, "8+ steps");
  // Each rank returns its own row of outputs, so the ranks may be processes.
  const Log got = run_on<B>(shape, [&] {
    std::vector<std::optional<AnyValues>> row(program.steps.size());
    run_program(program, std::nullopt, n, row);
    return row;
  });
  const Log want = reference_log(program, n);
  for (int r = 0; r < n; ++r) check_row(program, r, got, want, {program.steps.size(), true, {}});
}

bool allowed_failure(const RunFailure& f, int r) {
  const RankOutcome& o = f.at(r);
  if (o.ok || !o.code) return false;
  switch (*o.code) {
    case dist::ErrorCode::desync:
    case dist::ErrorCode::deadlock:
      return true;
    case dist::ErrorCode::rank_failure:  // a consequence: the peer it waited for failed first
      return o.failed_rank >= 0 && o.failed_rank != r && !f.at(o.failed_rank).ok;
    default:
      return false;
  }
}

void check_rank(const Program& p, const Mutation& m, int r, const Expectation& e,
                const RunFailure& f, const Log& got, const Log& want) {
  using K = Expectation::Kind;
  const RankOutcome& o = f.at(r);
  const std::string who = "rank " + std::to_string(r) + " (" + o.message + ")";
  switch (e.kind) {
    case K::ok:
      if (!o.ok) RC_FAIL(who + " is not affected by the change but failed");
      check_row(p, r, got, want, {p.steps.size(), true, {}});
      return;
    case K::fails_at:
      if (!allowed_failure(f, r)) RC_FAIL(who + " must fail with DesyncError or DeadlockError");
      if (e.desync && o.code != dist::ErrorCode::desync)
        RC_FAIL(who + " must fail with DesyncError");
      check_row(p, r, got, want, {e.step, true, {}});
      return;
    case K::must_fail:
    case K::either:
      if (e.kind == K::must_fail && o.ok) RC_FAIL(who + " must fail: it has a call nobody matches");
      if (!o.ok && !allowed_failure(f, r)) RC_FAIL(who + " failed with an unexpected error");
      check_row(p, r, got, want, {e.step, false, p.steps[m.step].group});
      return;
  }
}

template <BackendUnderTest B>
void mutated_programs_fail() {
  const auto shape = *gen::world_shape(2, 8);
  const int n = shape.size();
  const auto program =
      *gen::program(n, *gen::values_for(B::capabilities), *rc::gen::arbitrary<bool>());
  RC_PRE(!mutable_steps(program, n).empty());
  const auto mutation = *gen::mutation(program, n);
  RC_TAG(std::string(to_string(mutation.change)));
  // A failed run returns no rows, so the ranks record into one log in this process: this
  // property runs only on backends that report mismatches, whose ranks are threads (sim).
  Log log(static_cast<std::size_t>(n), std::vector<std::optional<AnyValues>>(program.steps.size()));
  const auto deadline = B::capabilities.failure_deadline;
  const auto start = Clock::now();
  try {
    run_on<B>(
        shape,
        [&] {
          run_program(program, mutation, n, log[static_cast<std::size_t>(dist::get_rank())]);
          return 0;
        },
        deadline, rc::toString(program) + "\nwith " + rc::toString(mutation));
  } catch (const RunFailure& f) {
    RC_ASSERT(Clock::now() - start < deadline);
    const Log want = reference_log(program, n);
    const auto expect = expectations(program, mutation, n);
    RC_CLASSIFY(std::any_of(expect.begin(), expect.end(),
                            [](const Expectation& e) { return e.kind == Expectation::Kind::ok; }),
                "some rank unaffected");
    for (int r = 0; r < n; ++r)
      check_rank(program, mutation, r, expect[static_cast<std::size_t>(r)], f, log, want);
    return;
  }
  RC_FAIL("the run with one rank's call changed succeeded");
}

template <class B>
class Programs : public BackendSuite<B> {};
TYPED_TEST_SUITE(Programs, AllBackends, BackendNames);

TYPED_TEST(Programs, MatchReference) {
  check(300, [] { programs_match_reference<TypeParam>(); });
}
TYPED_TEST(Programs, OneRankChangedFailsWithDesyncOrDeadlock) {
  if (!TypeParam::capabilities.reports_mismatches)
    GTEST_SKIP() << TypeParam::name() << " does not report mismatched collectives as errors";
  PROPS_SKIP_BELOW_RANKS(TypeParam, 2);
  check(300, [] { mutated_programs_fail<TypeParam>(); });
}

}  // namespace
}  // namespace props
