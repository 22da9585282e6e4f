// sim_scale's per-rank program and its checks: each expected value (sums of ranks, the mesh
// coordinate, the gathered records) is computed from the rank and world size alone.
#include "bench/sim_scale_program.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/dist.hpp"
#include "dist/mesh.hpp"

namespace dist::bench {
namespace {

// The record every rank sends to rank 0 with gather_object.
struct Sample {
  int rank = 0;
  float value = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(rank, value);
  }
};

float sample_value(int rank) { return static_cast<float>(rank) * 0.5f; }  // exact below 2^25

// The world all_reduce's input: small, so every partial sum (folded in rank order) is an integer
// below 2^24 and the float sum is exact.
float world_value(int rank) { return static_cast<float>(rank % 128); }

std::int64_t expected_world_sum(int n) {
  const std::int64_t full = n / 128, rest = n % 128;
  return full * (127 * 128 / 2) + rest * (rest - 1) / 2;
}

// The sum of the global ranks of the group along a dimension of `size` ranks whose neighbours are
// `stride` apart (row-major): the rank's own coordinate c along it is (rank / stride) % size.
std::int64_t expected_group_sum(int rank, int stride, int size) {
  const std::int64_t c = (rank / stride) % size;
  const std::int64_t first = rank - c * stride;
  return size * first + static_cast<std::int64_t>(stride) * size * (size - 1) / 2;
}

// all_reduce (sum) of the rank's number on `group`; 1 when the sum is not `expected`.
std::int64_t sum_ranks_on(const Group& group, std::int64_t expected) {
  std::vector<std::int64_t> v{get_rank()};
  all_reduce(v, ReduceOp::sum, group);
  return v[0] == expected ? 0 : 1;
}

// The mesh's coordinate and one all_reduce per dimension, each checked.
std::int64_t mesh_checks(const MeshShape& s) {
  const int r = get_rank();
  const auto mesh =
      init_device_mesh({s.data, s.pipeline, s.tensor}, {"data", "pipeline", "tensor"});
  const std::vector<int> coordinate{r / (s.pipeline * s.tensor), (r / s.tensor) % s.pipeline,
                                    r % s.tensor};
  std::int64_t wrong = mesh.coordinate() == coordinate ? 0 : 1;
  const std::array<int, 3> strides{s.pipeline * s.tensor, s.tensor, 1};
  const std::array<int, 3> sizes{s.data, s.pipeline, s.tensor};
  const std::array<const char*, 3> names{"data", "pipeline", "tensor"};
  for (std::size_t k = 0; k < 3; ++k)
    wrong += sum_ranks_on(mesh.get_group(names[k]), expected_group_sum(r, strides[k], sizes[k]));
  return wrong;
}

// gather_object of a Sample to rank 0: rank 0 counts the wrong or missing records, the others
// count a value they should not have received.
std::int64_t gather_checks() {
  const int r = get_rank(), n = get_world_size();
  const auto all = gather_object(Sample{r, sample_value(r)}, 0);
  if (r != 0) return all.has_value() ? 1 : 0;
  if (!all) return n;
  std::int64_t wrong = std::abs(static_cast<std::int64_t>(all->size()) - n);
  const int common = std::min<int>(n, static_cast<int>(all->size()));
  for (int i = 0; i < common; ++i) {
    const Sample& s = (*all)[static_cast<std::size_t>(i)];
    if (s.rank != i || s.value != sample_value(i)) ++wrong;
  }
  return wrong;
}

}  // namespace

MeshShape mesh_shape(int ranks) {
  MeshShape s;
  s.pipeline = std::max(1, std::min(16, ranks / s.tensor));
  s.data = std::max(1, ranks / (s.pipeline * s.tensor));
  return s;
}

std::string check_world_size(int ranks) {
  if (ranks < 8 || ranks % 8 != 0) return "ranks must be a positive multiple of 8 (8 per node)";
  const MeshShape s = mesh_shape(ranks);
  if (static_cast<long long>(s.data) * s.pipeline * s.tensor != ranks)
    return "ranks must be a multiple of 128 from 128 up (mesh data x 16 x 8)";
  return {};
}

std::int64_t rank_program(const MeshShape& shape) {
  const int r = get_rank(), n = get_world_size();
  barrier();
  std::vector<float> world{world_value(r)};
  all_reduce(world);
  std::int64_t wrong = world[0] == static_cast<float>(expected_world_sum(n)) ? 0 : 1;
  const std::optional<Group> node = get_local_group();  // a query, not a call
  if (!node) throw std::runtime_error("sim_scale: get_local_group() gave no group");
  wrong += sum_ranks_on(*node, expected_group_sum(r, 1, 8));
  wrong += mesh_checks(shape);
  wrong += gather_checks();
  return wrong;
}

}  // namespace dist::bench
