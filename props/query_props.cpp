// The query/control functions on every cluster shape: rank, world size, local rank/size/group,
// get_dist_info, is_main_process, is_distributed, get_backend, master_only (exactly once, on rank
// 0), barrier (no rank leaves before all arrive), membership answers for random subgroups, and
// device meshes of random shapes.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dist/dist.hpp"
#include "props/backends.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"

namespace props {
namespace {

// One rank's answers. Each rank counts the master_only bodies it ran itself, and stamps the
// monotonic clock (one clock for every process on the machine) around its barrier.
struct Answers {
  int rank = -2, world_size = -2, local_rank = -2, local_size = -2;
  std::optional<dist::Backend> backend;
  std::optional<std::vector<int>> local_ranks;
  int rank_in_local = -2;
  std::pair<int, int> dist_info{-2, -2};
  bool main = false, distributed = false;
  std::optional<int> master_result;
  int master_calls = -1;  // master_only bodies run on this rank: +1 and +100
  std::int64_t barrier_entered = 0, barrier_left = 0;  // clock stamps (ns)
  template <class Archive>
  void serialize(Archive& ar) {
    ar(rank, world_size, local_rank, local_size, backend, local_ranks, rank_in_local, dist_info,
       main, distributed, master_result, master_calls, barrier_entered, barrier_left);
  }
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Answers ask() {
  Answers a;
  a.rank = dist::get_rank();
  a.world_size = dist::get_world_size();
  a.local_rank = dist::get_local_rank();
  a.local_size = dist::get_local_size();
  a.backend = dist::get_backend();
  if (const auto local = dist::get_local_group()) {
    a.local_ranks = local->ranks();
    a.rank_in_local = dist::get_rank(*local);
  }
  a.dist_info = dist::get_dist_info();
  a.main = dist::is_main_process();
  a.distributed = dist::is_distributed();
  int calls = 0;
  a.master_result = dist::master_only([&](int x) {
    ++calls;
    return x + 1;
  })(a.rank * 10);
  dist::master_only([&] { calls += 100; })();
  a.master_calls = calls;
  a.barrier_entered = now_ns();
  dist::barrier();
  a.barrier_left = now_ns();
  return a;
}

// No rank left the barrier before every rank had entered it (so before rank 0's master_only
// bodies had run).
void require_barrier_held(const std::vector<Answers>& got) {
  std::int64_t last_in = 0;
  for (const Answers& a : got) last_in = std::max(last_in, a.barrier_entered);
  for (const Answers& a : got)
    if (a.barrier_left < last_in)
      RC_FAIL("rank " + std::to_string(a.rank) + " left the barrier " +
              std::to_string(last_in - a.barrier_left) + " ns before the last rank entered it");
}

template <BackendUnderTest B>
void queries_match_shape() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  const int per = shape.ranks_per_node;
  RC_TAG(std::to_string(shape.nodes) + "x" + std::to_string(per));
  const auto got = run_on<B>(shape, [] { return ask(); });
  RC_ASSERT(static_cast<int>(got.size()) == n);
  for (int r = 0; r < n; ++r) {
    const Answers& a = got[static_cast<std::size_t>(r)];
    std::vector<int> node(static_cast<std::size_t>(per));
    for (int i = 0; i < per; ++i) node[static_cast<std::size_t>(i)] = r / per * per + i;
    RC_ASSERT(a.rank == r);
    RC_ASSERT(a.world_size == n);
    RC_ASSERT(a.backend == std::optional(B::capabilities.backend));
    RC_ASSERT(a.local_rank == r % per);
    RC_ASSERT(a.local_size == per);
    RC_ASSERT(a.local_ranks == std::optional(node));
    RC_ASSERT(a.rank_in_local == r % per);
    RC_ASSERT(a.dist_info == std::pair(r, n));
    RC_ASSERT(a.main == (r == 0));
    RC_ASSERT(a.distributed);
    RC_ASSERT(a.master_result == (r == 0 ? std::optional<int>(1) : std::nullopt));
    RC_ASSERT(a.master_calls == (r == 0 ? 101 : 0));  // each body ran exactly once, on rank 0
  }
  require_barrier_held(got);
}

// Membership of random subgroups (several, created in one order by every rank).
template <BackendUnderTest B>
void group_membership() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  const auto groups = *rc::gen::container<std::vector<std::vector<int>>>(
      *gen::uniform<std::size_t>(1, 4), gen::subgroup(n));
  using Row = std::vector<int>;  // per group: member?, rank in it, size (members) , ranks()
  const auto got = run_on<B>(shape, [&] {
    std::vector<Row> rows;
    for (const auto& members : groups) {
      const dist::Group g = dist::new_group(members);
      Row row{g.is_member() ? 1 : 0, dist::get_rank(g)};
      if (g.is_member()) row.push_back(dist::get_world_size(g));
      for (int m : g.ranks()) row.push_back(m);
      rows.push_back(row);
    }
    return rows;
  });
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const auto& members = groups[i];
      const auto it = std::find(members.begin(), members.end(), r);
      Row want{it != members.end() ? 1 : 0,
               it != members.end() ? static_cast<int>(it - members.begin()) : -1};
      if (it != members.end()) want.push_back(static_cast<int>(members.size()));
      want.insert(want.end(), members.begin(), members.end());
      RC_ASSERT(got[static_cast<std::size_t>(r)][i] == want);
    }
  }
}

// A random divisor of n (shrinks towards 1).
rc::Gen<int> divisor_of(int n) {
  std::vector<int> divisors;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) divisors.push_back(d);
  return rc::gen::elementOf(divisors);
}

// A device mesh of a random shape (1 to 3 dimensions, some of size 1) over the world: each rank's
// coordinate and, per dimension, its rank in the group and the group's members are those of the
// row-major layout.
template <BackendUnderTest B>
void device_mesh_layout() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  std::vector<int> mesh{*divisor_of(n)};
  if (*rc::gen::arbitrary<bool>()) mesh.push_back(*divisor_of(n / mesh[0]));
  const int rest = n / std::accumulate(mesh.begin(), mesh.end(), 1, std::multiplies<>());
  if (rest > 1 || *rc::gen::arbitrary<bool>()) mesh.push_back(rest);
  RC_LOG() << "mesh of " << mesh.size() << " dimension(s) over " << n << " ranks\n";
  using Row = std::vector<int>;  // coordinate, then per dimension: rank in group, members
  const auto got = run_on<B>(shape, [&] {
    const auto m = dist::init_device_mesh(mesh);
    Row row = m.coordinate();
    for (std::size_t d = 0; d < mesh.size(); ++d) {
      const auto g = m.get_group(static_cast<int>(d));
      row.push_back(dist::get_rank(g));
      for (int r : g.ranks()) row.push_back(r);
    }
    return row;
  });
  for (int r = 0; r < n; ++r) {
    Row coordinate, want;
    int stride = n;
    for (int size : mesh) {
      stride /= size;
      coordinate.push_back(r / stride % size);
    }
    want = coordinate;
    stride = n;
    for (std::size_t d = 0; d < mesh.size(); ++d) {
      stride /= mesh[d];
      want.push_back(coordinate[d]);
      const int base = r - coordinate[d] * stride;
      for (int i = 0; i < mesh[d]; ++i) want.push_back(base + i * stride);
    }
    RC_ASSERT(got[static_cast<std::size_t>(r)] == want);
  }
}

template <class B>
class Queries : public BackendSuite<B> {};
TYPED_TEST_SUITE(Queries, AllBackends, BackendNames);

TYPED_TEST(Queries, MatchTheClusterShape) {
  check(150, [] { queries_match_shape<TypeParam>(); });
}
TYPED_TEST(Queries, SubgroupMembership) {
  check(100, [] { group_membership<TypeParam>(); });
}
TYPED_TEST(Queries, DeviceMeshLayout) {
  check(60, [] { device_mesh_layout<TypeParam>(); });
}

}  // namespace
}  // namespace props
