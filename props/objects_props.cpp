// The object helpers against values computed independently here: broadcast_object_list,
// all_gather_object and gather_object (world and random subgroups), all_reduce_dict (vector and
// scalar maps, against the reference), collect_results on both devices (MMEngine's round-robin
// order, cut to size; the directories it created are removed), sync_random_seed agreement.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dist/dist.hpp"
#include "props/backends.hpp"
#include "props/generators.hpp"
#include "props/property.hpp"
#include "props/scratch.hpp"

namespace props {
namespace {

// A user type with serialize(), of very different sizes from rank to rank.
struct Record {
  std::string name;
  std::vector<std::int64_t> values;
  std::map<std::string, int> tags;
  std::optional<double> score;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, values, tags, score);
  }
  friend bool operator==(const Record&, const Record&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Record& r) {
    os << "Record{" << r.name << ", " << r.values.size() << " values, " << r.tags.size()
       << " tags, ";
    return r.score ? os << *r.score << "}" : os << "no score}";
  }
};

rc::Gen<Record> record() {
  return rc::gen::apply(
      [](std::string name, std::vector<std::int64_t> values, std::map<std::string, int> tags,
         int score) {
        return Record{std::move(name), std::move(values), std::move(tags),
                      score % 3 == 0 ? std::nullopt : std::optional(score / 8.0)};
      },
      rc::gen::string<std::string>(), rc::gen::arbitrary<std::vector<std::int64_t>>(),
      rc::gen::container<std::map<std::string, int>>(rc::gen::string<std::string>(),
                                                     rc::gen::arbitrary<int>()),
      gen::uniform(-1000, 1000));
}

// World or a random subgroup: the members (global ranks, group order); empty means the world.
std::vector<int> draw_members(int world) {
  if (!*rc::gen::arbitrary<bool>()) return {};
  return *gen::subgroup(world);
}
dist::Group make_group(const std::vector<int>& members) {
  return members.empty() ? dist::Group{} : dist::new_group(members);
}
int group_size(const std::vector<int>& members, int world) {
  return members.empty() ? world : static_cast<int>(members.size());
}
int global_rank(const std::vector<int>& members, int gr) {
  return members.empty() ? gr : members[static_cast<std::size_t>(gr)];
}

template <BackendUnderTest B>
void object_collectives() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  const auto members = draw_members(n);
  const int k = group_size(members, n);
  const int root = *gen::root(k);
  const auto objs = *rc::gen::container<std::vector<Record>>(static_cast<std::size_t>(n), record());
  const std::size_t len = *gen::uniform<std::size_t>(0, 5);
  const auto lists = *rc::gen::container<std::vector<std::vector<Record>>>(
      static_cast<std::size_t>(n), rc::gen::container<std::vector<Record>>(len, record()));
  RC_CLASSIFY(!members.empty(), "subgroup");
  using Out =
      std::tuple<std::vector<Record>, std::vector<Record>, std::optional<std::vector<Record>>>;
  const auto got = run_on<B>(shape, [&] {
    const auto me = static_cast<std::size_t>(dist::get_rank());
    const dist::Group g = make_group(members);
    if (!g.is_member()) return Out{};
    auto list = lists[me];
    dist::broadcast_object_list(list, root, g);
    return Out{list, dist::all_gather_object(objs[me], g), dist::gather_object(objs[me], root, g)};
  });
  std::vector<Record> in_order;
  for (int gr = 0; gr < k; ++gr)
    in_order.push_back(objs[static_cast<std::size_t>(global_rank(members, gr))]);
  const auto& src_list = lists[static_cast<std::size_t>(global_rank(members, root))];
  for (int gr = 0; gr < k; ++gr) {
    const auto& [list, all, gathered] = got[static_cast<std::size_t>(global_rank(members, gr))];
    RC_ASSERT(list == src_list);
    RC_ASSERT(all == in_order);
    RC_ASSERT(gathered == (gr == root ? std::optional(in_order) : std::nullopt));
  }
}

template <BackendUnderTest B>
void all_reduce_dict_matches_reference() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  const auto dtype = *rc::gen::arbitrary<dist::DType>();
  const auto op = *gen::op_for(dtype);
  const Values mode = *gen::values_for(B::capabilities);
  const auto keys =
      *rc::gen::container<std::set<std::string>>(rc::gen::nonEmpty(rc::gen::string<std::string>()));
  const bool scalars = *rc::gen::arbitrary<bool>();
  RC_TAG(std::string(dist::to_string(dtype)));
  with_dtype(dtype, [&]<class T>(std::type_identity<T>) {
    using Dict = std::map<std::string, std::vector<T>>;
    Dict sizes_of;
    std::vector<Dict> dicts(static_cast<std::size_t>(n));
    for (const auto& key : keys) {
      const std::size_t count = scalars ? 1 : *gen::uniform<std::size_t>(0, 6);
      const auto in = *gen::inputs<T>(n, count, mode, op);
      for (int r = 0; r < n; ++r)
        dicts[static_cast<std::size_t>(r)][key] = in.ranks[static_cast<std::size_t>(r)];
    }
    const auto got = run_on<B>(shape, [&] {
      Dict d = dicts[static_cast<std::size_t>(dist::get_rank())];
      if (!scalars) {
        dist::all_reduce_dict(d, op);
        return d;
      }
      std::map<std::string, T> s;
      for (const auto& [key, v] : d) s[key] = v.at(0);
      dist::all_reduce_dict(s, op);
      for (auto& [key, v] : d) v = {s.at(key)};
      return d;
    });
    for (const auto& key : keys) {
      PerRank<T> in;
      for (const auto& d : dicts) in.push_back(d.at(key));
      const auto want = from_ref<T>(ref::all_reduce(to_ref(in), to_ref(op)));
      PerRank<T> out;
      for (const auto& d : got) out.push_back(d.at(key));
      require_same(out, want, "all_reduce_dict value of key '" + key + "'");
    }
  });
}

// MMEngine's collect_results order, computed here: round-robin over ranks, skipping exhausted
// ranks, cut to `size`.
std::vector<std::string> round_robin(const std::vector<std::vector<std::string>>& parts,
                                     std::size_t size) {
  std::vector<std::string> out;
  for (std::size_t j = 0; out.size() < size; ++j) {
    bool any = false;
    for (const auto& p : parts) {
      if (j >= p.size()) continue;
      any = true;
      if (out.size() < size) out.push_back(p[j]);
    }
    if (!any) break;
  }
  return out;
}

template <BackendUnderTest B>
void collect_results_round_robin() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const int n = shape.size();
  const auto parts = *rc::gen::container<std::vector<std::vector<std::string>>>(
      static_cast<std::size_t>(n),
      rc::gen::container<std::vector<std::string>>(rc::gen::string<std::string>()));
  std::size_t total = 0;
  for (const auto& p : parts) total += p.size();
  const long size = *rc::gen::oneOf(rc::gen::just(static_cast<long>(total)),
                                    gen::uniform<long>(0, static_cast<long>(total) + 4));
  const auto where = *rc::gen::element<std::string>("gpu", "cpu", "cpu, default tmpdir");
  // A fresh directory every rank names alike. "cpu" passes a tmpdir two levels inside it, so
  // rank 0 creates both and must remove both. The default tmpdir is ./.dist_test on rank 0, so
  // then every process works in the directory (removed at the end if the run left it empty).
  const auto scratch = scratch_path("collect");
  const auto tmpdir = scratch / "parts";
  const bool default_tmpdir = where == "cpu, default tmpdir";
  RC_TAG(where);
  RC_CLASSIFY(static_cast<std::size_t>(size) < total, "cut");
  std::optional<InScratchDirectory> in_scratch;
  if (default_tmpdir) in_scratch.emplace(scratch);
  const auto got = run_on<B>(shape, [&] {
    const auto& part = parts[static_cast<std::size_t>(dist::get_rank())];
    if (where == "gpu") return dist::collect_results(part, size, "gpu");
    if (where == "cpu") return dist::collect_results(part, size, "cpu", tmpdir.string());
    return dist::collect_results(part, size);
  });
  RC_ASSERT(got[0] == std::optional(round_robin(parts, static_cast<std::size_t>(size))));
  for (int r = 1; r < n; ++r) RC_ASSERT(!got[static_cast<std::size_t>(r)].has_value());
  // Every process sees the same files here (the run is over on all of them and nothing a run
  // leaves is removed), so all reach the same verdict. It created what it used, so removed it.
  RC_ASSERT(!std::filesystem::exists(default_tmpdir ? scratch / ".dist_test" : scratch));
}

template <BackendUnderTest B>
void seeds_agree() {
  const auto shape = *rc::gen::arbitrary<WorldShape>();
  const auto members = draw_members(shape.size());
  const auto got = run_on<B>(shape, [&] {
    const dist::Group g = make_group(members);
    return g.is_member() ? dist::sync_random_seed(g) : -1;
  });
  const int first = got[static_cast<std::size_t>(global_rank(members, 0))];
  RC_ASSERT(first >= 0);
  for (int gr = 0; gr < group_size(members, shape.size()); ++gr)
    RC_ASSERT(got[static_cast<std::size_t>(global_rank(members, gr))] == first);
}

template <class B>
class Objects : public BackendSuite<B> {};
TYPED_TEST_SUITE(Objects, AllBackends, BackendNames);

TYPED_TEST(Objects, BroadcastAllGatherGatherObject) {
  check(150, [] { object_collectives<TypeParam>(); });
}
TYPED_TEST(Objects, AllReduceDictMatchesReference) {
  check(150, [] { all_reduce_dict_matches_reference<TypeParam>(); });
}
TYPED_TEST(Objects, CollectResultsRoundRobinBothDevices) {
  check(150, [] { collect_results_round_robin<TypeParam>(); });
}
TYPED_TEST(Objects, SyncRandomSeedAgrees) {
  check(100, [] { seeds_agree<TypeParam>(); });
}

}  // namespace
}  // namespace props
