// monitored_barrier against a model: on a random world or subgroup, every member first passes a
// monitored barrier together (a random number of times), then a random non-empty set of members
// stays away from the next one. Every member that comes must get a TimeoutError whose
// missing_ranks() are the world ranks of the absent members in group order: all of them with
// wait_all_ranks, else the first. The barriers everyone reaches must pass.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "props/backends.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

// A member's account: -1 when it stayed away, -2 when its barrier passed (it must not), -3 for an
// error other than a TimeoutError, else the missing ranks its TimeoutError named.
std::vector<int> attend(const dist::Group& g, int together, bool absent, bool wait_all,
                        std::chrono::milliseconds timeout) {
  for (int i = 0; i < together; ++i) dist::monitored_barrier(timeout * 100, wait_all, g);
  if (absent) return {-1};
  try {
    dist::monitored_barrier(timeout, wait_all, g);
    return {-2};
  } catch (const dist::TimeoutError& e) {
    return e.missing_ranks();
  } catch (const std::exception&) {
    return {-3};
  }
}

template <BackendUnderTest B>
void monitored_barrier_names_the_absent() {
  const auto shape = *gen::world_shape(2, 8);
  const bool on_subgroup = *rc::gen::arbitrary<bool>();
  const auto members = on_subgroup ? *gen::subgroup(shape.size(), 2) : std::vector<int>{};
  const int size = on_subgroup ? static_cast<int>(members.size()) : shape.size();
  // away[i]: group rank i stays away from the last barrier; at least one comes and one stays.
  auto away = *rc::gen::container<std::vector<bool>>(static_cast<std::size_t>(size),
                                                     rc::gen::arbitrary<bool>());
  const int first_away = *gen::uniform<int>(0, size);
  away[static_cast<std::size_t>(first_away)] = true;
  away[static_cast<std::size_t>((first_away + 1) % size)] = false;
  const bool wait_all = *rc::gen::arbitrary<bool>();
  const int together = *gen::uniform<int>(0, 3);
  const auto timeout =
      std::chrono::milliseconds(B::capabilities.backend == dist::Backend::sim ? 50 : 300);
  RC_CLASSIFY(on_subgroup, "subgroup");
  RC_CLASSIFY(wait_all, "wait_all_ranks");
  RC_CLASSIFY(together > 0, "barriers passed first");
  const auto got = run_on<B>(shape, [&] {
    const dist::Group g = on_subgroup ? dist::new_group(members) : dist::Group{};
    if (!g.is_member()) return std::vector<int>{};
    const int me = dist::get_rank(g);
    return attend(g, together, away[static_cast<std::size_t>(me)], wait_all, timeout);
  });
  const auto world_rank = [&](int r) {
    return on_subgroup ? members[static_cast<std::size_t>(r)] : r;
  };
  std::vector<int> expected;
  for (int r = 0; r < size; ++r)
    if (away[static_cast<std::size_t>(r)]) expected.push_back(world_rank(r));
  if (!wait_all) expected.resize(1);
  for (int r = 0; r < size; ++r) {
    const auto& account = got[static_cast<std::size_t>(world_rank(r))];
    RC_LOG() << "group rank " << r << (away[static_cast<std::size_t>(r)] ? " (away)" : "") << ": "
             << ::testing::PrintToString(account) << "\n";
    RC_ASSERT(account == (away[static_cast<std::size_t>(r)] ? std::vector<int>{-1} : expected));
  }
}

template <class B>
class MonitoredBarrier : public BackendSuite<B> {};
TYPED_TEST_SUITE(MonitoredBarrier, AllBackends, BackendNames);

TYPED_TEST(MonitoredBarrier, NamesTheRanksThatStayedAway) {
  PROPS_SKIP_BELOW_RANKS(TypeParam, 2);
  check(40, [] { monitored_barrier_names_the_absent<TypeParam>(); });
}

}  // namespace
}  // namespace props
